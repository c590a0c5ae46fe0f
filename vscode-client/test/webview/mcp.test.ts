/**
 * The MCP servers section and MCP tool rows in headless Chromium, fed the
 * way the extension host feeds the page (PanelState -> UpdateBuilder ->
 * postMessage).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { FakePanelHost } from '../fakes';
import { connectedPanel } from '../page';

const SESSION = 'ses_mcp';

function server(name: string, state: string, extra: Record<string, unknown> = {}) {
  return { sessionId: SESSION, seq: 0, event: { type: 'mcp_server_state', server: name, source: 'vscode', state, ...extra } };
}

describe('MCP servers in the chat webview', () => {
  let browser: Browser;
  let page: Page;
  let host: FakePanelHost;
  const problems: string[] = [];

  before(async () => {
    ({ browser, page, host } = await connectedPanel(problems, 900, SESSION));
  });

  after(async () => {
    await browser.close();
  });

  it('hides the section while no MCP server is known', async () => {
    await host.flush();
    assert.equal(await page.locator('.mcp-section').count(), 1);
    assert.equal(await page.locator('.mcp-section').isHidden(), true);
  });

  it('lists each server with its state: running with its tools, failed with the error, skipped with the reason', async () => {
    await host.feed([
      server('time', 'starting'),
      server('time', 'running', { tools: 2 }),
      server('box', 'failed', { error: 'the server exited (status 3)', source: 'settings' }),
      server('evil', 'skipped', { error: 'not trusted: .mcp.json defines it to run sh -c x', source: 'mcp.json' }),
    ]);
    const section = page.locator('.mcp-section');
    await section.waitFor();
    assert.equal(await section.locator('.mcp-counts').textContent(), '1 running · 1 failed · 1 skipped');
    assert.equal(await section.locator('.mcp-failed-badge').isVisible(), true);
    await section.locator('summary').click();
    const rows = await Promise.all(
      (await section.locator('.mcp-server').all()).map(async (row) => [
        await row.getAttribute('data-server'),
        await row.locator('.mcp-state').textContent(),
        await row.locator('.mcp-detail').textContent(),
        await row.locator('.mcp-source').textContent(),
      ]),
    );
    assert.deepEqual(rows, [
      ['box', 'failed', 'the server exited (status 3)', 'settings'],
      ['time', 'running', '2 tools', '.vscode/mcp.json'],
      ['evil', 'skipped', 'not trusted: .mcp.json defines it to run sh -c x', '.mcp.json'],
    ]);
  });

  it('labels an MCP tool call with its server name', async () => {
    await host.feed([
      { sessionId: SESSION, seq: 0, event: { type: 'agent_start' } },
      {
        sessionId: SESSION,
        seq: 0,
        event: {
          type: 'tool_call_start',
          tool_call_id: 'c1',
          name: 'mcp__time__get_current_time',
          arguments: { timezone: 'UTC' },
          details: { mcpServer: 'time', mcpTool: 'get_current_time' },
        },
      },
      { sessionId: SESSION, seq: 0, event: { type: 'tool_call_start', tool_call_id: 'c2', name: 'read_file', arguments: { path: 'a.py' } } },
    ]);
    const tools = page.locator('.item.tool');
    await tools.nth(1).waitFor();
    assert.equal(await tools.nth(0).locator('.tool-server').textContent(), 'time');
    assert.equal(await tools.nth(0).locator('.tool-name').textContent(), 'mcp__time__get_current_time');
    assert.equal(await tools.nth(1).locator('.tool-server').count(), 0);
  });

  it('broke no Content Security Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
