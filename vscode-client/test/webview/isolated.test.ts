/**
 * The isolated runs section and the setup view in headless Chromium, fed
 * what the host posts (isolatedRows, setupView) and checked for what the
 * page posts back.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { isolatedRows } from '../../src/shared/isolatedView';
import { setupView } from '../../src/shared/setupView';
import type { FakePanelHost } from '../fakes';
import { connectedPanel, posted } from '../page';

describe('isolated runs and the setup view in the chat webview', () => {
  let browser: Browser;
  let page: Page;
  let host: FakePanelHost;
  const problems: string[] = [];

  before(async () => {
    ({ browser, page, host } = await connectedPanel(problems, 900, 'iso1'));
  });

  after(async () => {
    await browser.close();
  });

  it('starts an isolated session from the toolbar; lists each run with its state, verdict, changed files and buttons', async () => {
    assert.equal(await page.locator('.isolated-section').isHidden(), true, 'hidden while there is no run');
    await page.locator('button[aria-label="New isolated session"]').click();
    const runs = isolatedRows(
      [
        { sessionId: 'iso1', status: 'running', verdict: '', worktree: '/s/1', kind: 'copy', created: 1, live: true, title: 'Add notes', runStatus: 'running', changed: ['NOTES.md'] },
        { sessionId: 'iso2', status: 'running', verdict: '', worktree: '/s/2', kind: 'git', created: 2, live: true, title: 'Changelog', runStatus: 'completed', changed: ['CHANGES.md', 'app.py'], analyzers: 'analyzers: ruff 0.9 (python); not analysed: .md (1 file)' },
      ],
      'iso1',
    );
    await host.post({ type: 'isolated', runs });
    const section = page.locator('.isolated-section');
    assert.equal(await section.isVisible(), true);
    assert.equal(await section.locator('.isolated-counts').textContent(), '2 · 1 running');
    const rows = await Promise.all(
      (await section.locator('.isolated-run').all()).map(async (row) => [
        await row.getAttribute('data-session'),
        await row.locator('.isolated-state').textContent(),
        await row.locator('.isolated-changed').textContent(),
        await row.locator('.isolated-actions button').allTextContents(),
      ]),
    );
    assert.deepEqual(rows, [
      ['iso1', 'running', 'changed: NOTES.md', ['Abort']],
      ['iso2', 'completed', 'changed: CHANGES.md, app.py', ['Open', 'Review', 'Keep all', 'Discard', 'Keep as branch']],
    ]);
    assert.equal(await section.locator('.isolated-run[data-session="iso2"] .isolated-analyzers').textContent(), 'analyzers: ruff 0.9 (python); not analysed: .md (1 file)');
    await section.locator('.isolated-run[data-session="iso2"] button', { hasText: 'Keep all' }).click();
    await section.locator('.isolated-run[data-session="iso1"] button', { hasText: 'Abort' }).click();
    const sent = (await posted(page)).filter((m) => m.type === 'newIsolated' || m.type === 'isolatedAction');
    assert.deepEqual(sent, [
      { type: 'newIsolated' },
      { type: 'isolatedAction', sessionId: 'iso2', action: 'keep' },
      { type: 'isolatedAction', sessionId: 'iso1', action: 'abort' },
    ]);
  });

  it("reviews a run's hunks: keep or undo each clean one, a conflict with both sides, then Apply kept", async () => {
    const session = { sessionId: 'iso2', status: 'running' as const, verdict: '', worktree: '/s/2', kind: 'git' as const, created: 2, live: true, title: 'Changelog', runStatus: 'completed', changed: ['app.py'] };
    const files = [
      {
        path: 'app.py',
        change: 'modified' as const,
        notes: [],
        hunks: [
          { id: 'app.py#0', index: 0, header: '@@ -2,1 +2,1 @@', lines: ['-    return 1', '+    return 10'], status: 'clean' as const },
          { id: 'app.py#1', index: 1, header: '@@ -6,1 +6,1 @@', lines: ['-    return 2', '+    return 20'], status: 'clean' as const },
          {
            id: 'app.py#2', index: 2, header: '@@ -10,1 +10,1 @@', lines: ['-    return 3', '+    return 30'], status: 'conflict' as const,
            conflict: { id: 'app.py#2', path: 'app.py', base: '    return 3\n', ours: '    return 300\n', theirs: '    return 30\n', reason: 'the folder changed these lines since the run started' },
          },
        ],
      },
    ];
    const reviews = new Map([['iso2', { files, kept: new Set(['app.py#0', 'app.py#1']) }]]);
    await host.post({ type: 'isolated', runs: isolatedRows([session], 'iso1', reviews) });
    const row = page.locator('.isolated-run[data-session="iso2"]');
    assert.deepEqual(await row.locator('.isolated-actions button').allTextContents(), ['Open', 'Close review', 'Apply kept (2)', 'Keep all', 'Discard', 'Keep as branch']);
    assert.equal(await row.locator('.isolated-review-head').textContent(), '2 kept · 1 conflicting, never applied');
    const hunks = await Promise.all(
      (await row.locator('.isolated-hunk').all()).map(async (hunk) => [
        await hunk.getAttribute('data-hunk'),
        await hunk.locator('.hunk-head .badge').textContent(),
        await hunk.locator('.hunk-head button').allTextContents(),
        await hunk.locator('pre.hunk-lines').first().textContent(),
      ]),
    );
    assert.deepEqual(hunks, [
      ['app.py#0', 'kept', ['Undo'], '-    return 1\n+    return 10\n'],
      ['app.py#1', 'kept', ['Undo'], '-    return 2\n+    return 20\n'],
      ['app.py#2', 'conflict', [], '-    return 3\n+    return 30\n'],
    ]);
    const conflict = row.locator('.isolated-hunk[data-hunk="app.py#2"]');
    assert.deepEqual(
      [await conflict.locator('.isolated-side.ours pre').textContent(), await conflict.locator('.isolated-side.theirs pre').textContent()],
      ['    return 300\n', '    return 30\n'],
    );
    await row.locator('.isolated-hunk[data-hunk="app.py#1"] button', { hasText: 'Undo' }).click();
    // The host answers with the new rows: one kept, its button says so.
    await host.post({ type: 'isolated', runs: isolatedRows([session], 'iso1', new Map([['iso2', { files, kept: new Set(['app.py#0']) }]])) });
    assert.equal(await row.locator('.isolated-hunk[data-hunk="app.py#1"] .badge').textContent(), 'undone');
    await row.locator('.isolated-hunk[data-hunk="app.py#1"] button', { hasText: 'Keep' }).click();
    const applyKept = row.locator('button', { hasText: 'Apply kept (1)' });
    assert.match((await applyKept.getAttribute('title')) ?? '', /the hunks not kept are discarded with the copy/);
    await applyKept.click();
    const sent = (await posted(page)).filter((m) => m.type === 'isolatedHunk' || (m.type === 'isolatedAction' && m.action === 'applyKept'));
    assert.deepEqual(sent, [
      { type: 'isolatedHunk', sessionId: 'iso2', hunk: 'app.py#1', keep: false },
      { type: 'isolatedHunk', sessionId: 'iso2', hunk: 'app.py#1', keep: true },
      { type: 'isolatedAction', sessionId: 'iso2', action: 'applyKept' },
    ]);
    // Nothing kept: nothing to apply, the button cannot be pressed.
    await host.post({ type: 'isolated', runs: isolatedRows([session], 'iso1', new Map([['iso2', { files, kept: new Set<string>() }]])) });
    assert.equal(await row.locator('button', { hasText: 'Apply kept (0)' }).isDisabled(), true);
    assert.deepEqual(problems, []);
  });

  it('asks for the setup when opened and shows each kind with where it came from and why it is not used', async () => {
    const section = page.locator('.setup-section');
    await section.locator('summary').click({ position: { x: 8, y: 8 } });
    // The details' toggle event comes after the click: wait for what it posts.
    await page.waitForFunction(() => (globalThis as unknown as { __posted: { type: string }[] }).__posted.some((m) => m.type === 'refreshSetup'));
    assert.ok((await posted(page)).some((m) => m.type === 'refreshSetup'));
    const view = setupView(
      [
        { kind: 'hook', name: 'PreToolUse [Bash]', source: '.claude/settings.json', status: 'not trusted', detail: 'bash guard.sh' },
        { kind: 'command', name: '/file', source: '.claude/commands/review/file.md', status: 'used', detail: 'Review one file' },
        { kind: 'agent', name: 'nameless', source: '.claude/agents/nameless.md', status: 'invalid', detail: 'name: required' },
      ],
      false,
    );
    await host.post({ type: 'setup', view: { ...view, coverage: { seen: [{ ext: '.py', sources: ['ruff'] }], unseen: ['.md'] } } });
    const coverage = section.locator('.setup-group.coverage');
    assert.equal(await coverage.locator('.coverage-seen[data-ext=".py"]').textContent(), '.pyruff');
    assert.match((await coverage.locator('.coverage-unseen').textContent()) ?? '', /Open files no analyzer reported on .*: \.md$/);
    assert.equal(await section.locator('.setup-problems').textContent(), '2 not used');
    const agent = section.locator('.setup-item[data-name="nameless"]');
    assert.deepEqual(
      [await agent.locator('.setup-status').textContent(), await agent.locator('.setup-source').textContent(), await agent.locator('.setup-detail').textContent()],
      ['invalid', '.claude/agents/nameless.md', 'name: required'],
    );
    assert.equal(await section.locator('.setup-group[data-kind="skill"] .setup-none').textContent(), 'none found');
    assert.equal(await section.locator('.setup-group[data-kind="mcp"] .setup-none').textContent(), 'not loaded yet (a session loads them)');
    await host.post({ type: 'setup', view: { ...setupView([], false), error: 'rein/setup: method not found' } });
    assert.equal(await section.locator('.setup-error').textContent(), 'The server cannot list the setup: rein/setup: method not found');
    assert.deepEqual(problems, []);
  });
});
