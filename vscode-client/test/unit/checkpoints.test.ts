import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { checkpointAction, reviewAction } from '../../src/panel/chatView';
import { CheckpointDocuments, CHECKPOINT_SCHEME, checkpointUri, contentParams } from '../../src/panel/checkpointDiff';
import { CheckpointModel, placeCheckpoints } from '../../src/panel/checkpoints';
import { ChatController } from '../../src/panel/controller';
import { hunkLines, locateHunk, REVIEW_HUNK_COMMAND, registerReviewLens } from '../../src/panel/reviewLens';
import type { CheckpointsResult, RestoreResult, ReviewHunk, ReviewResult } from '../../src/shared/protocol';
import type { CheckpointItem, Item } from '../../src/shared/viewModel';
import { envelope, FakeConnection, nextEvent } from '../fakes';
import { stub, stubEditor, type Uri, window as stubWindow, type CodeLens } from '../stub/vscode';

/** Two runs: r1 created, changed and deleted a file over two turns; r2 changed one of them again. */
function checkpoints(overrides: Partial<CheckpointsResult['runs'][number]> = {}): CheckpointsResult {
  return {
    sessionId: 's1',
    bytes: 2048,
    runs: [
      {
        runId: 'r2',
        kind: 'run',
        title: 'Rename the helper',
        startedAt: 1796212900,
        bytes: 512,
        pruned: false,
        files: [{ path: 'util.py', change: 'modified', restorable: true }],
        turns: [{ turn: 1, files: [{ path: 'util.py', change: 'modified', restorable: true }] }],
      },
      {
        runId: 'r1',
        kind: 'run',
        title: 'Fix calc.py',
        startedAt: 1796212800,
        bytes: 1536,
        pruned: false,
        files: [
          { path: 'calc.py', change: 'modified', restorable: true },
          { path: 'new_test.py', change: 'created', restorable: true },
          { path: 'old.py', change: 'deleted', restorable: false, reason: 'binary' },
        ],
        turns: [
          { turn: 2, files: [{ path: 'calc.py', change: 'modified', restorable: true }, { path: 'new_test.py', change: 'created', restorable: true }] },
          { turn: 4, files: [{ path: 'old.py', change: 'deleted', restorable: false, reason: 'binary' }] },
        ],
        ...overrides,
      },
    ],
  };
}

const REVIEW: ReviewResult = {
  runs: [
    {
      runId: 'r1',
      files: [
        {
          path: 'calc.py',
          change: 'modified',
          status: 'pending',
          diff: '--- a/calc.py\n+++ b/calc.py\n@@ -3,1 +3,2 @@\n-x = 1\n+x = 2\n+y = 3\n@@ -9,2 +10,0 @@\n-a\n-b\n',
          hunks: [
            { index: 0, oldStart: 3, oldLines: 1, newStart: 3, newLines: 2, header: '@@ -3,1 +3,2 @@', lines: ['-x = 1', '+x = 2', '+y = 3'], status: 'pending' },
            { index: 1, oldStart: 9, oldLines: 2, newStart: 9, newLines: 0, header: '@@ -9,2 +9,0 @@', lines: ['-a', '-b'], status: 'pending' },
            { index: 2, oldStart: 20, oldLines: 1, newStart: 19, newLines: 1, header: '@@ -20,1 +19,1 @@', lines: ['-q', '+r'], status: 'kept' },
          ],
        },
      ],
    },
  ],
};

function restoreResult(overrides: Partial<RestoreResult> = {}): RestoreResult {
  return {
    restoreId: 'restore-ab12',
    restored: [{ path: 'calc.py', change: 'modified' }, { path: 'new_test.py', change: 'deleted' }],
    alreadyRestored: [],
    skipped: [{ path: 'old.py', reason: 'binary' }],
    conflicts: [],
    ...overrides,
  };
}

function checkpointItems(items: readonly Item[]): CheckpointItem[] {
  return items.filter((item): item is CheckpointItem => item.kind === 'checkpoint');
}

