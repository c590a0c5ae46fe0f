/**
 * VS Code's language models for Rein (provider `vscode-lm`): answers
 * `rein/lm/chat` and `rein/lm/models`, and keeps the person's consent.
 * Until a person allowed Rein to use the editor's models, `rein/lm/chat` is
 * answered with error -32001 ("consent required") and the person is asked;
 * once allowed (kept in globalState) the server is told with
 * `rein/lm/consent`, which also lets auto-repair use these models.
 */

import * as vscode from 'vscode';
import { ResponseError } from 'vscode-jsonrpc';
import type { ReinConnection } from '../connection';
import { NoModelError, runChat, type LmApi, type LmChatParams, type LmChatResult, type LmModel } from './chat';

export const CONSENT_REQUIRED = -32001;
export const CONSENT_KEY = 'rein.lm.consent';
export const ALLOW_MODELS = vscode.l10n.t('Allow');

/** The person's consent to send their prompts to VS Code's language models. */
export class LmConsent {
  private asking: Thenable<boolean> | undefined;

  constructor(
    private readonly state: vscode.Memento,
    private readonly connection: ReinConnection,
  ) {}

  get granted(): boolean {
    return this.state.get<boolean>(CONSENT_KEY) === true;
  }

  /** Ask once at a time; on Allow, keep it and tell the server. */
  ask(): Thenable<boolean> {
    this.asking ??= vscode.window
      .showInformationMessage(
        vscode.l10n.t("Rein: allow Rein to send your prompts to VS Code's language models (rein.model.provider is vscode-lm)? Then send the prompt again."),
        ALLOW_MODELS,
        vscode.l10n.t('Not now'),
      )
      .then(async (choice) => {
        this.asking = undefined;
        if (choice !== ALLOW_MODELS) {
          return false;
        }
        await this.state.update(CONSENT_KEY, true);
        this.announce();
        return true;
      });
    return this.asking;
  }

  /** Tell the server (after each start) that the models may be used. */
  announce(): void {
    if (this.granted) {
      this.connection.sendNotification('rein/lm/consent', { granted: true });
    }
  }
}

function isNoPermissions(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'NoPermissions';
}

/** The `rein/lm/chat` handler. */
export async function answerChat(
  api: LmApi | undefined,
  consent: LmConsent,
  connection: ReinConnection,
  params: LmChatParams,
  token: vscode.CancellationToken,
): Promise<LmChatResult> {
  if (!api) {
    return { stopReason: 'error', error: 'this VS Code has no language model API with tool calling (VS Code 1.95 or later is needed)' };
  }
  if (!consent.granted) {
    void consent.ask();
    throw new ResponseError(CONSENT_REQUIRED, "consent required: allow Rein to use VS Code's language models");
  }
  try {
    return await runChat(api, params, (delta) => connection.sendNotification('rein/lm/delta', delta), token);
  } catch (error) {
    if (isNoPermissions(error)) {
      throw new ResponseError(CONSENT_REQUIRED, `consent required: ${(error as Error).message}`);
    }
    if (error instanceof NoModelError) {
      return { stopReason: 'error', error: error.message };
    }
    return { stopReason: 'error', error: error instanceof Error ? error.message : String(error) };
  }
}

/** The `rein/lm/models` answer. */
export async function listModels(api: LmApi | undefined): Promise<{ models: Pick<LmModel, 'id' | 'vendor' | 'family' | 'name'>[] }> {
  if (!api) {
    return { models: [] };
  }
  const models = await api.selectChatModels();
  return { models: models.map(({ id, vendor, family, name }) => ({ id, vendor, family, name })) };
}

interface LmNamespace {
  lm?: { selectChatModels(selector?: object): Thenable<LmModel[]> };
  LanguageModelChatMessage?: { User(parts: unknown[]): unknown; Assistant(parts: unknown[]): unknown };
  LanguageModelTextPart?: new (value: string) => { value: string };
  LanguageModelToolCallPart?: new (callId: string, name: string, input: object) => { callId: string; name: string; input: object };
  LanguageModelToolResultPart?: new (callId: string, content: unknown[]) => unknown;
  LanguageModelChatToolMode?: { Auto: unknown; Required: unknown };
}

/** The real LM API, or undefined in a VS Code without tool calling in it. */
export function vscodeLmApi(ns: LmNamespace = vscode as unknown as LmNamespace): LmApi | undefined {
  const { lm, LanguageModelChatMessage: Message, LanguageModelTextPart: Text, LanguageModelToolCallPart: Call } = ns;
  const { LanguageModelToolResultPart: Result, LanguageModelChatToolMode: Mode } = ns;
  if (!lm || !Message || !Text || !Call || !Result || !Mode) {
    return undefined;
  }
  return {
    selectChatModels: (selector) => lm.selectChatModels(selector),
    userMessage: (parts) => Message.User(parts),
    assistantMessage: (parts) => Message.Assistant(parts),
    textPart: (text) => new Text(text),
    toolCallPart: (id, name, input) => new Call(id, name, input),
    toolResultPart: (id, text) => new Result(id, [new Text(text)]),
    toolMode: (mode) => (mode === 'required' ? Mode.Required : Mode.Auto),
    readPart: (part) => {
      if (part instanceof Text) {
        return { text: part.value };
      }
      if (part instanceof Call) {
        return { id: part.callId, name: part.name, input: part.input };
      }
      return undefined;
    },
  };
}

export function registerLanguageModels(context: vscode.ExtensionContext, connection: ReinConnection, api = vscodeLmApi()): LmConsent {
  const consent = new LmConsent(context.globalState, connection);
  context.subscriptions.push(
    connection.onRequest<LmChatParams, Promise<LmChatResult>>('rein/lm/chat', (params, token) =>
      answerChat(api, consent, connection, params, token),
    ),
    connection.onRequest('rein/lm/models', () => listModels(api)),
    connection.onDidChangeState((info) => {
      if (info.state === 'running') {
        consent.announce();
      }
    }),
  );
  return consent;
}
