/**
 * A language model for the end-to-end test of Rein's `vscode-lm` provider:
 * registers the chat provider "rein-test" (VS Code's
 * `lm.registerLanguageModelChatProvider`, 1.104+) with one model,
 * `rein-test/scripted`, that follows its script whatever it is asked: a
 * `write_file` call first, then, once the request carries the tool's result,
 * a closing text. Every request (its tool names, tool mode and the text of
 * its messages) is appended as a JSON line to $REIN_E2E_LM_LOG, so the test
 * checks what Rein sent. Test-only; never shipped.
 */

import * as fs from 'node:fs';
import * as vscode from 'vscode';

/** The 1.104 provider API, typed here (the project's @types/vscode is older). */
interface ChatInformation {
  id: string;
  name: string;
  family: string;
  version: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  capabilities: { toolCalling?: boolean };
}

interface ProviderApi {
  registerLanguageModelChatProvider(
    vendor: string,
    provider: {
      provideLanguageModelChatInformation(options: unknown, token: vscode.CancellationToken): ChatInformation[];
      provideLanguageModelChatResponse(
        model: ChatInformation,
        messages: readonly { role: number; content: readonly unknown[] }[],
        options: { tools?: readonly { name: string }[]; toolMode?: unknown },
        progress: vscode.Progress<unknown>,
        token: vscode.CancellationToken,
      ): Promise<void>;
      provideTokenCount(model: ChatInformation, text: unknown, token: vscode.CancellationToken): Promise<number>;
    },
  ): vscode.Disposable;
}

const MODEL: ChatInformation = {
  id: 'rein-test-scripted',
  name: 'Scripted',
  family: 'scripted',
  version: '1',
  maxInputTokens: 128_000,
  maxOutputTokens: 4_096,
  capabilities: { toolCalling: true },
};

export const NOTE = 'lm_note.txt';
export const NOTE_TEXT = 'written by the scripted VS Code language model\n';

function partText(part: unknown): string {
  if (part instanceof vscode.LanguageModelTextPart) {
    return part.value;
  }
  if (part instanceof vscode.LanguageModelToolResultPart) {
    return `[result ${part.callId}] ${part.content.map(partText).join('')}`;
  }
  if (part instanceof vscode.LanguageModelToolCallPart) {
    return `[call ${part.name}]`;
  }
  return '';
}

export function activate(context: vscode.ExtensionContext): void {
  const api = vscode.lm as unknown as ProviderApi;
  const log = process.env.REIN_E2E_LM_LOG;
  context.subscriptions.push(
    api.registerLanguageModelChatProvider('rein-test', {
      provideLanguageModelChatInformation: () => [MODEL],
      provideLanguageModelChatResponse: (_model, messages, options, progress) => {
        const texts = messages.map((m) => m.content.map(partText).join(''));
        if (log) {
          const entry = { tools: (options.tools ?? []).map((t) => t.name), toolMode: options.toolMode, messages: texts };
          fs.appendFileSync(log, `${JSON.stringify(entry)}\n`);
        }
        const answered = messages.some((m) => m.content.some((p) => p instanceof vscode.LanguageModelToolResultPart));
        if (answered) {
          progress.report(new vscode.LanguageModelTextPart(`Wrote ${NOTE}.`));
        } else {
          progress.report(new vscode.LanguageModelTextPart('Writing the note.'));
          progress.report(new vscode.LanguageModelToolCallPart('lm-call-1', 'write_file', { path: NOTE, content: NOTE_TEXT }));
        }
        return Promise.resolve();
      },
      provideTokenCount: (_model, text) => Promise.resolve(Math.ceil((typeof text === 'string' ? text.length : 64) / 4)),
    }),
  );
}
