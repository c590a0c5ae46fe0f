/**
 * The checkpoint rows of the chat page in headless Chromium: the recorded run
 * (run-fix-calc.jsonl) followed by its `rein/checkpoints` answer, as the host
 * draws them (PanelState + CheckpointModel -> UpdateBuilder -> postMessage).
 * Checks what each row shows and what each button posts; saves
 * build/screenshots/chat-panel-checkpoints.png and chat-panel-review.png.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { CheckpointRunInfo, ReviewResult } from '../../src/shared/protocol';
import type { WebviewMessage } from '../../src/shared/messages';
import type { FakePanelHost } from '../fakes';
import { loadEvents, pngSize, screenshotPath } from '../helpers';
import { connectedPanel, posted } from '../page';

const SCREENSHOT = screenshotPath('chat-panel-checkpoints.png');
const REVIEW_SCREENSHOT = screenshotPath('chat-panel-review.png');
const events = loadEvents();
const RUN = 'run_7e41b09c2d';

/** The recorded run changed calc.py in turns 3 and 5; a later run (not in this timeline) changed three files. */
const RUNS: CheckpointRunInfo[] = [
  {
    runId: RUN,
    kind: 'run',
    title: 'Fix mean() and report() in calc.py',
    startedAt: 1796208000,
    bytes: 1824,
    pruned: false,
    files: [{ path: 'calc.py', change: 'modified', restorable: true }],
    turns: [
      { turn: 3, files: [{ path: 'calc.py', change: 'modified', restorable: true }] },
      { turn: 5, files: [{ path: 'calc.py', change: 'modified', restorable: true }] },
    ],
  },
  {
    runId: 'run_later',
    kind: 'run',
    title: 'Move the statistics into stats.py and test them',
    startedAt: 1796208300,
    bytes: 4210,
    pruned: false,
    files: [
      { path: 'stats.py', change: 'modified', restorable: true },
      { path: 'tests/test_stats.py', change: 'created', restorable: true },
      { path: 'legacy_stats.py', change: 'deleted', restorable: true },
      { path: 'data/sample.bin', change: 'modified', restorable: false, reason: 'binary' },
    ],
    turns: [
      { turn: 2, files: [{ path: 'stats.py', change: 'modified', restorable: true }] },
      {
        turn: 4,
        files: [
          { path: 'tests/test_stats.py', change: 'created', restorable: true },
          { path: 'legacy_stats.py', change: 'deleted', restorable: true },
          { path: 'data/sample.bin', change: 'modified', restorable: false, reason: 'binary' },
        ],
      },
    ],
  },
];

const REVIEW: ReviewResult = {
  runs: [
    {
      runId: 'run_later',
      files: [
        {
          path: 'stats.py',
          change: 'modified',
          status: 'pending',
          diff: '',
          hunks: [
            { index: 0, oldStart: 1, oldLines: 1, newStart: 1, newLines: 2, header: '@@ -1,1 +1,2 @@', lines: ['-import math', '+import math', '+import statistics'], status: 'pending' },
            { index: 1, oldStart: 8, oldLines: 2, newStart: 9, newLines: 1, header: '@@ -8,2 +9,1 @@', lines: ['-    total = sum(values)', '-    return total / len(values)', '+    return statistics.fmean(values)'], status: 'pending' },
          ],
        },
        {
          path: 'tests/test_stats.py',
          change: 'created',
          status: 'kept',
          diff: '',
          hunks: [{ index: 0, oldStart: 0, oldLines: 0, newStart: 1, newLines: 2, header: '@@ -0,0 +1,2 @@', lines: ['+def test_mean():', '+    assert mean([1, 2]) == 1.5'], status: 'kept' }],
        },
      ],
    },
  ],
};

async function postedSince(page: Page, count: number): Promise<WebviewMessage[]> {
  return (await posted(page)).slice(count);
}

