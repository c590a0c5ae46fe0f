/**
 * Rein for VS Code. `activate` only wires: one register call per feature,
 * every disposable in context.subscriptions; `deactivate` stops the client.
 */

import * as vscode from 'vscode';
import { ApiKeyStore } from './apiKey';
import { registerEditorBridge } from './bridge';
import { PersonEdits } from './bridge/save';
import { registerClient, type ReinClient } from './client';
import { registerCommands, registerRunContext } from './commands';
import { registerLanguageModels } from './lm';
import { registerRunLog } from './log';
import { registerChatPanel } from './panel/chatView';
import { registerReviewLens } from './panel/reviewLens';
import { registerStatusBar } from './statusBar';

let client: ReinClient | undefined;

function registerOutput(context: vscode.ExtensionContext): vscode.LogOutputChannel {
  const output = vscode.window.createOutputChannel('Rein', { log: true });
  context.subscriptions.push(output);
  return output;
}

export function activate(context: vscode.ExtensionContext): void {
  const output = registerOutput(context);
  const keys = new ApiKeyStore(context.secrets);
  const person = new PersonEdits();
  client = registerClient(context, output, keys, (uris) => person.beforeRein(uris));
  registerEditorBridge(context, client, person);
  registerLanguageModels(context, client);
  const chat = registerChatPanel(context, client);
  registerReviewLens(context, chat.controller.checkpoints);
  registerCommands(context, client, chat, output, keys);
  registerRunLog(context, chat.controller, output);
  registerRunContext(context, chat.controller);
  registerStatusBar(context, client, chat.controller);
}

export function deactivate(): Thenable<void> | undefined {
  return client?.stop();
}
