/**
 * A tool's result shown by the display kind its tool declared
 * (`tool_call_end.display`) in headless Chromium, fed the way the extension
 * host feeds the page (PanelState -> UpdateBuilder -> postMessage).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import type { FakePanelHost } from '../fakes';
import { connectedPanel, posted } from '../page';

const SESSION = 'ses_display';

function call(id: string, content: string, display?: string, isError = false) {
  return [
    { sessionId: SESSION, seq: 0, event: { type: 'tool_call_start', tool_call_id: id, name: `tool_${id}`, arguments: {} } },
    {
      sessionId: SESSION,
      seq: 0,
      event: { type: 'tool_call_end', tool_call_id: id, name: `tool_${id}`, is_error: isError, content, duration_ms: 3, ...(display ? { display } : {}) },
    },
  ];
}

describe('tool results by their display kind in the chat webview', () => {
  let browser: Browser;
  let page: Page;
  let host: FakePanelHost;
  const problems: string[] = [];

  before(async () => {
    ({ browser, page, host } = await connectedPanel(problems, 900, SESSION));
    await host.feed([
      { sessionId: SESSION, seq: 0, event: { type: 'agent_start' } },
      ...call('text', '# not a heading\n| a |'),
      ...call('markdown', '# Report\n\n- one\n- **two**', 'markdown'),
      ...call('diff', '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new', 'diff'),
      ...call('table', '| path | lines |\n|---|---|\n| a.py | 12 |\n| b\\|c.py | 3 |', 'table'),
      ...call('json', '{"model": "gpt", "limits": [1, 2]}', 'json'),
      ...call('cut', '{"model": "gp', 'json'),
      ...call('failed', '# boom', 'markdown', true),
      ...call(
        'refs',
        'References of `add` (the editor): 3 in 2 files\nsrc/util.ts\n  1:17: export function add(a: number, b: number): number {\nsrc/app.ts\n  5:15: console.log(add(1, 2));\n  9:3: add(3, 4);\n(150 more left out; the server may not have indexed the project yet)',
        'locations',
      ),
      ...call('rename', 'Renamed `f` to `g`: 3 edits in 2 files:\na.py\n  1:5: def g(x):\n/abs/lib/b.py\n  3:1: g(1)\n  4:1: g(2)\n(generations 1-2)', 'locations'),
      ...call('unindexed', 'References of `f` (basedpyright): 1 in 1 file\na.py\n  1:5: def f(x):\n(the server may not have indexed the project yet)\n', 'locations'),
    ]);
    await page.locator('.item.tool').nth(9).waitFor();
  });

  after(async () => {
    await browser.close();
  });

  async function result(id: string): Promise<Locator> {
    const row = page.locator('.item.tool').filter({ has: page.locator('.tool-name', { hasText: new RegExp(`^tool_${id}$`) }) });
    await row.locator('summary').click({ position: { x: 8, y: 8 } });
    return row.locator('.tool-body .result');
  }

  it('shows a result of no declared kind as text', async () => {
    const shown = await result('text');
    assert.equal(await shown.evaluate((el: { tagName: string }) => el.tagName), 'PRE');
    assert.equal(await shown.textContent(), '# not a heading\n| a |');
  });

  it('renders a markdown result', async () => {
    const shown = await result('markdown');
    assert.equal(await shown.locator('h1').textContent(), 'Report');
    assert.deepEqual(await shown.locator('li').allTextContents(), ['one', 'two']);
    assert.equal(await shown.locator('strong').textContent(), 'two');
  });

  it('colours a diff result\'s added and removed lines', async () => {
    const shown = await result('diff');
    assert.deepEqual(await shown.locator('.diff-add').allTextContents(), ['+new']);
    assert.deepEqual(await shown.locator('.diff-del').allTextContents(), ['-old']);
    assert.deepEqual(await shown.locator('.diff-hunk').allTextContents(), ['@@ -1 +1 @@']);
  });

  it('shows a table result as a table', async () => {
    const shown = await result('table');
    assert.deepEqual(await shown.locator('th').allTextContents(), ['path', 'lines']);
    assert.deepEqual(await shown.locator('tbody td').allTextContents(), ['a.py', '12', 'b|c.py', '3']);
  });

  it('pretty-prints a JSON result, and shows JSON cut short as it is', async () => {
    const shown = await result('json');
    assert.equal(await shown.evaluate((el: { tagName: string }) => el.tagName), 'PRE');
    assert.equal(await shown.textContent(), '{\n  "model": "gpt",\n  "limits": [\n    1,\n    2\n  ]\n}');
    assert.equal(await (await result('cut')).textContent(), '{"model": "gp');
  });

  it('shows places in files as links that open the file at the line and column', async () => {
    const shown = await result('refs');
    assert.equal(await shown.locator('.loc-header code').textContent(), 'add');
    assert.deepEqual(await shown.locator('.loc-file').allTextContents(), ['src/util.ts', 'src/app.ts']);
    assert.deepEqual(await shown.locator('.loc-place .location').allTextContents(), ['1:17', '5:15', '9:3']);
    assert.deepEqual(await shown.locator('.loc-place .loc-text').allTextContents(), [
      'export function add(a: number, b: number): number {',
      'console.log(add(1, 2));',
      'add(3, 4);',
    ]);
    // The last line in parentheses is the trailer, never a file.
    assert.equal(await shown.locator('.loc-more').textContent(), '(150 more left out; the server may not have indexed the project yet)');
    await shown.locator('.loc-place .location').nth(1).click();
    await shown.locator('.loc-file .location').first().click();
    assert.deepEqual((await posted(page)).slice(-2), [
      { type: 'openFile', path: 'src/app.ts', line: 4, character: 14 },
      { type: 'openFile', path: 'src/util.ts', line: undefined, character: undefined },
    ]);
  });

  it("shows a rename's files and edits the same way", async () => {
    const shown = await result('rename');
    assert.equal(await shown.locator('.loc-header').textContent(), 'Renamed f to g: 3 edits in 2 files:');
    assert.deepEqual(await shown.locator('.loc-file').allTextContents(), ['a.py', '/abs/lib/b.py']);
    assert.deepEqual(await shown.locator('.loc-more').allTextContents(), ['(generations 1-2)']);
    await shown.locator('.loc-place .location').nth(2).click();
    assert.deepEqual((await posted(page)).at(-1), { type: 'openFile', path: '/abs/lib/b.py', line: 3, character: 0 });
  });

  it('shows a trailer alone after the places, the final newline ignored', async () => {
    const shown = await result('unindexed');
    assert.deepEqual(await shown.locator('.loc-file').allTextContents(), ['a.py']);
    assert.deepEqual(await shown.locator('.loc-place .location').allTextContents(), ['1:5']);
    assert.deepEqual(await shown.locator('.loc-more').allTextContents(), ['(the server may not have indexed the project yet)']);
    assert.equal(await shown.locator(':scope > div').last().textContent(), '(the server may not have indexed the project yet)');
  });

  it('shows a failed call\'s error as text whatever the kind', async () => {
    const shown = await result('failed');
    assert.equal(await shown.evaluate((el: { tagName: string }) => el.tagName), 'PRE');
    assert.equal(await shown.textContent(), '# boom');
  });

  it('broke no Content Security Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
