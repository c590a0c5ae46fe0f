/**
 * The client's commands. Their ids differ from the server's (`rein.fix`,
 * `rein.explain`, `rein.ask`, `rein.abort`, `rein.preview.start|stop|restart`
 * are registered by vscode-languageclient from the server's
 * executeCommandProvider).
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { promptForApiKey, type ApiKeyStore } from './apiKey';
import type { ReinClient } from './client';
import { toLspDiagnostic } from './bridge/diagnostics';
import type { Chat, ChatViewProvider } from './panel/chatView';
import type { ChatController } from './panel/controller';
import type { PreviewAction, PreviewResult, PromptContext } from './shared/protocol';
import { plain } from './panel/text';

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
  openWalkthrough: 'rein.openWalkthrough',
  previewStart: 'rein.previewStart',
  previewStop: 'rein.previewStop',
  previewRestart: 'rein.previewRestart',
} as const;

/** The walkthrough (package.json contributes.walkthroughs), as `publisher.name#id`. */
export const WALKTHROUGH = 'rein.rein#rein.gettingStarted';

const STATUS_MESSAGE_MS = 6000;

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
      ? vscode.l10n.t('the selection in {0}', relativePath(editor.document.uri))
      : relativePath(editor.document.uri)
    : vscode.l10n.t('the workspace');
  const question = await vscode.window.showInputBox({
    title: vscode.l10n.t('Rein: Ask'),
    prompt: vscode.l10n.t('Ask about {0}', where),
    placeHolder: vscode.l10n.t('What should Rein do or explain?'),
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
    void vscode.window.showInformationMessage(vscode.l10n.t('Rein: open a file to fix its problems.'));
    return;
  }
  const uri = editor.document.uri;
  const problems = vscode.languages
    .getDiagnostics(uri)
    .filter((d) => d.severity === vscode.DiagnosticSeverity.Error || d.severity === vscode.DiagnosticSeverity.Warning);
  const name = relativePath(uri);
  if (problems.length === 0) {
    void vscode.window.showInformationMessage(plain(vscode.l10n.t('Rein: {0} has no errors or warnings.', name)));
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

/** What a `rein/preview` answer says, for the status bar. */
export function previewStatusText(result: Pick<PreviewResult, 'state' | 'pid'>): string {
  const pid = result.pid === undefined ? '' : ` (pid ${result.pid})`;
  return `Rein: the preview is ${result.state}${pid}`;
}

/**
 * Start, stop or restart the preview (`rein/preview`) and say how it went:
 * the state in the status bar, a failure as an error message, a preview that
 * is not configured as a warning that offers the settings. The panel's
 * preview buttons run these commands too.
 */
export async function runPreviewAction(controller: ChatController, action: Exclude<PreviewAction, 'status'>): Promise<void> {
  const doing = { start: 'starting', stop: 'stopping', restart: 'restarting' }[action];
  let result: PreviewResult;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Rein: ${doing} the preview` },
      () => controller.previewRequest(action),
    );
  } catch (error) {
    void vscode.window.showErrorMessage(plain(vscode.l10n.t('Rein: could not {0} the preview: {1}', action, error instanceof Error ? error.message : String(error))));
    return;
  }
  if (result.state === 'off') {
    const open = 'Open Settings';
    const choice = await vscode.window.showWarningMessage(vscode.l10n.t('Rein: no preview is configured. Set rein.gates.preview.command to the command that starts your program.'), open);
    if (choice === open) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'rein.gates.preview');
    }
    return;
  }
  if (result.error) {
    void vscode.window.showErrorMessage(plain(vscode.l10n.t('Rein: preview {0} failed: {1}', action, result.error)));
    return;
  }
  vscode.window.setStatusBarMessage(previewStatusText(result), STATUS_MESSAGE_MS);
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
  register(Commands.openWalkthrough, () =>
    vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH, false),
  );
  register(Commands.previewStart, () => runPreviewAction(controller, 'start'));
  register(Commands.previewStop, () => runPreviewAction(controller, 'stop'));
  register(Commands.previewRestart, () => runPreviewAction(controller, 'restart'));
}

/** The context key that enables Rein: Abort (package.json `enablement`) only while a run is active. */
export const RUN_ACTIVE_KEY = 'rein.runActive';

/** Keeps RUN_ACTIVE_KEY equal to whether the panel's session is running. */
export function registerRunContext(
  context: vscode.ExtensionContext,
  controller: Pick<ChatController, 'running' | 'onDidChange' | 'onDidReset'>,
): void {
  let last: boolean | undefined;
  const update = (): void => {
    const running = controller.running;
    if (running !== last) {
      last = running;
      void vscode.commands.executeCommand('setContext', RUN_ACTIVE_KEY, running);
    }
  };
  update();
  context.subscriptions.push(controller.onDidChange(update), controller.onDidReset(update));
}