/** A controller showing session s1 after run r1 ended (its rows in the timeline), checkpoints loaded. */
async function shown(answer: CheckpointsResult = checkpoints(), review: ReviewResult = { runs: [] }): Promise<{ connection: FakeConnection; controller: ChatController }> {
  const connection = new FakeConnection();
  connection.responders.set('rein/sessions', () => ({ sessions: [] }));
  connection.responders.set('rein/checkpoints', () => answer);
  connection.responders.set('rein/review', () => review);
  const controller = new ChatController(connection, undefined, new CheckpointDocuments(connection));
  const loaded = nextEvent(controller.checkpoints.onDidChange, () => controller.checkpoints.model.runIds.length > 0);
  connection.emit(envelope(1, { type: 'agent_start' }));
  connection.emit(envelope(2, { type: 'run_start', run_id: 'r1', prompt: 'Fix calc.py' }));
  connection.emit(envelope(3, { type: 'run_end', run_id: 'r1', status: 'completed', turns: 4, usage: {} }));
  await loaded;
  await controller.checkpoints.refresh();
  return { connection, controller };
}

beforeEach(() => stub.reset());

describe('CheckpointModel', { timeout: 10_000 }, () => {
  it('orders runs oldest first and counts what a restore puts back: the run from that turn on and every later run', () => {
    const model = new CheckpointModel();
    model.setRuns(checkpoints().runs);
    assert.deepEqual(model.runIds, ['r1', 'r2']);
    assert.deepEqual(model.restorePaths('r1'), ['calc.py', 'new_test.py', 'old.py', 'util.py']);
    assert.deepEqual(model.restorePaths('r1', 4), ['old.py', 'util.py']);
    assert.deepEqual(model.restorePaths('r2'), ['util.py']);
    assert.deepEqual(model.restorePaths('nope'), []);
  });

  it('counts both paths of a rename', () => {
    const model = new CheckpointModel();
    model.setRuns(checkpoints({ files: [{ path: 'b.py', change: 'renamed', renamedFrom: 'a.py', restorable: true }], turns: [] }).runs.slice(1));
    assert.deepEqual(model.restorePaths('r1'), ['a.py', 'b.py']);
  });

  it('keeps an item (and its rev) until something in it changes', () => {
    const model = new CheckpointModel();
    model.setRuns(checkpoints().runs);
    const [first] = model.items();
    assert.equal(model.items()[0], first);
    model.setBusy('r1', 'Undoing the run…');
    const [busy] = model.items();
    assert.notEqual(busy?.rev, first?.rev);
    assert.equal(busy?.busy, 'Undoing the run…');
    assert.equal(busy?.undoCount, 4);
    assert.deepEqual(busy?.turnCounts, { 2: 4, 4: 2 });
    assert.equal(model.items()[1]?.rev, model.items()[1]?.rev, 'r2 unchanged');
  });

  it('lists the pending hunks of a path (not the kept ones, not other paths)', () => {
    const model = new CheckpointModel();
    model.setReview(REVIEW);
    assert.deepEqual(model.pendingHunks('calc.py').map((h) => [h.runId, h.hunk.index]), [['r1', 0], ['r1', 1]]);
    assert.deepEqual(model.pendingHunks('other.py'), []);
    assert.deepEqual([...model.pendingPaths()], ['calc.py']);
  });
});

describe('placeCheckpoints', { timeout: 10_000 }, () => {
  const row = (id: string, runId: string | undefined): Item => ({ id, rev: 1, runId, kind: 'notice', level: 'info', text: id });
  const model = new CheckpointModel();
  model.setRuns(checkpoints().runs);
  const [r1, r2] = model.items();

  it('puts each run after its last row, and runs without rows at the end, oldest first', () => {
    const placed = placeCheckpoints([row('a', 'r1'), row('b', 'r1'), row('c', 'r3')], model.items());
    assert.deepEqual(placed.map((item) => item.id), ['a', 'b', r1?.id, 'c', r2?.id]);
  });

  it('leaves the timeline alone without checkpoints', () => {
    assert.deepEqual(placeCheckpoints([row('a', 'r1')], []).map((item) => item.id), ['a']);
  });
});

