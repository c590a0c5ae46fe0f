/**
 * The chat panel: a WebviewView in Rein's own activity-bar container. The
 * host keeps the state (ChatController) and sends the webview the items that
 * changed, at most every 50 ms; a webview that is created again (moved,
 * reloaded) gets everything. The page has a strict Content Security Policy
 * with a nonce and loads nothing remote. Its strings are translated with
 * the extension's l10n bundle (`vscode.l10n.bundle`, undefined in English),
 * which the page reads from `#app`'s `data-l10n` (webview/locale.ts).
 */

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ReinConnection } from '../connection';
import { useBundle } from '../shared/l10n';
import type { HostMessage, WebviewMessage } from '../shared/messages';
import { Methods, type CommandsResult, type SlashCommand } from '../shared/protocol';
import { CheckpointDocuments } from './checkpointDiff';
import { ChatController } from './controller';
import { CONTINUE_PROMPT } from './cost';
import { EditSnapshots, workspaceFileUri } from './edits';
import { IsolatedRuns } from './isolated';
import { pickMention, registerTerminalOutput, TerminalOutputLog } from './mentions';
import { modelLabel, pickModel } from './modelPicker';
import { loadSetup } from './setup';
import { UpdateBuilder } from './updates';
import { plain } from './text';

export const CHAT_VIEW_ID = 'rein.chat';
const PREVIEW_COMMANDS = {
  start: 'rein.previewStart',
  stop: 'rein.previewStop',
  restart: 'rein.previewRestart',
} as const;
const FLUSH_MS = 50;

export function nonce(): string {
  return randomBytes(18).toString('base64').replace(/[+/=]/g, '');
}

/** Text safe inside a double-quoted HTML attribute. */
function attribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The page's language and strings: `vscode.env.language` and `vscode.l10n.bundle` (undefined in English). */
export interface PageLocale {
  language?: string | undefined;
  bundle?: Record<string, string> | undefined;
}

