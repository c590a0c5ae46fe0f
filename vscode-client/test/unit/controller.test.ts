import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { previewStatusText, runPreviewAction } from '../../src/commands';
import { ChatController } from '../../src/panel/controller';
import type { PromptResult } from '../../src/shared/protocol';
import { envelope, FakeConnection, nextEvent } from '../fakes';
import { loadEvents } from '../helpers';
import { stub } from '../stub/vscode';

const BACKGROUND = new Set(['rein/approvals', 'rein/sessions', 'rein/checkpoints', 'rein/review']);

function setup(): { connection: FakeConnection; controller: ChatController } {
  const connection = new FakeConnection();
  connection.responders.set('rein/sessions', () => ({ sessions: [] }));
  connection.responders.set('rein/checkpoints', (params) => ({ sessionId: params.sessionId, bytes: 0, runs: [] }));
  connection.responders.set('rein/review', () => ({ runs: [] }));
  const controller = new ChatController(connection, undefined);
  return { connection, controller };
}

describe('ChatController', () => {
  it('sends a prompt, follows the new session from its events, and ends idle', async () => {
    const { connection, controller } = setup();
    let resolvePrompt: (result: PromptResult) => void = () => undefined;
    connection.responders.set('rein/prompt', () => new Promise<PromptResult>((resolve) => (resolvePrompt = resolve)));
    const sent = controller.send('Fix calc.py');
    assert.equal(controller.running, true);
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/prompt')?.params, { text: 'Fix calc.py', mode: 'agent' });
    const events = loadEvents();
    for (const e of events) {
      connection.emit(e);
    }
    assert.equal(controller.sessionId, events[0]?.sessionId);
    resolvePrompt({
      sessionId: events[0]?.sessionId ?? '',
      runId: events[0]?.runId ?? '',
      status: 'completed',
      text: 'done',
      turns: 6,
      repairAttempts: 1,
      generations: 2,
      usage: {},
    });
    await sent;
    assert.equal(controller.running, false);
    const items = controller.state.view().items;
    assert.equal(items.at(-1)?.kind, 'run_end');
    assert.ok(!items.some((item) => item.kind === 'notice' && /Run completed/.test(item.text)), 'no duplicate end notice');
  });

  it('steers while a run is active, queues a follow-up with the second action', async () => {
    const { connection, controller } = setup();
    connection.responders.set('rein/steer', () => ({ queued: true }));
    connection.responders.set('rein/followUp', () => ({ queued: true }));
    connection.emit(envelope(1, { type: 'agent_start' }));
    connection.emit(envelope(2, { type: 'run_start', run_id: 'r1', prompt: 'go' }));
    await controller.send('use pathlib');
    await controller.send('then update the docs', 'followUp');
    assert.deepEqual(
      // The session list and its checkpoints load in the background when the session shows.
      connection.requests.filter((r) => !BACKGROUND.has(r.method)).map((r) => [r.method, r.params]),
      [
        ['rein/steer', { sessionId: 's1', text: 'use pathlib' }],
        ['rein/followUp', { sessionId: 's1', text: 'then update the docs' }],
      ],
    );
    const pending = controller.state.view().items.filter((item) => item.kind === 'user' && item.pending);
    assert.equal(pending.length, 2);
  });

  it('aborts with rein/abort for the active session', async () => {
    const { connection, controller } = setup();
    connection.responders.set('rein/abort', () => ({ aborted: true }));
    connection.emit(envelope(1, { type: 'agent_start' }));
    await controller.abort();
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/abort')?.params, { sessionId: 's1' });
  });

  it('reloads the session with a notice when seq has a gap, and ignores duplicates', async () => {
    const { connection, controller } = setup();
    connection.responders.set('rein/session', () => ({
      id: 's1',
      status: 'idle',
      messages: [
        { role: 'user', content: 'Fix calc.py', origin: 'prompt' },
        { role: 'assistant', content: [{ type: 'text', text: 'All fixed.' }], usage: { input_tokens: 10, output_tokens: 1 } },
      ],
      // The server's total: more than the transcript shows (a subagent ran).
      usage: { inputTokens: 4200, outputTokens: 135, cacheReadTokens: 2100, cacheWriteTokens: 0 },
    }));
    connection.emit(envelope(1, { type: 'run_start', run_id: 'r1', prompt: 'Fix calc.py' }));
    connection.emit(envelope(2, { type: 'turn_start', turn: 1 }));
    connection.emit(envelope(2, { type: 'turn_start', turn: 1 })); // duplicate
    assert.equal(connection.methods().filter((m) => m === 'rein/session').length, 0);
    const reloaded = nextEvent(controller.onDidReset);
    connection.emit(envelope(5, { type: 'turn_start', turn: 2 })); // 3 and 4 are missing
    await reloaded;
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/session')?.params, { sessionId: 's1' });
    const items = controller.state.view().items;
    assert.deepEqual(
      items.map((item) => item.kind),
      ['user', 'assistant', 'notice'],
    );
    const notice = items[2];
    assert.ok(notice?.kind === 'notice' && /Missed 2 events \(seq 3–4\)/.test(notice.text));
    assert.deepEqual(controller.header.sessionUsage, { input_tokens: 4200, output_tokens: 135, cache_read_tokens: 2100, cache_write_tokens: 0 });
    // After the reload the next event is the new baseline.
    connection.emit(envelope(9, { type: 'turn_start', turn: 3 }));
    assert.equal(controller.header.turn, 3);
  });

  it('takes a restarted server\'s events from seq 1 again, not as duplicates of the server that went', () => {
    const { connection, controller } = setup();
    connection.emit(envelope(1, { type: 'run_start', run_id: 'r1', prompt: 'Fix calc.py' }));
    connection.emit(envelope(2, { type: 'turn_start', turn: 1 }));
    connection.emit(envelope(3, { type: 'turn_start', turn: 2 }));
    assert.equal(controller.header.turn, 2);
    connection.states.fire({ state: 'restarting', detail: 'exit code 1' });
    connection.states.fire({ state: 'running' });
    // The new server's run of the same session: its seq starts at 1.
    connection.emit(envelope(1, { type: 'run_start', run_id: 'r2', prompt: 'go on' }));
    connection.emit(envelope(2, { type: 'turn_start', turn: 1 }));
    assert.equal(controller.running, true);
    assert.equal(controller.header.turn, 1);
    assert.equal(connection.methods().filter((m) => m === 'rein/session').length, 0, 'no gap taken either');
  });

  it('follows a session a code action started when idle, but not while its own run is active', () => {
    const { connection, controller } = setup();
    connection.emit(envelope(1, { type: 'agent_start' }, 'mine'));
    connection.emit(envelope(1, { type: 'agent_start' }, 'other'));
    assert.equal(controller.sessionId, 'mine');
    connection.emit(envelope(2, { type: 'agent_end', status: 'completed' }, 'mine'));
    connection.emit(envelope(7, { type: 'run_start', run_id: 'rx', prompt: 'Fix with Rein: F821' }, 'other'));
    assert.equal(controller.sessionId, 'other');
    assert.equal(controller.running, true);
  });

  it('shows an event of no session (a skipped auto-repair) without touching seq', () => {
    const { connection, controller } = setup();
    connection.emit(envelope(1, { type: 'agent_start' }));
    connection.emit({ sessionId: null, runId: null, seq: 0, event: { type: 'auto_repair', phase: 'skipped', uri: 'file:///w/a.py', reason: 'a run is active' } });
    connection.emit(envelope(2, { type: 'turn_start', turn: 1 }));
    assert.equal(controller.sessionId, 's1');
    assert.equal(connection.methods().filter((m) => m === 'rein/session').length, 0, 'no reload');
    const notice = controller.state.view().items.find((item) => item.kind === 'notice');
    assert.ok(notice?.kind === 'notice' && notice.text === 'Auto-repair of a.py skipped: a run is active');
  });

  it('shows a failed prompt (server error) as a notice and goes idle', async () => {
    const { connection, controller } = setup();
    connection.responders.set('rein/prompt', () => {
      throw new Error('Internal error: provider misconfigured');
    });
    await controller.send('hello');
    assert.equal(controller.running, false);
    const last = controller.state.view().items.at(-1);
    assert.ok(last?.kind === 'notice' && last.level === 'error' && /provider misconfigured/.test(last.text));
  });

  it('reports a run result whose end never came as events', async () => {
    const { connection, controller } = setup();
    connection.responders.set('rein/prompt', () => ({
      sessionId: 's2',
      runId: 'r9',
      status: 'failed',
      text: '',
      turns: 3,
      repairAttempts: 3,
      generations: 4,
      usage: {},
      error: 'gates still failing after 3 repair attempts',
    }));
    await controller.send('fix it');
    assert.equal(controller.sessionId, 's2');
    const last = controller.state.view().items.at(-1);
    assert.ok(last?.kind === 'notice' && last.level === 'error');
    assert.match(last.text, /Run failed: gates still failing after 3 repair attempts \(3 turns, 3 repairs\)/);
  });

  it('lists sessions and opens one from its transcript', async () => {
    const { connection, controller } = setup();
    connection.responders.set('rein/sessions', () => ({
      sessions: [{ id: 'a', title: 'Fix calc', status: 'completed', updatedAt: '2026-12-01T10:00:00Z' }],
    }));
    connection.responders.set('rein/session', (params) => ({
      id: params.sessionId,
      status: 'completed',
      messages: [{ role: 'user', content: 'Fix calc', origin: 'prompt' }],
    }));
    const sessions = await controller.refreshSessions();
    assert.equal(sessions[0]?.title, 'Fix calc');
    await controller.selectSession('a');
    assert.equal(controller.sessionId, 'a');
    assert.equal(controller.state.view().items[0]?.kind, 'user');
  });

  it('sends a plan-mode prompt with mode "plan"', async () => {
    const { connection, controller } = setup();
    connection.responders.set('rein/prompt', () => ({ sessionId: 's9', runId: 'r', status: 'completed', text: '', turns: 1, repairAttempts: 0, generations: [], usage: {} }));
    await controller.send('Plan the migration', 'auto', undefined, 'plan');
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/prompt')?.params, { text: 'Plan the migration', mode: 'plan' });
  });

  it('plays the recorded plan-mode run with the preview: one end, no reload, the preview section follows', async () => {
    const { connection, controller } = setup();
    let resolvePrompt: (result: PromptResult) => void = () => undefined;
    connection.responders.set('rein/prompt', () => new Promise<PromptResult>((resolve) => (resolvePrompt = resolve)));
    const events = loadEvents('plan-preview.jsonl');
    const [before, rest] = [events.slice(0, 2), events.slice(2)];
    for (const e of before) {
      connection.emit(e); // the preview started by request: no session yet
    }
    assert.equal(controller.sessionId, null);
    assert.equal(controller.preview.view().state, 'running');
    const sent = controller.send('Lower THRESHOLD in settings.py by 4; the app must keep running.', 'auto', undefined, 'plan');
    for (const e of rest) {
      connection.emit(e);
    }
    const sessionId = rest[0]?.sessionId ?? '';
    const lastRun = rest.filter((e) => e.event.type === 'run_end').at(-1)?.event as { run_id: string };
    resolvePrompt({ sessionId, runId: lastRun.run_id, status: 'completed', text: 'done', turns: 8, repairAttempts: 1, generations: [1, 2], usage: {} });
    await sent;
    assert.equal(controller.sessionId, sessionId);
    assert.equal(connection.methods().filter((m) => m === 'rein/session').length, 0, 'no seq gap');
    const items = controller.state.view().items;
    assert.equal(items.filter((item) => item.kind === 'run_end').length, 1);
    assert.ok(!items.some((item) => item.kind === 'notice'), 'no second end from the prompt result');
    assert.deepEqual([controller.preview.view().state, controller.preview.view().reloads], ['stopped', 2]);
  });

  it('takes preview events of no session (seq 0) without the seq check, and keeps the preview across sessions', async () => {
    const { connection, controller } = setup();
    connection.emit(envelope(1, { type: 'agent_start' }));
    connection.emit(envelope(2, { type: 'turn_start', turn: 1 }));
    connection.emit({ sessionId: null, runId: null, seq: 0, event: { type: 'preview_started', pid: 31, generation: 0, command: 'python app.py', state: 'running' } });
    connection.emit({ sessionId: null, runId: null, seq: 0, event: { type: 'preview_output', text: 'ready', lines_dropped: 0 } });
    connection.emit(envelope(3, { type: 'turn_start', turn: 2 }));
    // A reload would have asked rein/session synchronously, from emit.
    assert.equal(connection.methods().filter((m) => m === 'rein/session').length, 0, 'no reload');
    assert.equal(controller.header.turn, 2);
    assert.deepEqual([controller.preview.view().state, controller.preview.view().lines], ['running', ['ready']]);
    assert.ok(!controller.state.view().items.some((item) => item.kind === 'notice'));
    assert.deepEqual(controller.state.view().preview.lines, ['ready'], 'the view model carries the section');
    // Another session's run moves the same preview while ours is busy.
    connection.emit(envelope(4, { type: 'preview_reloaded', generation: 2, strategy: 'restart', pid: 32, state: 'running' }, 'other'));
    assert.equal(controller.sessionId, 's1');
    assert.equal(controller.preview.view().pid, 32);
    connection.emit(envelope(4, { type: 'agent_end', status: 'completed' }));
    controller.newSession();
    assert.equal(controller.state.view().preview.pid, 32, 'one preview per workspace, whatever the session');
  });

  it('asks rein/preview, shows the request in between, and the answer after', async () => {
    const { connection, controller } = setup();
    let answer: (value: unknown) => void = () => undefined;
    connection.responders.set('rein/preview', () => new Promise((resolve) => (answer = resolve)));
    const pending = controller.previewRequest('start');
    assert.equal(controller.preview.view().pending, 'start');
    answer({ state: 'running', pid: 77, generation: 1, command: 'python app.py', lines: ['ready'] });
    const result = await pending;
    assert.equal(result.pid, 77);
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/preview')?.params, { action: 'start' });
    const view = controller.preview.view();
    assert.deepEqual([view.state, view.pid, view.pending, view.lines], ['running', 77, undefined, ['ready']]);

    connection.responders.set('rein/preview', () => {
      throw new Error('Method not found');
    });
    await assert.rejects(controller.previewRequest('stop'), /Method not found/);
    assert.deepEqual([controller.preview.view().pending, controller.preview.view().detail], [undefined, 'stop failed: Method not found']);
  });

  it('asks for the preview\'s status when the server runs, and marks it stopped when the server goes', async () => {
    const { connection, controller } = setup();
    connection.responders.set('rein/preview', (params) => ({ state: params.action === 'status' ? 'running' : 'stopped', pid: 5, lines: [] }));
    const answered = nextEvent(controller.onDidChange, () => controller.preview.view().state === 'running');
    connection.states.fire({ state: 'running' });
    await answered;
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/preview')?.params, { action: 'status' });
    assert.equal(controller.preview.view().state, 'running');
    connection.states.fire({ state: 'restarting', detail: 'exit code 1' });
    assert.deepEqual([controller.preview.view().state, controller.preview.view().detail], ['stopped', 'the Rein server stopped']);
    connection.info = { state: 'stopped' };
    await controller.refreshPreview();
    assert.equal(connection.requests.filter((r) => r.method === 'rein/preview').length, 1, 'not while the server is down');
  });
});