describe('the checkpoint rows of the panel', { timeout: 10_000 }, () => {
  it('loads rein/checkpoints and rein/review when a run ends and shows the run after its end', async () => {
    const { connection, controller } = await shown();
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/checkpoints')?.params, { sessionId: 's1' });
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/review')?.params, { sessionId: 's1' });
    const items = controller.view().items;
    const endAt = items.findIndex((item) => item.kind === 'run_end');
    assert.equal(items[endAt + 1]?.id, 'ckpt-r1');
    assert.equal(items.at(-1)?.id, 'ckpt-r2', 'a run with no rows here goes last');
  });

  for (const type of ['files_restored', 'checkpoint_dropped', 'review_pending', 'review_decided']) {
    it(`loads them again after ${type}, in seq order (no gap reload)`, async () => {
      const { connection } = await shown();
      const before = connection.methods().filter((m) => m === 'rein/checkpoints').length;
      const again = connection.nextSent('rein/checkpoints');
      connection.emit(envelope(4, { type, run_id: 'r1', session_id: 's1' }));
      await again;
      assert.equal(connection.methods().filter((m) => m === 'rein/checkpoints').length, before + 1);
      assert.ok(!connection.methods().includes('rein/session'), 'no reload: the event counted in seq');
    });
  }

  it('loads another session\'s checkpoints when the person switches, dropping the old ones', async () => {
    const { connection, controller } = await shown();
    connection.responders.set('rein/session', () => ({ id: 's2', status: 'idle', messages: [] }));
    connection.responders.set('rein/checkpoints', (params) => ({ sessionId: params.sessionId, bytes: 0, runs: [] }));
    await controller.selectSession('s2');
    await controller.checkpoints.refresh();
    assert.deepEqual(connection.requests.filter((r) => r.method === 'rein/checkpoints').at(-1)?.params, { sessionId: 's2' });
    assert.deepEqual(checkpointItems(controller.view().items), []);
  });

  it('says so when the answer is not a list of runs (nothing drawn from it)', async () => {
    const connection = new FakeConnection();
    connection.responders.set('rein/checkpoints', () => ({ sessionId: 's1' }));
    const controller = new ChatController(connection, undefined);
    connection.emit(envelope(1, { type: 'run_end', run_id: 'r1', status: 'completed', turns: 1, usage: {} }));
    await controller.checkpoints.refresh();
    const notices = controller.view().items.filter((item) => item.kind === 'notice');
    assert.deepEqual(notices.map((n) => n.kind === 'notice' && n.text), ['Could not load the checkpoints: the server answered without a list of runs.']);
    assert.deepEqual(checkpointItems(controller.view().items), []);
  });

  it('says so once when the checkpoints cannot be loaded, and stays quiet for a server without them', async () => {
    const connection = new FakeConnection();
    connection.responders.set('rein/sessions', () => ({ sessions: [] }));
    connection.responders.set('rein/checkpoints', () => {
      throw new Error('database is locked');
    });
    const controller = new ChatController(connection, undefined);
    connection.emit(envelope(1, { type: 'run_end', run_id: 'r1', status: 'completed', turns: 1, usage: {} }));
    await controller.checkpoints.refresh();
    await controller.checkpoints.refresh();
    const notices = controller.view().items.filter((item) => item.kind === 'notice');
    assert.deepEqual(notices.map((n) => n.kind === 'notice' && n.text), ['Could not load the checkpoints: database is locked']);

    const old = new FakeConnection();
    old.responders.set('rein/checkpoints', () => {
      throw Object.assign(new Error('Unhandled method rein/checkpoints'), { code: -32601 });
    });
    const quiet = new ChatController(old, undefined);
    old.emit(envelope(1, { type: 'run_end', run_id: 'r1', status: 'completed', turns: 1, usage: {} }));
    await quiet.checkpoints.refresh();
    assert.deepEqual(quiet.view().items.filter((item) => item.kind === 'notice'), []);
  });
});

