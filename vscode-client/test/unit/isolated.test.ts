import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { ChatController } from '../../src/panel/controller';
import { appliedText, IsolatedRuns, verdictText } from '../../src/panel/isolated';
import { isolatedRows } from '../../src/shared/isolatedView';
import { editorCoverage, setupProblems, setupView } from '../../src/shared/setupView';
import type { IsolatedSession, PromptResult } from '../../src/shared/protocol';
import { envelope, FakeConnection, nextEvent } from '../fakes';
import { stub } from '../stub/vscode';

function copy(sessionId: string, extra: Partial<IsolatedSession> = {}): IsolatedSession {
  return { sessionId, status: 'running', verdict: '', worktree: `/s/${sessionId}`, kind: 'copy', created: 1, live: true, changed: [], ...extra };
}

function setup(sessions: IsolatedSession[]): { connection: FakeConnection; controller: ChatController; runs: IsolatedRuns } {
  const connection = new FakeConnection();
  connection.responders.set('rein/sessions', () => ({ sessions: [] }));
  connection.responders.set('rein/checkpoints', (params) => ({ sessionId: params.sessionId, bytes: 0, runs: [] }));
  connection.responders.set('rein/review', () => ({ runs: [] }));
  connection.responders.set('rein/isolatedSessions', () => ({ sessions }));
  const controller = new ChatController(connection, undefined);
  return { connection, controller, runs: new IsolatedRuns(connection, controller) };
}

