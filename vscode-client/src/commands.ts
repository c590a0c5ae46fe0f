/**
 * The client's commands. Their ids differ from the server's (`rein.fix`,
 * `rein.explain`, `rein.ask`, `rein.abort` are registered by
 * vscode-languageclient from the server's executeCommandProvider).
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { promptForApiKey, type ApiKeyStore } from './apiKey';
import type { ReinClient } from './client';
import { toLspDiagnostic } from './bridge/diagnostics';
import type { Chat, ChatViewProvider } from './panel/chatView';
import type { ChatController } from './panel/controller';
import type { PromptContext } from './shared/protocol';

export const Commands = {
  openChat: 'rein.openChat',
  newSession: 'rein.newSession',
  askSelection: 'rein.askSelection',
  fixProblemsInFile: 'rein.fixProblemsInFile',
  abortRun: 'rein.abortRun',
  showOutput: 'rein.showOutput',
  setApiKey: 'rein.setApiKey',
  restartServer: 'rein.restartServer',
  openSettings: 'rein.openSettings',
} as const;

function relativePath(uri: vscode.Uri): string {
  return vscode.workspace.asRelativePath(uri, false) || path.basename(uri.fsPath);
}

/** The prompt context of an editor's selection (or undefined without one). */
export function selectionContext(editor: vscode.TextEditor | undefined): PromptContext | undefined {
  if (!editor) {
    return undefined;
  }
  const { document, selection } = editor;
  const context: PromptContext = { uri: document.uri.toString(), languageId: document.languageId };
  if (!selection.isEmpty) {
    context.range = {
      start: { line: selection.start.line, character: selection.start.character },
      end: { line: selection.end.line, character: selection.end.character },
    };
    context.selection = document.getText(selection);
  }
  return context;
}

async function ask(controller: ChatController, view: ChatViewProvider): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const context = selectionContext(editor);
  const where = editor
    ? context?.selection
      ? `the selection in ${relativePath(editor.document.uri)}`
      : relativePath(editor.document.uri)
    : 'the workspace';
  const question = await vscode.window.showInputBox({
    title: 'Rein: Ask',
    prompt: `Ask about ${where}`,
    placeHolder: 'What should Rein do or explain?',
    ignoreFocusOut: true,
  });
  if (!question?.trim()) {
    return;
  }
  await view.reveal();
  await controller.send(question, 'auto', context);
}

async function fixProblems(controller: ChatController, view: ChatViewProvider): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Rein: open a file to fix its problems.');
    return;
  }
  const uri = editor.document.uri;
  const problems = vscode.languages
    .getDiagnostics(uri)
    .filter((d) => d.severity === vscode.DiagnosticSeverity.Error || d.severity === vscode.DiagnosticSeverity.Warning);
  const name = relativePath(uri);
  if (problems.length === 0) {
    void vscode.window.showInformationMessage(`Rein: ${name} has no errors or warnings.`);
    return;
  }
  const text = `Fix the ${problems.length} problem${problems.length === 1 ? '' : 's'} reported in ${name}.`;
  await view.reveal();
  await controller.send(text, 'auto', {
    uri: uri.toString(),
    languageId: editor.document.languageId,
    diagnostics: problems.map(toLspDiagnostic),
  });
}

export function registerCommands(
  context: vscode.ExtensionContext,
  client: ReinClient,
  { controller, view }: Chat,
  output: vscode.LogOutputChannel,
  keys: ApiKeyStore,
): void {
  const register = (id: string, run: () => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  };
  register(Commands.openChat, () => view.reveal());
  register(Commands.newSession, async () => {
    controller.newSession();
    await view.reveal();
  });
  register(Commands.askSelection, () => ask(controller, view));
  register(Commands.fixProblemsInFile, () => fixProblems(controller, view));
  register(Commands.abortRun, () => controller.abort());
  register(Commands.showOutput, () => output.show(true));
  register(Commands.setApiKey, () => promptForApiKey(keys, (reason) => client.restart(reason)));
  register(Commands.restartServer, () => client.restart('restart requested'));
  register(Commands.openSettings, () => vscode.commands.executeCommand('workbench.action.openSettings', '@ext:rein.rein'));
}