describe('undo and restore from the panel', { timeout: 10_000 }, () => {
  it('asks with a modal naming the number of files, and does nothing when the person cancels', async () => {
    const { connection, controller } = await shown();
    stub.answers.push(undefined);
    await checkpointAction(controller, { type: 'checkpoint', action: 'undoRun', runId: 'r1' });
    const [call] = stub.calls;
    assert.equal(call?.message, 'Undo "Fix calc.py"? 4 files will be put back to how they were before it.');
    assert.deepEqual(call?.options, {
      modal: true,
      detail:
        'Files you changed since are not overwritten: they are listed as conflicts to compare. The restore is itself a checkpoint you can undo. Changes of later runs to these files are undone too.',
    });
    assert.deepEqual(call?.items, ['Undo Run']);
    assert.ok(!connection.methods().includes('rein/restore'));
  });

  it('undoes the run with rein/restore and shows what was restored and skipped', async () => {
    const { connection, controller } = await shown();
    connection.responders.set('rein/restore', () => restoreResult());
    stub.answers.push('Undo Run');
    await checkpointAction(controller, { type: 'checkpoint', action: 'undoRun', runId: 'r1' });
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/restore')?.params, { sessionId: 's1', runId: 'r1' });
    const item = checkpointItems(controller.view().items).find((i) => i.runId === 'r1');
    assert.deepEqual(item?.outcome, {
      scope: 'the whole run',
      restoreId: 'restore-ab12',
      restored: 2,
      alreadyRestored: 0,
      skipped: [{ path: 'old.py', reason: 'binary' }],
      conflicts: [],
    });
    assert.equal(item?.busy, undefined);
    assert.deepEqual(stub.calls.map((c) => c.kind), ['warning'], 'the modal only: the row says the rest');
  });

  it('restores to before a turn and one file, each asked first', async () => {
    const { connection, controller } = await shown();
    connection.responders.set('rein/restore', () => restoreResult());
    stub.answers.push('Restore');
    await checkpointAction(controller, { type: 'checkpoint', action: 'restoreTurn', runId: 'r1', turn: 4 });
    stub.answers.push('Restore');
    await checkpointAction(controller, { type: 'checkpoint', action: 'restoreFile', runId: 'r1', path: 'calc.py' });
    assert.deepEqual(connection.requests.filter((r) => r.method === 'rein/restore').map((r) => r.params), [
      { sessionId: 's1', runId: 'r1', turn: 4 },
      { sessionId: 's1', runId: 'r1', paths: ['calc.py'] },
    ]);
    const questions = stub.calls.filter((c) => c.items.length > 0).map((c) => c.message);
    assert.deepEqual(questions, [
      'Restore 2 files to how they were before turn 4 of "Fix calc.py"?',
      'Restore calc.py (1 file) to how it was before "Fix calc.py"?',
    ]);
  });

  it('lists conflicts (the person\'s file is not written) and Compare opens the checkpoint against the file', async () => {
    const { connection, controller } = await shown();
    connection.responders.set('rein/restore', () =>
      restoreResult({
        restored: [{ path: 'new_test.py', change: 'deleted' }],
        conflicts: [{ path: 'calc.py', reason: 'you changed it after the run', diff: '@@ -1 +1 @@\n-a\n+b\n', checkpointText: 'x = 2\n', currentText: 'x = 2  # mine\n' }],
      }),
    );
    stub.answers.push('Undo Run');
    await checkpointAction(controller, { type: 'checkpoint', action: 'undoRun', runId: 'r1' });
    const item = checkpointItems(controller.view().items).find((i) => i.runId === 'r1');
    assert.deepEqual(item?.outcome?.conflicts, [{ path: 'calc.py', reason: 'you changed it after the run' }]);

    await checkpointAction(controller, { type: 'checkpoint', action: 'compare', runId: 'r1', path: 'calc.py' });
    const diff = stub.commands.find((c) => c.command === 'vscode.diff');
    const [left, right, title] = diff?.args as [Uri, Uri, string];
    assert.equal(left.scheme, CHECKPOINT_SCHEME);
    assert.equal(right.toString(), 'file:///work/project/calc.py', 'the person\'s own file, as it is');
    assert.equal(title, 'calc.py (as Rein left it ↔ yours)');
    const documents = new CheckpointDocuments(connection);
    assert.equal(await documents.provideTextDocumentContent(left as never), '(this comparison is no longer available: open it again from the Rein panel)');
  });

  it('refuses a pruned run without asking, and the row says why', async () => {
    const { connection, controller } = await shown(checkpoints({ pruned: true, prunedReason: 'over checkpoints.maxMb (200 MB)' }));
    await checkpointAction(controller, { type: 'checkpoint', action: 'undoRun', runId: 'r1' });
    assert.ok(!connection.methods().includes('rein/restore'));
    assert.deepEqual(stub.calls.map((c) => c.message), ['Rein: this run cannot be restored: over checkpoints.maxMb (200 MB).']);
    assert.equal(checkpointItems(controller.view().items).find((i) => i.runId === 'r1')?.run.prunedReason, 'over checkpoints.maxMb (200 MB)');
  });

  it('shows a failed restore on the row and as an error', async () => {
    const { connection, controller } = await shown();
    connection.responders.set('rein/restore', () => {
      throw new Error('rein/restore: path outside the workspace: ../x');
    });
    stub.answers.push('Undo Run');
    await checkpointAction(controller, { type: 'checkpoint', action: 'undoRun', runId: 'r1' });
    assert.equal(checkpointItems(controller.view().items).find((i) => i.runId === 'r1')?.error, 'rein/restore: path outside the workspace: ../x');
    assert.equal(stub.calls.at(-1)?.message, 'Rein: the restore failed: rein/restore: path outside the workspace: ../x');
  });
});