describe('the preview commands', () => {
  it('say the state in the status bar, a failure as an error, and offer the settings when there is no preview', async () => {
    stub.reset();
    const { connection, controller } = setup();
    connection.responders.set('rein/preview', (params) =>
      params.action === 'start'
        ? { state: 'running', pid: 48213, generation: 3, command: 'python -m myapp', lines: [] }
        : params.action === 'restart'
          ? { state: 'failed', generation: null, command: 'python -m myapp', lines: [], error: 'the preview exited with code 1 (restart)' }
          : { state: 'off', generation: null, command: '', lines: [] },
    );
    await runPreviewAction(controller, 'start');
    assert.deepEqual(stub.statusMessages, ['Rein: the preview is running (pid 48213)']);
    assert.deepEqual(stub.progress, ['Rein: starting the preview']);
    await runPreviewAction(controller, 'restart');
    assert.deepEqual(stub.calls.at(-1), { kind: 'error', message: 'Rein: preview restart failed: the preview exited with code 1 (restart)', options: undefined, items: [] });
    stub.answers.push('Open Settings');
    await runPreviewAction(controller, 'stop');
    assert.match(stub.calls.at(-1)?.message ?? '', /no preview is configured/);
    assert.deepEqual(stub.commands.at(-1), { command: 'workbench.action.openSettings', args: ['rein.gates.preview'] });
    connection.responders.set('rein/preview', () => {
      throw new Error('Server is not running');
    });
    await runPreviewAction(controller, 'stop');
    assert.equal(stub.calls.at(-1)?.message, 'Rein: could not stop the preview: Server is not running');
    assert.equal(previewStatusText({ state: 'stopped' }), 'Rein: the preview is stopped');
  });
});
