import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { McpModel, mcpServerOf } from '../../src/panel/mcp';
import { PanelState } from '../../src/panel/reducer';
import type { McpBudgetWarning, McpServerState, ToolCallStart } from '../../src/shared/events.generated';
import type { NoticeItem, ToolItem } from '../../src/shared/viewModel';

function state(server: string, s: McpServerState['state'], extra: Partial<McpServerState> = {}): McpServerState {
  return { type: 'mcp_server_state', server, source: 'vscode', state: s, ...extra };
}

describe('the MCP servers section', () => {
  it('follows mcp_server_state: running with its tools, failed with the error, skipped with the reason', () => {
    const model = new McpModel();
    assert.deepEqual(model.view(), { rev: 0, servers: [] });
    model.apply(state('time', 'starting'));
    model.apply(state('time', 'running', { tools: 2 }));
    model.apply(state('box', 'failed', { error: 'exited with status 3', source: 'settings' }));
    model.apply(state('evil', 'skipped', { error: 'not trusted: .mcp.json defines it to run sh', source: 'mcp.json' }));
    const view = model.view();
    assert.equal(view.rev, 4);
    // Failed first, then by state and name; one line per server.
    assert.deepEqual(view.servers, [
      { name: 'box', source: 'settings', state: 'failed', tools: 0, error: 'exited with status 3' },
      { name: 'time', source: 'vscode', state: 'running', tools: 2, error: undefined },
      { name: 'evil', source: 'mcp.json', state: 'skipped', tools: 0, error: 'not trusted: .mcp.json defines it to run sh' },
    ]);
    // A crash keeps the last tools count; running again takes the new one.
    model.apply(state('time', 'failed', { error: 'crashed' }));
    assert.deepEqual(model.view().servers.find((s) => s.name === 'time'), {
      name: 'time',
      source: 'vscode',
      state: 'failed',
      tools: 2,
      error: 'crashed',
    });
    model.apply(state('time', 'running', { tools: 3 }));
    assert.equal(model.view().servers.find((s) => s.name === 'time')?.tools, 3);
  });

  it('takes the whole list from rein/mcpServers', () => {
    const model = new McpModel();
    model.apply(state('old', 'running', { tools: 1 }));
    model.setSnapshot({
      servers: [{ name: 'time', source: 'vscode', state: 'running', tools: ['get_current_time', 'convert_time'] }],
      skipped: [{ name: 'off', source: 'mcp.json', reason: 'disabled' }],
    });
    assert.deepEqual(model.view().servers, [
      { name: 'time', source: 'vscode', state: 'running', tools: 2, error: undefined },
      { name: 'off', source: 'mcp.json', state: 'skipped', tools: 0, error: 'disabled' },
    ]);
  });

  it('is the workspace one, shared by the panel states and shown in their view', () => {
    const shared = new McpModel();
    const first = new PanelState('s1', undefined, shared);
    assert.equal(first.apply(state('time', 'running', { tools: 2 })), true);
    const second = new PanelState('s2', undefined, shared);
    assert.deepEqual(second.view().mcp.servers.map((s) => [s.name, s.state, s.tools]), [['time', 'running', 2]]);
  });

  it('labels an MCP tool row with its server, from the event or the stored name', () => {
    const live = new PanelState('s');
    const mcpCall: ToolCallStart = {
      type: 'tool_call_start',
      tool_call_id: 'c1',
      name: 'mcp__time__get_current_time',
      arguments: { timezone: 'UTC' },
      details: { mcpServer: 'time', mcpTool: 'get_current_time' },
    };
    const builtIn: ToolCallStart = { type: 'tool_call_start', tool_call_id: 'c2', name: 'read_file', arguments: { path: 'a.py' } };
    live.apply(mcpCall);
    live.apply(builtIn);
    const tools = live.view().items.filter((i): i is ToolItem => i.kind === 'tool');
    assert.deepEqual(tools.map((t) => [t.name, t.mcpServer]), [
      ['mcp__time__get_current_time', 'time'],
      ['read_file', undefined],
    ]);
    const stored = PanelState.fromTranscript('s', [
      { role: 'tool', tool_call_id: 'c1', tool_name: 'mcp__my-box__echo', content: 'echo: hi' },
    ] as never);
    const [row] = stored.view().items.filter((i): i is ToolItem => i.kind === 'tool');
    assert.equal(row?.mcpServer, 'my-box');
    assert.equal(mcpServerOf('mcp__x__y', { mcpServer: 'real name' }), 'real name');
    assert.equal(mcpServerOf('mcp_search_tools'), undefined);
  });

  it('warns once in the timeline when the MCP tools take too much of the window', () => {
    const panel = new PanelState('s');
    const warning: McpBudgetWarning = { type: 'mcp_budget_warning', tokens: 12000, window: 100000, share: 0.1, offered: 5, total: 40 };
    assert.equal(panel.apply(warning), true);
    const notices = panel.view().items.filter((i): i is NoticeItem => i.kind === 'notice');
    assert.deepEqual(notices.map((n) => [n.level, n.text]), [
      [
        'warning',
        "The MCP tools' definitions take 12000 tokens (10% of the 100000-token window): 5 of 40 tools are offered " +
          '(rein.mcp.maxToolShare; set includeTools or rein.mcp.lazyTools).',
      ],
    ]);
  });
});
