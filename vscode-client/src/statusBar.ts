/**
 * The status bar item: idle, running (turn, tokens), or the server's trouble.
 * Clicking it opens the chat panel.
 */

import * as vscode from 'vscode';
import type { ConnectionInfo, ReinConnection } from './connection';
import type { ChatController } from './panel/controller';
import { formatTokens, totalTokens, type Header } from './shared/viewModel';

export interface StatusText {
  text: string;
  tooltip: string;
  warning: boolean;
}

/** Pure: what the item says for a connection state and the chat's header. */
export function statusText(connection: ConnectionInfo, header: Header): StatusText {
  switch (connection.state) {
    case 'missing':
      return {
        text: '$(warning) Rein',
        tooltip: connection.detail ? vscode.l10n.t('Rein: server not found. {0}', connection.detail) : vscode.l10n.t('Rein: server not found.'),
        warning: true,
      };
    case 'untrusted':
      return { text: '$(shield) Rein', tooltip: vscode.l10n.t('Rein: {0}', connection.detail ?? vscode.l10n.t('the workspace is not trusted')), warning: true };
    case 'failed':
      return { text: '$(error) Rein', tooltip: vscode.l10n.t('Rein: the server keeps stopping ({0})', connection.detail ?? vscode.l10n.t('see the output')), warning: true };
    case 'restarting':
      return {
        text: vscode.l10n.t('$(sync~spin) Rein: restarting'),
        tooltip: vscode.l10n.t('Rein: {0}', connection.detail ?? vscode.l10n.t('restarting the server')),
        warning: true,
      };
    case 'starting':
      return { text: '$(loading~spin) Rein', tooltip: vscode.l10n.t('Rein: starting the server'), warning: false };
    case 'stopped':
      return { text: '$(circle-slash) Rein', tooltip: vscode.l10n.t('Rein: the server is stopped'), warning: false };
    case 'running':
      break;
  }
  if (header.status === 'running') {
    const tokens = formatTokens(totalTokens(header.runUsage));
    return {
      text: header.turn
        ? vscode.l10n.t('$(sync~spin) Rein: turn {0} · {1} tokens', header.turn, tokens)
        : vscode.l10n.t('$(sync~spin) Rein: {0} tokens', tokens),
      tooltip: vscode.l10n.t('Rein: a run is active. Click to open the chat.'),
      warning: false,
    };
  }
  const session = totalTokens(header.sessionUsage);
  const last = header.lastRunStatus;
  const used = session ? formatTokens(session) : '';
  let tooltip: string;
  if (last && used) {
    tooltip = vscode.l10n.t('Rein: idle (last run {0}), {1} tokens this session. Click to open the chat.', last, used);
  } else if (last) {
    tooltip = vscode.l10n.t('Rein: idle (last run {0}). Click to open the chat.', last);
  } else if (used) {
    tooltip = vscode.l10n.t('Rein: idle, {0} tokens this session. Click to open the chat.', used);
  } else {
    tooltip = vscode.l10n.t('Rein: idle. Click to open the chat.');
  }
  return { text: '$(hubot) Rein', tooltip, warning: false };
}

export function registerStatusBar(
  context: vscode.ExtensionContext,
  connection: ReinConnection,
  controller: ChatController,
): void {
  const item = vscode.window.createStatusBarItem('rein.status', vscode.StatusBarAlignment.Left, 50);
  item.name = 'Rein';
  item.command = 'rein.openChat';
  let last = '';
  const update = (): void => {
    const status = statusText(connection.info, controller.header);
    const key = JSON.stringify(status);
    if (key === last) {
      return;
    }
    last = key;
    item.text = status.text;
    item.tooltip = status.tooltip;
    item.backgroundColor = status.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  };
  update();
  item.show();
  context.subscriptions.push(
    item,
    connection.onDidChangeState(update),
    controller.onDidChange(update),
    controller.onDidReset(update),
  );
}