export function chatHtml(
  webview: { cspSource: string },
  scriptUri: string,
  styleUri: string,
  scriptNonce: string,
  locale: PageLocale = {},
): string {
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${scriptNonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="${attribute(locale.language || 'en')}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${styleUri}">
<title>Rein</title>
</head>
<body>
<div id="app"${locale.bundle ? ` data-l10n="${attribute(JSON.stringify(locale.bundle))}"` : ''}></div>
<script nonce="${scriptNonce}" src="${scriptUri}"></script>
</body>
</html>`;
}

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private readonly updates = new UpdateBuilder();
  private timer: NodeJS.Timeout | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];
  private pendingInput: string | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
    private readonly connection: ReinConnection,
    private readonly edits: EditSnapshots,
    private readonly terminalOutput: TerminalOutputLog = new TerminalOutputLog(),
    private readonly isolated?: IsolatedRuns,
  ) {
    if (isolated) {
      this.subscriptions.push(isolated.onDidChange((runs) => this.post({ type: 'isolated', runs })));
    }
    this.subscriptions.push(
      controller.onDidChange(() => this.schedule()),
      controller.onDidReset(() => {
        this.updates.reset();
        this.schedule();
        // Another session: the button names its model.
        this.refreshModel();
      }),
      controller.onDidChangeSessions((sessions) =>
        this.post({ type: 'sessions', sessions, current: controller.sessionId }),
      ),
      connection.onDidChangeState((info) => {
        this.post({ type: 'connection', state: info.state, detail: info.detail });
        if (info.state === 'running') {
          // A restarted server may run another model (the settings changed).
          this.refreshModel();
        }
      }),
    );
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    const script = view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'main.js')).toString();
    const style = view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'panel.css')).toString();
    view.webview.html = chatHtml(view.webview, script, style, nonce(), {
      language: vscode.env.language,
      bundle: vscode.l10n.bundle,
    });
    this.updates.reset();
    const listener = view.webview.onDidReceiveMessage((msg: WebviewMessage) => this.onMessage(msg));
    view.onDidDispose(() => {
      listener.dispose();
      if (this.view === view) {
        this.view = undefined;
      }
    });
  }

  /** Shows the panel and puts `text` (if any) into its prompt box. */
  async reveal(text?: string): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
    if (this.view) {
      this.post({ type: 'focusInput', text });
    } else {
      this.pendingInput = text;
    }
  }

  /** The model button names the model of the panel's session (a new session's when none). */
  private refreshModel(): void {
    const sessionId = this.controller.sessionId;
    void modelLabel(this.connection, sessionId).then((label) => {
      if (label && this.controller.sessionId === sessionId) {
        this.post({ type: 'model', label });
      }
    });
  }

  private post(message: HostMessage): void {
    void this.view?.webview.postMessage(message);
  }

  private schedule(): void {
    if (!this.timer && this.view) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, FLUSH_MS);
    }
  }

  private flush(): void {
    if (!this.view) {
      return;
    }
    const update = this.updates.next(this.controller.view());
    if (update) {
      this.post(update);
    }
  }

  /** The slash commands for the `/` list (`rein/commands`); none when the server cannot say. */
  private async listCommands(): Promise<void> {
    let commands: SlashCommand[] = [];
    try {
      const result = await this.connection.sendRequest<CommandsResult | null>(Methods.commands, {});
      commands = result?.commands ?? [];
    } catch {
      // Not running, or a server without rein/commands: the list stays empty.
    }
    this.post({ type: 'commands', commands });
  }

  private onMessage(msg: WebviewMessage): void {
    switch (msg.type) {
      case 'ready':
        this.updates.reset();
        this.flush();
        this.post({ type: 'connection', state: this.connection.info.state, detail: this.connection.info.detail });
        this.post({ type: 'sessions', sessions: this.controller.sessions, current: this.controller.sessionId });
        if (this.pendingInput !== undefined) {
          this.post({ type: 'focusInput', text: this.pendingInput });
          this.pendingInput = undefined;
        }
        void this.controller.refreshSessions();
        void this.controller.refreshPreview();
        void this.isolated?.refresh();
        this.refreshModel();
        break;
      case 'pickModel':
        void pickModel(this.connection, this.controller.sessionId).then(
          (label) => label && this.post({ type: 'model', label }),
          (error: unknown) => void vscode.window.showErrorMessage(vscode.l10n.t('Rein: could not change the model: {0}', String(error))),
        );
        break;
      case 'send':
        void this.controller.send(msg.text, msg.mode, undefined, msg.runMode, msg.attachments ?? []);
        break;
      case 'mention':
        void pickMention(this.terminalOutput).then((chip) => {
          if (chip) {
            this.post({ type: 'attachment', label: chip.label, attachments: chip.attachments });
          }
        });
        break;
      case 'listCommands':
        void this.listCommands();
        break;
      case 'preview':
        // The same as the commands (and their status message).
        void vscode.commands.executeCommand(PREVIEW_COMMANDS[msg.action]);
        break;
      case 'abort':
        void this.controller.abort();
        break;
      case 'newSession':
        this.controller.newSession();
        break;
      case 'newIsolated':
        void this.isolated?.start();
        break;
      case 'isolatedAction':
        void this.isolated?.act(msg.sessionId, msg.action);
        break;
      case 'isolatedHunk':
        this.isolated?.decide(msg.sessionId, msg.hunk, msg.keep);
        break;
      case 'refreshSetup':
        void loadSetup(this.connection).then((view) => this.post({ type: 'setup', view }));
        break;
      case 'selectSession':
        void this.controller.selectSession(msg.sessionId);
        break;
      case 'refreshSessions':
        void this.controller.refreshSessions();
        break;
      case 'openDiff': {
        const item = this.controller.state.find(msg.itemId);
        if (item?.kind === 'tool') {
          void this.edits.open(item.toolCallId);
        }
        break;
      }
      case 'checkpoint':
        void checkpointAction(this.controller, msg);
        break;
      case 'review':
        void reviewAction(this.controller, msg);
        break;
      case 'openFile':
        void openWorkspaceFile(msg.path, msg.line, msg.character);
        break;
      case 'continueRun':
        void this.controller.send(CONTINUE_PROMPT, 'auto');
        break;
      case 'revokeApproval':
        void this.controller.revokeApproval(msg.id);
        break;
      case 'openLink':
        if (/^(https?:|mailto:)/i.test(msg.href)) {
          void vscode.env.openExternal(vscode.Uri.parse(msg.href));
        }
        break;
      case 'command':
        void vscode.commands.executeCommand(
          {
            showOutput: 'rein.showOutput',
            openSettings: 'rein.openSettings',
            restartServer: 'rein.restartServer',
            setApiKey: 'rein.setApiKey',
            manageTrust: 'workbench.trust.manage',
          }[msg.command],
        );
        break;
    }
  }
}

/** A checkpoint row's button (see WebviewMessage 'checkpoint'). */
export async function checkpointAction(controller: ChatController, msg: Extract<WebviewMessage, { type: 'checkpoint' }>): Promise<void> {
  const checkpoints = controller.checkpoints;
  switch (msg.action) {
    case 'undoRun':
      await checkpoints.restore({ runId: msg.runId });
      break;
    case 'restoreTurn':
      if (msg.turn !== undefined) {
        await checkpoints.restore({ runId: msg.runId, turn: msg.turn });
      }
      break;
    case 'restoreFile':
      if (msg.path !== undefined) {
        await checkpoints.restore({ runId: msg.runId, path: msg.path });
      }
      break;
    case 'openDiff':
      if (msg.path !== undefined) {
        await checkpoints.openDiff(msg.runId, msg.path, msg.turn);
      }
      break;
    case 'compare':
      if (msg.path !== undefined) {
        await checkpoints.compare(msg.runId, msg.path);
      }
      break;
  }
}

/** Keep or Undo in the panel's review (see WebviewMessage 'review'). */
export async function reviewAction(controller: ChatController, msg: Extract<WebviewMessage, { type: 'review' }>): Promise<void> {
  await controller.checkpoints.decide(msg.runId, msg.decision, msg.path, msg.hunk);
}

async function openWorkspaceFile(file: string, line?: number, character?: number): Promise<void> {
  const uri = workspaceFileUri(file);
  if (!uri) {
    return;
  }
  try {
    const position = new vscode.Position(Math.max(0, line ?? 0), Math.max(0, character ?? 0));
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(position, position), preview: true });
  } catch (error) {
    void vscode.window.showWarningMessage(plain(vscode.l10n.t('Rein: cannot open {0}: {1}', file, error instanceof Error ? error.message : String(error))));
  }
}

export interface Chat {
  controller: ChatController;
  view: ChatViewProvider;
}

/** The chat: its controller (state, requests), the edit snapshots, the view. */
export function registerChatPanel(context: vscode.ExtensionContext, connection: ReinConnection): Chat {
  // The words the view-model code makes on this side (notices, the cost line): src/shared/l10n.ts.
  useBundle(vscode.l10n.bundle);
  const edits = new EditSnapshots();
  const documents = new CheckpointDocuments(connection);
  const controller = new ChatController(connection, edits, documents);
  const terminalOutput = new TerminalOutputLog();
  registerTerminalOutput(context, terminalOutput);
  const isolated = new IsolatedRuns(connection, controller);
  const view = new ChatViewProvider(context.extensionUri, controller, connection, edits, terminalOutput, isolated);
  context.subscriptions.push(
    isolated,
    edits,
    documents,
    controller,
    view,
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, view, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
  );
  return { controller, view };
}