describe('checkpoint rows in headless Chromium', () => {
  let browser: Browser;
  let page: Page;
  let host: FakePanelHost;
  const problems: string[] = [];

  before(async () => {
    ({ browser, page, host } = await connectedPanel(problems, 900, events[0]?.sessionId ?? 's'));
    await host.feed(events);
    host.checkpoints.setRuns(RUNS);
    await host.flush();
    await page.locator('.item.checkpoint').first().waitFor();
  });

  after(async () => {
    await browser.close();
  });

  it('shows the run\'s changed files after its end, and a run without rows here last', async () => {
    const classes = await page.locator('.timeline > .item').evaluateAll((els: { className: string }[]) => els.map((el) => el.className));
    const end = classes.indexOf('item run-end completed');
    assert.equal(classes[end + 1], 'item checkpoint kind-run');
    assert.equal(classes.at(-1), 'item checkpoint kind-run');
    const first = page.locator('.item.checkpoint').first();
    assert.equal(await first.locator('.ckpt-title').textContent(), 'Changed 1 file');
    assert.deepEqual(await first.locator(':scope > .ckpt-files .ckpt-path').allTextContents(), ['calc.py']);
    assert.equal(await first.locator('.ckpt-undo').textContent(), 'Undo this run');
    assert.equal(await first.locator('.ckpt-undo').getAttribute('title'), 'Restore 5 files to how they were before this run (asks first)');
    const later = page.locator('.item.checkpoint').last();
    assert.deepEqual(await later.locator(':scope > .ckpt-files .change-letter').allTextContents(), ['M', 'A', 'D', 'M']);
    assert.equal(await later.locator(':scope > .ckpt-files .ckpt-reason').textContent(), 'binary');
    assert.equal(await later.locator(':scope > .ckpt-files .link-button').count(), 3, 'no Restore for the binary file');
  });

  it('posts Undo this run, a file\'s diff, Restore this file and Restore to here', async () => {
    const start = (await posted(page)).length;
    const first = page.locator('.item.checkpoint').first();
    await first.locator('.ckpt-undo').click();
    await first.locator(':scope > .ckpt-files a.ckpt-path').click();
    await first.locator(':scope > .ckpt-files .link-button').click();
    await first.locator('.ckpt-turns > summary').click();
    const restoreTurn = first.locator('.ckpt-restore-turn').first();
    assert.equal(await restoreTurn.textContent(), 'Restore to here');
    assert.equal(await restoreTurn.getAttribute('title'), 'Restore 5 files to how they were before turn 3 (asks first)');
    await restoreTurn.click();
    await first.locator('.ckpt-turn').nth(1).locator('a.ckpt-path').click();
    assert.deepEqual(await postedSince(page, start), [
      { type: 'checkpoint', action: 'undoRun', runId: RUN },
      { type: 'checkpoint', action: 'openDiff', runId: RUN, path: 'calc.py' },
      { type: 'checkpoint', action: 'restoreFile', runId: RUN, path: 'calc.py' },
      { type: 'checkpoint', action: 'restoreTurn', runId: RUN, turn: 3 },
      { type: 'checkpoint', action: 'openDiff', runId: RUN, turn: 5, path: 'calc.py' },
    ]);
  });

  it('lists a restore\'s conflicts with Compare, and the restore as a row to undo', async () => {
    host.checkpoints.setOutcome('run_later', 'the whole run', {
      restoreId: 'restore-9f3a',
      restored: [
        { path: 'stats.py', change: 'modified' },
        { path: 'tests/test_stats.py', change: 'deleted' },
      ],
      alreadyRestored: [],
      skipped: [{ path: 'data/sample.bin', reason: 'binary' }],
      conflicts: [{ path: 'legacy_stats.py', reason: 'you changed it after the run', diff: '', checkpointText: 'x\n', currentText: 'y\n' }],
    });
    host.checkpoints.setRuns([
      ...RUNS,
      {
        runId: 'restore-9f3a',
        kind: 'restore',
        title: 'Restore',
        startedAt: 1796208400,
        bytes: 300,
        pruned: false,
        restoredRun: 'run_later',
        files: [
          { path: 'stats.py', change: 'modified', restorable: true },
          { path: 'tests/test_stats.py', change: 'deleted', restorable: true },
        ],
        turns: [{ turn: 0, files: [] }],
      },
    ]);
    await host.flush();
    const later = page.locator('.item.checkpoint').nth(1);
    assert.equal(await later.locator('.ckpt-outcome-head').textContent(), 'Restored 2 files · 1 skipped · 1 conflict (the whole run)');
    assert.deepEqual(await later.locator('.ckpt-conflict').allTextContents(), ['legacy_stats.pyyou changed it after the runCompare']);
    const restore = page.locator('.item.checkpoint.kind-restore');
    assert.equal(await restore.locator('.ckpt-title').textContent(), 'Restored 2 files to before “Move the statistics into stats.py and test them”');
    assert.equal(await restore.locator('.ckpt-undo').textContent(), 'Undo this restore');
    assert.equal(await restore.locator('.ckpt-turns').count(), 0);
    const start = (await posted(page)).length;
    await later.locator('.ckpt-conflict .link-button').click();
    await restore.locator('.ckpt-undo').click();
    assert.deepEqual(await postedSince(page, start), [
      { type: 'checkpoint', action: 'compare', runId: 'run_later', path: 'legacy_stats.py' },
      { type: 'checkpoint', action: 'undoRun', runId: 'restore-9f3a' },
    ]);
  });

  it('titles a restore by the run it restored, and the undo of a restore as such', async () => {
    host.checkpoints.setRuns([
      ...RUNS,
      { runId: 'restore-9f3a', kind: 'restore', title: 'restore to before run run_later', startedAt: 1796208400, bytes: 300, pruned: false, restoredRun: 'run_later', files: [], turns: [] },
      { runId: 'restore-77c1', kind: 'restore', title: 'restore to before run restore-9f3a', startedAt: 1796208500, bytes: 300, pruned: false, restoredRun: 'restore-9f3a', files: [{ path: 'stats.py', change: 'modified', restorable: true }], turns: [] },
    ]);
    await host.flush();
    assert.deepEqual(await page.locator('.item.checkpoint.kind-restore .ckpt-title').allTextContents(), [
      'Restored 0 files to before “Move the statistics into stats.py and test them”',
      'Undid a restore: 1 file as before it',
    ]);
  });

  it('loaded nothing remote, broke no CSP rule, and looks right (chat-panel-checkpoints.png)', async () => {
    assert.deepEqual(problems, []);
    host.checkpoints.setRuns(RUNS);
    await host.flush();
    const overflow = await page.locator('.item.checkpoint').evaluateAll((els: { scrollWidth: number; clientWidth: number }[]) => els.filter((el) => el.scrollWidth > el.clientWidth + 1).length);
    assert.equal(overflow, 0, 'nothing wider than the panel');
    await page.locator('.item.checkpoint').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOT });
    assert.deepEqual(pngSize(SCREENSHOT), { width: 440, height: 900 });
  });

  it('shows a pruned run with why, and nothing to click that would restore it', async () => {
    host.checkpoints.setRuns([{ ...(RUNS[0] as CheckpointRunInfo), pruned: true, prunedReason: 'pruned: over checkpoints.maxMb (200 MB)' }, ...RUNS.slice(1)]);
    await host.flush();
    const first = page.locator('.item.checkpoint').first();
    assert.match((await first.getAttribute('class')) ?? '', /\bpruned\b/);
    assert.equal(await first.locator('.ckpt-pruned').textContent(), 'Cannot be restored: pruned: over checkpoints.maxMb (200 MB)');
    assert.equal(await first.locator('.ckpt-undo').isDisabled(), true);
    assert.equal(await first.locator('.ckpt-restore-turn').first().isDisabled(), true);
    const start = (await posted(page)).length;
    await first.locator('.ckpt-undo').click({ force: true });
    assert.deepEqual(await postedSince(page, start), []);
  });
});