describe('the diff of a changed file', { timeout: 10_000 }, () => {
  it('fetches the version before the run (or turn) and opens it against the file now', async () => {
    const { connection, controller } = await shown();
    connection.responders.set('rein/checkpointContent', () => ({ path: 'calc.py', state: 'text', text: 'x = 1\n' }));
    stub.existing.add('/work/project/calc.py');
    await checkpointAction(controller, { type: 'checkpoint', action: 'openDiff', runId: 'r1', path: 'calc.py', turn: 2 });
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/checkpointContent')?.params, {
      sessionId: 's1',
      runId: 'r1',
      path: 'calc.py',
      side: 'before',
      turn: 2,
    });
    const [left, right, title] = stub.commands.find((c) => c.command === 'vscode.diff')?.args as [Uri, Uri, string];
    assert.deepEqual(contentParams(left as never), { sessionId: 's1', runId: 'r1', path: 'calc.py', side: 'before', turn: 2 });
    assert.equal(right.toString(), 'file:///work/project/calc.py');
    assert.equal(title, 'calc.py (before turn 2 of "Fix calc.py" ↔ now)');
  });

  it('compares a deleted file with an empty side, and says why when the version was not stored', async () => {
    const { connection, controller } = await shown();
    connection.responders.set('rein/checkpointContent', (params) =>
      params.path === 'old.py' ? { path: 'old.py', state: 'unstored', reason: 'binary' } : { path: 'calc.py', state: 'text', text: 'x = 1\n' },
    );
    await checkpointAction(controller, { type: 'checkpoint', action: 'openDiff', runId: 'r1', path: 'calc.py' });
    const [, right] = stub.commands.find((c) => c.command === 'vscode.diff')?.args as [Uri, Uri];
    assert.equal(right.scheme, CHECKPOINT_SCHEME);
    const documents = new CheckpointDocuments(connection);
    assert.equal(await documents.provideTextDocumentContent(right as never), '');

    await checkpointAction(controller, { type: 'checkpoint', action: 'openDiff', runId: 'r1', path: 'old.py' });
    assert.equal(stub.commands.filter((c) => c.command === 'vscode.diff').length, 1, 'no second diff');
    assert.equal(stub.calls.at(-1)?.message, 'Rein: no diff of old.py: binary');
  });

  it('serves a checkpoint document reopened later from the server', async () => {
    const connection = new FakeConnection();
    connection.responders.set('rein/checkpointContent', () => ({ path: 'calc.py', state: 'text', text: 'before\n' }));
    const documents = new CheckpointDocuments(connection);
    const uri = checkpointUri({ sessionId: 's1', runId: 'r1', path: 'src/calc.py', side: 'before' });
    assert.equal(await documents.provideTextDocumentContent(uri as never), 'before\n');
    assert.deepEqual(connection.requests[0]?.params, { sessionId: 's1', runId: 'r1', path: 'src/calc.py', side: 'before' });
  });
});

