/**
 * The MCP servers section under the preview: one line per MCP server of the
 * workspace with its state (running with its tools count, starting, failed
 * with the error, stopped, skipped with the reason) and where it is defined.
 * Hidden while no server is configured. Updated in place.
 */

import * as l10n from '@vscode/l10n';
import type { McpServerView, McpView } from '../src/shared/viewModel';
import { h, icon } from './dom';
import type { IconName } from './icons';
import { stateName } from './locale';

const STATE_ICON: Record<McpServerView['state'], IconName> = {
  starting: 'spinner',
  running: 'check',
  failed: 'error',
  stopped: 'circle',
  skipped: 'circle',
};

const SOURCE: Record<string, string> = { settings: 'settings', vscode: '.vscode/mcp.json', 'mcp.json': '.mcp.json' };

export interface McpSection {
  el: HTMLDetailsElement;
  /** Draws `view` (undefined: keep the last one). */
  render(view: McpView | undefined): void;
}

/** The summary line's counts: "2 running · 1 failed". */
export function mcpSummary(servers: readonly McpServerView[]): string {
  const counts = new Map<string, number>();
  for (const server of servers) {
    counts.set(server.state, (counts.get(server.state) ?? 0) + 1);
  }
  return ['running', 'starting', 'failed', 'stopped', 'skipped']
    .filter((state) => counts.has(state))
    .map((state) => l10n.t('{0} {1}', counts.get(state) ?? 0, stateName(state)))
    .join(' · ');
}

/** What a server's line says after its state badge: its tools, its error, why it was skipped. */
export function mcpDetail(server: McpServerView): string {
  switch (server.state) {
    case 'running':
      return server.tools === 1 ? l10n.t('1 tool') : l10n.t('{0} tools', server.tools);
    case 'failed':
      return server.error ?? l10n.t('no error given');
    case 'skipped':
      return server.error ?? l10n.t('no reason given');
    default:
      return '';
  }
}

/** What a server's line says after its name: its state, then the detail. */
export function mcpStateText(server: McpServerView): string {
  const state = stateName(server.state);
  const detail = mcpDetail(server);
  if (!detail) {
    return state;
  }
  return server.state === 'running' ? l10n.t('{0} · {1}', state, detail) : l10n.t('{0}: {1}', state, detail);
}

function row(server: McpServerView): HTMLElement {
  return h(
    'li',
    { class: `mcp-server state-${server.state}`, 'data-server': server.name },
    icon(STATE_ICON[server.state], server.state === 'starting' ? 'spin mcp-icon' : 'mcp-icon'),
    h('span', { class: 'mcp-name' }, server.name),
    h('span', { class: `badge mcp-state ${server.state}` }, stateName(server.state)),
    h('span', { class: 'mcp-detail', title: server.error ?? '' }, mcpDetail(server)),
    h('span', { class: 'mcp-source muted' }, SOURCE[server.source] ?? server.source),
  );
}

export function mcpSection(open: boolean, onToggle: (open: boolean) => void): McpSection {
  const counts = h('span', { class: 'mcp-counts muted' });
  const failedBadge = h('span', { class: 'badge mcp-failed-badge hidden' }, l10n.t('failed'));
  const list = h('ul', { class: 'mcp-servers' });
  const el = h(
    'details',
    { class: 'mcp-section hidden' },
    h(
      'summary',
      { title: l10n.t("The workspace's MCP tool servers: their tools are offered to the model") },
      icon('chevron', 'chevron'),
      icon('tool', 'mcp-title-icon'),
      h('span', { class: 'mcp-title' }, l10n.t('MCP servers')),
      failedBadge,
      counts,
    ),
    list,
  );
  el.open = open;
  el.addEventListener('toggle', () => onToggle(el.open));

  function render(view: McpView | undefined): void {
    if (!view) {
      return;
    }
    el.classList.toggle('hidden', view.servers.length === 0);
    counts.textContent = mcpSummary(view.servers);
    failedBadge.classList.toggle('hidden', !view.servers.some((s) => s.state === 'failed'));
    list.replaceChildren(...view.servers.map(row));
  }

  return { el, render };
}