describe('the isolated runs section', () => {
  beforeEach(() => stub.reset());

  it('makes a row per copy: state, verdict and changed files; the buttons its state allows', () => {
    const rows = isolatedRows(
      [
        copy('a', { title: 'add validation', runStatus: 'running', changed: ['app.py'] }),
        copy('b', { title: 'changelog', runStatus: 'failed', kind: 'git' }),
        copy('c', { live: false, status: 'finished', verdict: 'completed', changed: ['x.py', 'y.py'] }),
        copy('d', { runStatus: 'idle', changed: [], changedError: 'the copy is gone' }),
      ],
      'b',
    );
    assert.deepEqual(
      rows.map((r) => [r.sessionId, r.title, r.state, r.verdict, r.changed, r.shown, r.actions]),
      [
        ['a', 'add validation', 'running', '', ['app.py'], false, ['open', 'abort']],
        ['b', 'changelog', 'failed', 'failed', [], true, ['review', 'keep', 'discard', 'branch']],
        // Kept for `rein apply` (a finished rein run --isolated): its stored verdict, nothing to do here.
        ['c', 'c', 'finished', 'completed', ['x.py', 'y.py'], false, []],
        ['d', 'd', 'idle', '', [], false, ['open', 'review', 'keep', 'discard']],
      ],
    );
    assert.equal(rows[3]?.changedError, 'the copy is gone');
  });

  it('starts an isolated session and shows it: the next prompt runs there; its events never pull the panel away', async () => {
    const { connection, controller, runs } = setup([copy('iso1', { runStatus: 'idle' })]);
    connection.responders.set('rein/newSession', () => ({ sessionId: 'iso1', isolated: true, worktree: '/s/iso1' }));
    const shown = nextEvent(runs.onDidChange, (rows) => rows.length > 0);
    assert.equal(await runs.start(), 'iso1');
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/newSession')?.params, { isolated: true, title: 'Isolated session' });
    assert.equal(controller.sessionId, 'iso1');
    assert.deepEqual((await shown).map((r) => [r.sessionId, r.shown, r.actions]), [['iso1', true, ['review', 'keep', 'discard']]]);

    let resolvePrompt: (result: PromptResult) => void = () => undefined;
    connection.responders.set('rein/prompt', () => new Promise<PromptResult>((resolve) => (resolvePrompt = resolve)));
    const sent = controller.send('add NOTES.md');
    assert.equal(connection.requests.find((r) => r.method === 'rein/prompt')?.params.sessionId, 'iso1');
    // Its run goes on while the person opens another session; its events stay in the background.
    controller.newSession();
    assert.equal(controller.sessionId, null);
    const listed = connection.nextSent('rein/isolatedSessions');
    connection.emit(envelope(1, { type: 'run_end', run_id: 'r1', status: 'completed' }, 'iso1'));
    await listed; // the section asks again when one of its runs ends
    assert.equal(controller.sessionId, null, 'the panel did not follow the isolated run');
    resolvePrompt({ sessionId: 'iso1', runId: 'r1', status: 'completed', text: '', turns: 1, repairAttempts: 0, generations: 1, usage: {} });
    await sent;
    assert.equal(controller.sessionId, null, "the isolated run's answer is not the new session's");
    assert.equal(controller.running, false);
    runs.dispose();
    controller.dispose();
  });

  it('keeps, discards after the modal, keeps as a branch by name; says conflicts and the verdict when sent', async () => {
    const { connection, controller, runs } = setup([copy('iso1', { runStatus: 'completed', kind: 'git' })]);
    const answers = [
      { applied: ['a.py'], hunksApplied: 1, conflicts: [{ path: 'b.py', reason: 'you changed these lines' }] },
      { applied: [], conflicts: [], discarded: true },
      { applied: [], conflicts: [], branch: 'try-it', commit: '0123456789abcdef' },
    ];
    connection.responders.set('rein/applyIsolated', () => answers.shift());
    await runs.refresh();
    await runs.act('iso1', 'keep');
    stub.answers = ['Discard'];
    await runs.act('iso1', 'discard');
    stub.answers = ['try-it'];
    await runs.act('iso1', 'branch');
    const applied = connection.requests.filter((r) => r.method === 'rein/applyIsolated').map((r) => r.params);
    assert.deepEqual(applied, [
      { sessionId: 'iso1', action: 'keep' },
      { sessionId: 'iso1', action: 'discard' },
      { sessionId: 'iso1', action: 'branch', branch: 'try-it' },
    ]);
    assert.deepEqual(
      stub.calls.map((c) => [c.kind, c.message]),
      [
        ['warning', 'Rein: applied a.py; not applied, they conflict with your folder: b.py (you changed these lines).'],
        ['warning', 'Discard the isolated run’s changes? Its copy of the folder is removed.'],
        ['info', 'Rein: the isolated run was discarded.'],
        ['input', 'The new branch’s name (nothing is applied to your folder)'],
        ['info', 'Rein: the isolated run was kept as branch try-it (0123456789ab).'],
      ],
    );
    // A discard not confirmed sends nothing.
    stub.answers = [undefined];
    await runs.act('iso1', 'discard');
    assert.equal(connection.requests.filter((r) => r.method === 'rein/applyIsolated').length, 3);
    // The folder's gates on the applied result, as rein/applyIsolated sends them; none: not mentioned.
    assert.equal(
      appliedText('keep', {
        applied: ['a.py'],
        conflicts: [],
        gates: { status: 'blocked', blockers: ['caller.py:3: Expected 1 positional argument', 'b.py:1: x'], reason: '' },
      }),
      'Rein: the isolated run was kept: a.py. Your folder’s gates: blocked (2): caller.py:3: Expected 1 positional argument; b.py:1: x.',
    );
    assert.equal(verdictText({ status: 'passed', blockers: [], reason: '' }), 'passed');
    assert.equal(verdictText({ status: 'unverified', blockers: [], reason: 'basedpyright did not answer' }), 'unverified (basedpyright did not answer)');
    assert.equal(verdictText({ status: 'blocked', blockers: ['1', '2', '3', '4', '5'], reason: '' }), 'blocked (5): 1; 2; 3 and 2 more');
    assert.equal(verdictText(null), '');
    assert.equal(appliedText('discard', { applied: [], conflicts: [], discarded: true, gates: null }), 'Rein: the isolated run was discarded.');
    runs.dispose();
    controller.dispose();
  });

  it('reviews the hunks, keeps some, and applies only those into the shown session; a conflict is never kept', async () => {
    const { connection, controller, runs } = setup([copy('iso1', { runStatus: 'completed', kind: 'git', changed: ['app.py'] })]);
    const conflict = { id: 'app.py#2', path: 'app.py', base: '    return 3\n', ours: '    return 300\n', theirs: '    return 30\n', reason: 'the folder changed these lines since the run started' };
    connection.responders.set('rein/isolatedHunks', () => ({
      sessionId: 'iso1',
      files: [
        {
          path: 'app.py',
          change: 'modified',
          notes: [],
          hunks: [
            { id: 'app.py#0', index: 0, header: '@@ -2,1 +2,1 @@', lines: ['-    return 1', '+    return 10'], status: 'clean' },
            { id: 'app.py#1', index: 1, header: '@@ -6,1 +6,1 @@', lines: ['-    return 2', '+    return 20'], status: 'clean' },
            { id: 'app.py#2', index: 2, header: '@@ -10,1 +10,1 @@', lines: ['-    return 3', '+    return 30'], status: 'conflict', conflict },
          ],
        },
      ],
    }));
    connection.responders.set('rein/applyIsolated', () => ({
      applied: ['app.py'], hunksApplied: 1, conflicts: [conflict], leftAside: ['app.py#1', 'app.py#2'], sessionId: 'mine', runId: 'run_1', gates: null,
    }));
    await runs.refresh();
    controller.openNew('mine'); // the person's chat session is shown
    await runs.act('iso1', 'review');
    let [row] = runs.rows();
    assert.deepEqual(row?.actions, ['open', 'review', 'applyKept', 'keep', 'discard', 'branch']);
    assert.deepEqual(row?.review?.files[0]?.hunks.map((h) => [h.id, h.status, h.kept]), [
      ['app.py#0', 'clean', true],
      ['app.py#1', 'clean', true],
      ['app.py#2', 'conflict', false],
    ]);
    assert.deepEqual([row?.review?.files[0]?.hunks[2]?.ours, row?.review?.files[0]?.hunks[2]?.theirs], ['    return 300\n', '    return 30\n']);
    runs.decide('iso1', 'app.py#1', false);
    runs.decide('iso1', 'app.py#2', true); // a conflict cannot be kept
    [row] = runs.rows();
    assert.deepEqual([row?.review?.kept, row?.review?.conflicts], [1, 1]);
    const refreshed = connection.nextSent('rein/checkpoints');
    await runs.act('iso1', 'applyKept');
    assert.deepEqual(connection.requests.filter((r) => r.method === 'rein/applyIsolated').map((r) => r.params), [
      { sessionId: 'iso1', action: 'keep', hunks: ['app.py#0'], intoSessionId: 'mine' },
    ]);
    await refreshed; // the shown session's timeline gains the apply's run
    assert.deepEqual(stub.calls.map((c) => [c.kind, c.message]), [
      ['warning', 'Rein: applied app.py; not applied, they conflict with your folder: app.py (the folder changed these lines since the run started). Left aside, not kept: app.py#1.'],
    ]);
    assert.equal(runs.rows()[0]?.review, undefined, 'the review closes once applied');
    // A review shown when the run starts again (a new prompt) is dropped at once: its hunks are stale.
    await runs.act('iso1', 'review');
    assert.ok(runs.rows()[0]?.review);
    const dropped = nextEvent(runs.onDidChange, (rows) => rows[0]?.review === undefined);
    connection.emit(envelope(2, { type: 'run_start', run_id: 'r2' }, 'iso1'));
    assert.equal(runs.rows()[0]?.review, undefined);
    await dropped; // and the panel is told so
    // With no conflict left the copy is removed: the hunks not kept are said to go with it.
    assert.equal(
      appliedText('keep', { applied: ['app.py'], hunksApplied: 1, conflicts: [], leftAside: ['app.py#1~a1b2c3'] }),
      'Rein: the isolated run was kept: app.py. Not kept, discarded with the copy: app.py#1~a1b2c3.',
    );
    // "Keep all" from the isolated run's own timeline: no session to apply into, a new one.
    controller.openNew('iso1');
    await runs.act('iso1', 'keep');
    assert.deepEqual(connection.requests.filter((r) => r.method === 'rein/applyIsolated').at(-1)?.params, { sessionId: 'iso1', action: 'keep' });
    runs.dispose();
    controller.dispose();
  });

  it('groups the setup by kind, every kind present, and counts what is not used', () => {
    const view = setupView(
      [
        { kind: 'command', name: '/file', source: '.claude/commands/review/file.md', status: 'used', detail: 'Review one file' },
        { kind: 'hook', name: 'PreToolUse [Bash]', source: '.claude/settings.json', status: 'not trusted', detail: 'guard.sh' },
        { kind: 'agent', name: 'nameless', source: '.claude/agents/nameless.md', status: 'invalid', detail: 'name: required' },
      ],
      false,
    );
    assert.deepEqual(
      view.groups.map((g) => [g.kind, g.items.map((i) => i.name)]),
      [
        ['hook', ['PreToolUse [Bash]']],
        ['skill', []],
        ['agent', ['nameless']],
        ['command', ['/file']],
        ['instructions', []],
        ['mcp', []],
      ],
    );
    assert.equal(view.mcpLoaded, false);
    assert.equal(setupProblems(view), 2);
  });

  it("says what the editor's diagnostics were seen to cover, and the open files' languages none reported on", () => {
    const coverage = editorCoverage(
      [
        { path: '/w/calc.py', sources: ['ruff'] },
        { path: '/w/shapes.py', sources: ['basedpyright', 'ruff'] },
        { path: '/w/main.ts', sources: ['ts'] },
        { path: '/w/clean.go', sources: [] },
      ],
      ['/w/calc.py', '/w/NOTES.md', '/w/README.md', '/w/Makefile', '/w/clean.go'],
    );
    assert.deepEqual(coverage, {
      seen: [
        { ext: '.go', sources: [] },
        { ext: '.py', sources: ['basedpyright', 'ruff'] },
        { ext: '.ts', sources: ['ts'] },
      ],
      unseen: ['.md', 'Makefile'],
    });
  });
});
