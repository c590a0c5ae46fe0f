/**
 * The status bar item: idle, running (turn, tokens), or the server's trouble.
 * Clicking it opens the chat panel.
 */

import * as vscode from 'vscode';
import type { ConnectionInfo, ReinConnection } from './client';
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
      return { text: '$(warning) Rein', tooltip: `Rein: server not found. ${connection.detail ?? ''}`.trim(), warning: true };
    case 'untrusted':
      return { text: '$(shield) Rein', tooltip: `Rein: ${connection.detail ?? 'the workspace is not trusted'}`, warning: true };
    case 'failed':
      return { text: '$(error) Rein', tooltip: `Rein: the server keeps stopping (${connection.detail ?? 'see the output'})`, warning: true };
    case 'restarting':
      return { text: '$(sync~spin) Rein: restarting', tooltip: `Rein: ${connection.detail ?? 'restarting the server'}`, warning: true };
    case 'starting':
      return { text: '$(loading~spin) Rein', tooltip: 'Rein: starting the server', warning: false };
    case 'stopped':
      return { text: '$(circle-slash) Rein', tooltip: 'Rein: the server is stopped', warning: false };
    case 'running':
      break;
  }
  if (header.status === 'running') {
    const tokens = formatTokens(totalTokens(header.runUsage));
    const turn = header.turn ? `turn ${header.turn} · ` : '';
    return {
      text: `$(sync~spin) Rein: ${turn}${tokens} tokens`,
      tooltip: 'Rein: a run is active. Click to open the chat.',
      warning: false,
    };
  }
  const session = totalTokens(header.sessionUsage);
  return {
    text: '$(hubot) Rein',
    tooltip: `Rein: idle${header.lastRunStatus ? ` (last run ${header.lastRunStatus})` : ''}${session ? `, ${formatTokens(session)} tokens this session` : ''}. Click to open the chat.`,
    warning: false,
  };
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