describe('review: Keep and Undo', { timeout: 10_000 }, () => {
  it('sends the panel\'s decision for the run, a file or a hunk', async () => {
    const { connection, controller } = await shown(checkpoints(), REVIEW);
    connection.responders.set('rein/reviewDecide', () => ({ runId: 'r1', decided: [], refused: [] }));
    await reviewAction(controller, { type: 'review', runId: 'r1', decision: 'keep' });
    await reviewAction(controller, { type: 'review', runId: 'r1', decision: 'undo', path: 'calc.py' });
    await reviewAction(controller, { type: 'review', runId: 'r1', decision: 'undo', path: 'calc.py', hunk: 1 });
    assert.deepEqual(connection.requests.filter((r) => r.method === 'rein/reviewDecide').map((r) => r.params), [
      { sessionId: 's1', runId: 'r1', decision: 'keep' },
      { sessionId: 's1', runId: 'r1', decision: 'undo', path: 'calc.py' },
      { sessionId: 's1', runId: 'r1', decision: 'undo', path: 'calc.py', hunk: 1 },
    ]);
    const item = checkpointItems(controller.view().items).find((i) => i.runId === 'r1');
    assert.equal(item?.review?.[0]?.path, 'calc.py');
  });

  it('shows a refused undo with its reason', async () => {
    const { connection, controller } = await shown(checkpoints(), REVIEW);
    connection.responders.set('rein/reviewDecide', () => ({
      runId: 'r1',
      decided: [],
      refused: [{ path: 'calc.py', hunk: 0, reason: 'the person changed this region' }],
    }));
    await controller.checkpoints.decide('r1', 'undo', 'calc.py', 0);
    const item = checkpointItems(controller.view().items).find((i) => i.runId === 'r1');
    assert.deepEqual(item?.refused, [{ path: 'calc.py', hunk: 0, header: '@@ -3,1 +3,2 @@', reason: 'the person changed this region' }]);
    assert.equal(stub.calls.at(-1)?.message, 'Rein: could not undo calc.py (@@ -3,1 +3,2 @@): the person changed this region');
  });
});

