/**
 * The MCP servers section under the preview: one line per MCP server of the
 * workspace with its state (running with its tools count, starting, failed
 * with the error, stopped, skipped with the reason) and where it is defined.
 * Hidden while no server is configured. Updated in place.
 */

import type { McpServerView, McpView } from '../src/shared/viewModel';
import { h, icon } from './dom';
import type { IconName } from './icons';

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
    .map((state) => `${counts.get(state)} ${state}`)
    .join(' · ');
}

/** What a server's line says after its name. */
export function mcpStateText(server: McpServerView): string {
  switch (server.state) {
    case 'running':
      return `running · ${server.tools} tool${server.tools === 1 ? '' : 's'}`;
    case 'failed':
      return `failed: ${server.error ?? 'no error given'}`;
    case 'skipped':
      return `skipped: ${server.error ?? 'no reason given'}`;
    default:
      return server.state;
  }
}

function row(server: McpServerView): HTMLElement {
  return h(
    'li',
    { class: `mcp-server state-${server.state}`, 'data-server': server.name },
    icon(STATE_ICON[server.state], server.state === 'starting' ? 'spin mcp-icon' : 'mcp-icon'),
    h('span', { class: 'mcp-name' }, server.name),
    h('span', { class: `badge mcp-state ${server.state}` }, server.state),
    h('span', { class: 'mcp-detail', title: server.error ?? '' }, mcpStateText(server).replace(/^[a-z]+(: | · )?/, '')),
    h('span', { class: 'mcp-source muted' }, SOURCE[server.source] ?? server.source),
  );
}

export function mcpSection(open: boolean, onToggle: (open: boolean) => void): McpSection {
  const counts = h('span', { class: 'mcp-counts muted' });
  const failedBadge = h('span', { class: 'badge mcp-failed-badge hidden' }, 'failed');
  const list = h('ul', { class: 'mcp-servers' });
  const el = h(
    'details',
    { class: 'mcp-section hidden' },
    h(
      'summary',
      { title: "The workspace's MCP tool servers: their tools are offered to the model" },
      icon('chevron', 'chevron'),
      icon('tool', 'mcp-title-icon'),
      h('span', { class: 'mcp-title' }, 'MCP servers'),
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