describe('review rows in headless Chromium', () => {
  let browser: Browser;
  let page: Page;
  let host: FakePanelHost;
  const problems: string[] = [];

  before(async () => {
    ({ browser, page, host } = await connectedPanel(problems, 700, 's-review'));
    host.checkpoints.setRuns(RUNS.slice(1).map((run) => ({
      ...run,
      files: run.files.map((file) => ({ ...file, review: file.path === 'stats.py' ? 'pending' as const : file.path === 'tests/test_stats.py' ? 'kept' as const : undefined })),
    })));
    host.checkpoints.setReview(REVIEW);
    await host.flush();
    await page.locator('.ckpt-review').waitFor();
  });

  after(async () => {
    await browser.close();
  });

  it('shows the pending files with their hunks and the decided ones with their status', async () => {
    const review = page.locator('.ckpt-review');
    assert.equal(await review.locator('.ckpt-review-title').textContent(), 'Review: 1 file pending');
    assert.deepEqual(await review.locator('.review-file > summary .ckpt-path').allTextContents(), ['stats.py', 'tests/test_stats.py']);
    assert.deepEqual(await review.locator('.review-file > summary .badge').allTextContents(), ['pending', 'kept']);
    assert.equal(await review.locator('.review-file.status-kept button').count(), 0, 'nothing to decide on a kept file');
    await review.locator('.review-file').first().locator('summary .ckpt-path').click();
    assert.deepEqual(await review.locator('.review-file').first().locator('.hunk-head code').allTextContents(), ['@@ -1,1 +1,2 @@', '@@ -8,2 +9,1 @@']);
    assert.deepEqual(await review.locator('.review-file').first().locator('.hunk').first().locator('.diff-add').allTextContents(), ['+import math', '+import statistics']);
  });

  it('posts Keep all, Undo of a file and Keep / Undo of a hunk', async () => {
    const start = (await posted(page)).length;
    const review = page.locator('.ckpt-review');
    await review.locator('.ckpt-review-head .review-keep').click();
    await review.locator('.review-file').first().locator('summary .review-undo').click();
    await review.locator('.hunk').nth(1).locator('.review-undo').click();
    await review.locator('.hunk').nth(0).locator('.review-keep').click();
    assert.deepEqual(await postedSince(page, start), [
      { type: 'review', runId: 'run_later', decision: 'keep' },
      { type: 'review', runId: 'run_later', decision: 'undo', path: 'stats.py' },
      { type: 'review', runId: 'run_later', decision: 'undo', path: 'stats.py', hunk: 1 },
      { type: 'review', runId: 'run_later', decision: 'keep', path: 'stats.py', hunk: 0 },
    ]);
  });

  it('shows a refused undo with its reason, looks right (chat-panel-review.png)', async () => {
    host.checkpoints.setRefused('run_later', [{ path: 'stats.py', hunk: 1, reason: 'the person changed this region' }]);
    await host.flush();
    assert.equal(await page.locator('.ckpt-refused li').textContent(), 'Undo refused: stats.py (@@ -8,2 +9,1 @@): the person changed this region');
    assert.deepEqual(problems, []);
    const overflow = await page.locator('.item.checkpoint').evaluateAll((els: { scrollWidth: number; clientWidth: number }[]) => els.filter((el) => el.scrollWidth > el.clientWidth + 1).length);
    assert.equal(overflow, 0);
    await page.screenshot({ path: REVIEW_SCREENSHOT });
    assert.deepEqual(pngSize(REVIEW_SCREENSHOT), { width: 440, height: 700 });
  });
  it('counts a file with kept and undone hunks (mixed) as reviewed: nothing left to decide', async () => {
    const decided: ReviewResult = structuredClone(REVIEW);
    const stats = decided.runs[0]?.files[0];
    assert.ok(stats);
    stats.status = 'mixed';
    stats.hunks = stats.hunks.map((hunk, index) => ({ ...hunk, status: index === 0 ? 'undone' : 'kept' }));
    host.checkpoints.setReview(decided);
    await host.flush();
    const review = page.locator('.ckpt-review');
    assert.equal(await review.locator('.ckpt-review-title').textContent(), 'Reviewed');
    assert.deepEqual(await review.locator('.review-file > summary .badge').allTextContents(), ['mixed', 'kept']);
    assert.equal(await review.locator('button').count(), 0);
    assert.deepEqual(await review.locator('.hunk .badge').allTextContents(), ['undone', 'kept', 'kept']);
  });
  it('offers only Keep for a file whose earlier content was not stored, and says why', async () => {
    const review: ReviewResult = {
      runs: [{ runId: 'run_later', files: [{ path: 'data/sample.bin', change: 'modified', status: 'pending', diff: '', hunks: [], reason: 'binary' }] }],
    };
    host.checkpoints.setReview(review);
    await host.flush();
    const file = page.locator('.ckpt-review .review-file');
    assert.deepEqual(await file.locator('summary button').allTextContents(), ['Keep']);
    await file.locator('summary .ckpt-path').click();
    assert.equal(await file.locator('.ckpt-reason').textContent(), 'Cannot be undone: binary');
  });
});