describe('review in the editor', { timeout: 10_000 }, () => {
  it('puts the lines of a hunk in the file (a removal: where it was)', () => {
    assert.deepEqual(hunkLines({ newStart: 3, newLines: 2 }, 40), { first: 2, last: 3, empty: false });
    assert.deepEqual(hunkLines({ newStart: 9, newLines: 0 }, 40), { first: 9, last: 9, empty: true });
    assert.deepEqual(hunkLines({ newStart: 39, newLines: 5 }, 40), { first: 38, last: 39, empty: false });
    assert.deepEqual(hunkLines({ newStart: 0, newLines: 0 }, 0), { first: 0, last: 0, empty: true });
  });

  it('finds a hunk in the file now: moved by an undone hunk before it, or by lines the person added', () => {
    const hunk = (index: number, newStart: number, oldLines: number, lines: string[], status: ReviewHunk['status']): ReviewHunk => ({
      index,
      oldStart: newStart,
      oldLines,
      newStart,
      newLines: lines.filter((l) => l.startsWith('+')).length,
      header: '',
      lines,
      status,
    });
    // The agent replaced 1 line at line 2 with 3, and line 10 with 1.
    const first = hunk(0, 2, 1, ['-a', '+A1', '+A2', '+A3'], 'undone');
    const second = hunk(1, 10, 1, ['-b', '+B'], 'pending');
    // First undone: 'a' is back in place of A1..A3, so B is 2 lines up (line 8).
    const now = ['l1', 'a', 'l3', 'l4', 'l5', 'l6', 'l7', 'B', 'l9', 'l10'];
    assert.deepEqual(locateHunk(second, [first, second], now), { first: 7, last: 7, empty: false });
    // The person added a line at the top since: found where it is.
    assert.deepEqual(locateHunk(second, [first, second], ['new', ...now]), { first: 8, last: 8, empty: false });
    // Its lines are gone (changed by the person): the shifted place.
    assert.deepEqual(locateHunk(second, [first, second], now.map((l) => (l === 'B' ? 'mine' : l))), { first: 7, last: 7, empty: false });
  });

  it('shows Keep | Undo on each pending hunk and decorates its lines; both go when the hunk is decided', async () => {
    const { connection, controller } = await shown(checkpoints(), REVIEW);
    // calc.py as the agent left it: lines 3-4 are hunk 0's, a removal after line 9 is hunk 1.
    const text = Array.from({ length: 40 }, (_, i) => (i === 2 ? 'x = 2' : i === 3 ? 'y = 3' : `line ${i + 1}`)).join('\n');
    const editor = stubEditor('file:///work/project/calc.py', text);
    stub.registered.clear();
    const context = { subscriptions: [] as { dispose(): unknown }[] };
    const lens = registerReviewLens(context as never, controller.checkpoints);
    const document = editor.document;
    const lenses = lens.provideCodeLenses(document as never) as unknown as CodeLens[];
    assert.deepEqual(
      lenses.map((l) => [l.range.start.line, l.command?.title, l.command?.command, l.command?.arguments]),
      [
        [2, '$(check) Keep', REVIEW_HUNK_COMMAND, ['r1', 'calc.py', 0, 'keep']],
        [2, '$(discard) Undo', REVIEW_HUNK_COMMAND, ['r1', 'calc.py', 0, 'undo']],
        [9, '$(check) Keep', REVIEW_HUNK_COMMAND, ['r1', 'calc.py', 1, 'keep']],
        [9, '$(discard) Undo', REVIEW_HUNK_COMMAND, ['r1', 'calc.py', 1, 'undo']],
      ],
    );
    assert.deepEqual(lens.provideCodeLenses(stubEditor('file:///work/project/util.py', 'a\nb').document as never), []);

    stubWindow.visibleTextEditors = [editor];
    stub.fireVisibleEditorsChanged();
    const ranges = [...editor.decorations.values()][0];
    assert.deepEqual(ranges?.map((r) => [r.start.line, r.end.line]), [[2, 3]], 'the added lines only');

    // The person adds two lines at the top: the highlight follows the agent's lines.
    const typed = stubEditor('file:///work/project/calc.py', `# one\n# two\n${text}`);
    stubWindow.visibleTextEditors = [typed];
    stub.fireTextDocumentChanged(typed.document);
    assert.deepEqual([...typed.decorations.values()][0]?.map((r) => [r.start.line, r.end.line]), [[4, 5]]);
    stubWindow.visibleTextEditors = [editor];

    // The lens's Undo: rein/reviewDecide; the server's review then has the hunk undone.
    connection.responders.set('rein/reviewDecide', () => ({ runId: 'r1', decided: [{ path: 'calc.py', hunk: 0, status: 'undone' }], refused: [] }));
    const decided: ReviewResult = structuredClone(REVIEW);
    for (const hunk of decided.runs[0]?.files[0]?.hunks ?? []) {
      hunk.status = 'undone';
    }
    (decided.runs[0]?.files[0] ?? { status: '' }).status = 'undone';
    connection.responders.set('rein/review', () => decided);
    const lensesChanged = nextEvent(lens.onDidChangeCodeLenses);
    await stub.registered.get(REVIEW_HUNK_COMMAND)?.('r1', 'calc.py', 0, 'undo');
    await controller.checkpoints.refresh();
    await lensesChanged;
    assert.deepEqual(connection.requests.filter((r) => r.method === 'rein/reviewDecide').map((r) => r.params), [
      { sessionId: 's1', runId: 'r1', decision: 'undo', path: 'calc.py', hunk: 0 },
    ]);
    assert.deepEqual(lens.provideCodeLenses(document as never), []);
    assert.deepEqual([...editor.decorations.values()][0], []);
    for (const subscription of context.subscriptions) {
      subscription.dispose();
    }
  });
});
