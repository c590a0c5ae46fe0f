/**
 * The MCP servers section's state: the workspace's MCP tool servers and
 * where each stands (starting, running with its tools count, failed with the
 * error, stopped, skipped with the reason). One per workspace, like the
 * preview, so one model outlives the sessions the panel shows; it follows
 * `mcp_server_state` events (of any session) and the answer of
 * `rein/mcpServers`. Pure.
 */

import type { McpServerState } from '../shared/events.generated';
import type { McpServerView, McpView } from '../shared/viewModel';

/** `rein/mcpServers`' answer (the fields the panel reads). */
export interface McpServersResult {
  servers?: { name: string; source: string; state: McpServerView['state']; tools?: string[]; error?: string | null }[];
  skipped?: { name: string; source: string; reason: string }[];
}

const ORDER: Record<McpServerView['state'], number> = { failed: 0, starting: 1, running: 2, stopped: 3, skipped: 4 };

export class McpModel {
  private value: McpView = { rev: 0, servers: [] };

  get rev(): number {
    return this.value.rev;
  }

  /** A copy for the view model: failed first, then by state and name. */
  view(): McpView {
    const servers = [...this.value.servers].sort((a, b) => ORDER[a.state] - ORDER[b.state] || a.name.localeCompare(b.name));
    return { rev: this.value.rev, servers };
  }

  private put(server: McpServerView): void {
    const others = this.value.servers.filter((s) => s.name !== server.name);
    this.value = { rev: this.value.rev + 1, servers: [...others, server] };
  }

  /** One `mcp_server_state` event. A restart keeps the last tools count until it runs again. */
  apply(event: McpServerState): void {
    const before = this.value.servers.find((s) => s.name === event.server);
    const tools = event.state === 'running' ? (event.tools ?? 0) : (before?.tools ?? 0);
    this.put({
      name: event.server,
      source: event.source,
      state: event.state,
      tools,
      error: event.error ?? undefined,
    });
  }

  /** The whole list from `rein/mcpServers` (replaces what the events said). */
  setSnapshot(result: McpServersResult): void {
    const servers: McpServerView[] = (result.servers ?? []).map((s) => ({
      name: s.name,
      source: s.source,
      state: s.state,
      tools: s.tools?.length ?? 0,
      error: s.error ?? undefined,
    }));
    for (const skipped of result.skipped ?? []) {
      if (!servers.some((s) => s.name === skipped.name)) {
        servers.push({ name: skipped.name, source: skipped.source, state: 'skipped', tools: 0, error: skipped.reason });
      }
    }
    this.value = { rev: this.value.rev + 1, servers };
  }
}

/** The MCP server of a tool call: its `details.mcpServer`, else from an `mcp__<server>__<tool>` name. */
export function mcpServerOf(name: string, details?: Record<string, unknown>): string | undefined {
  const server = details?.mcpServer;
  if (typeof server === 'string' && server) {
    return server;
  }
  const match = /^mcp__(.+?)__.+$/.exec(name);
  return match?.[1];
}
