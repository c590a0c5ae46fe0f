import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planPrompt } from '../../src/panel/planFlow';
import { PREVIEW_LINES } from '../../src/panel/preview';
import { PanelState } from '../../src/panel/reducer';
import type { EventEnvelope } from '../../src/shared/protocol';
import type { GateItem, Item, ToolItem } from '../../src/shared/viewModel';
import { loadEvents } from '../helpers';

function feed(envelopes: EventEnvelope[]): PanelState {
  const state = new PanelState(envelopes[0]?.sessionId ?? null);
  for (const envelope of envelopes) {
    state.apply(envelope.event);
  }
  return state;
}

function ofKind<K extends Item['kind']>(items: readonly Item[], kind: K): Extract<Item, { kind: K }>[] {
  return items.filter((item): item is Extract<Item, { kind: K }> => item.kind === kind);
}

describe('PanelState over the recorded run (run-fix-calc.jsonl)', () => {
  const events = loadEvents();
  const view = feed(events).view();

  it('shows the items in the order the run produced them', () => {
    const kinds = view.items.map((item) => (item.kind === 'tool' ? `tool:${item.name}` : item.kind));
    assert.deepEqual(kinds, [
      'user',
      'assistant',
      'tool:read_file',
      'plan',
      'assistant',
      'tool:task',
      'subagent',
      'assistant',
      'tool:edit_file',
      'user',
      'assistant',
      'gate',
      'repair',
      'assistant',
      'tool:edit_file',
      'tool:run_command',
      'notice',
      'assistant',
      'gate',
      'run_end',
    ]);
  });

  it('shows the prompt once and the steering as applied, but not the bootstrap context or the repair prompt', () => {
    const users = ofKind(view.items, 'user');
    assert.equal(users.length, 2);
    assert.equal(users[0]?.origin, 'prompt');
    assert.match(users[0]?.text ?? '', /^mean\(\) crashes on an empty list/);
    assert.equal(users[1]?.origin, 'steer');
    assert.equal(users[1]?.applied, true);
    assert.ok(!users.some((user) => user.text.includes('The analyzer found')));
    assert.ok(!users.some((user) => user.text.includes('Context for this session')));
  });

  it('streams text and ends each assistant message with its full text', () => {
    const assistants = ofKind(view.items, 'assistant');
    assert.equal(assistants[0]?.text, "I'll read `calc.py` first and make a short plan.");
    assert.match(assistants[0]?.thinking ?? '', /two problems/);
    assert.ok(assistants.every((item) => !item.streaming));
    assert.match(assistants[assistants.length - 1]?.text ?? '', /Both problems are fixed[\s\S]*4 passed in 0\.03s/);
  });

  it('gives tool calls their status, duration, output and result', () => {
    const tools = ofKind(view.items, 'tool');
    const read = tools.find((tool) => tool.toolCallId === 'call_read') as ToolItem;
    assert.equal(read.status, 'ok');
    assert.equal(read.summary, 'calc.py');
    assert.equal(read.durationMs, 4.2);
    assert.equal(read.edit, undefined, 'a read is not an edit');
    const test = tools.find((tool) => tool.name === 'run_command') as ToolItem;
    assert.equal(test.summary, 'python -m pytest -q');
    assert.equal(test.output, '....                                                                     [100%]\n4 passed in 0.03s\n');
    assert.equal(test.statusText, undefined);
    assert.match(test.content ?? '', /exit code 0/);
  });

  it('links each edit to its diff', () => {
    const edits = ofKind(view.items, 'tool').filter((tool) => tool.name === 'edit_file');
    assert.deepEqual(
      edits.map((tool) => tool.edit),
      [
        { path: 'calc.py', generation: 1, hasDiff: true, created: undefined },
        { path: 'calc.py', generation: 2, hasDiff: true, created: undefined },
      ],
    );
  });

  it('shows the failing gate with its blocker, the repair attempt, then the passing gate', () => {
    const gates = ofKind(view.items, 'gate');
    assert.equal(gates.length, 2);
    const [failed, passed] = gates as [GateItem, GateItem];
    assert.equal(failed.status, 'failed');
    assert.equal(failed.generation, 1);
    assert.equal(failed.durationMs, 412);
    assert.equal(failed.blockers.length, 1);
    assert.equal(failed.blockers[0]?.code, 'F821');
    assert.equal(failed.blockers[0]?.line, 14);
    assert.equal(passed.status, 'passed');
    assert.equal(passed.generation, 2);
    const repair = ofKind(view.items, 'repair')[0];
    assert.equal(repair?.attempt, 1);
    assert.equal(repair?.maxAttempts, 3);
    assert.equal(repair?.blockers.length, 1);
  });

  it('keeps one box per subagent, updated in place', () => {
    const boxes = ofKind(view.items, 'subagent');
    assert.equal(boxes.length, 1);
    const box = boxes[0];
    assert.equal(box?.name, 'explore');
    assert.equal(box?.status, 'completed');
    assert.equal(box?.turn, 2);
    assert.equal(box?.toolCalls, 1);
    assert.match(box?.currentTool ?? '', /^grep mean/);
    assert.match(box?.text ?? '', /calc\.report and stats\.summary/);
    assert.equal((box?.usage.input_tokens ?? 0) + (box?.usage.output_tokens ?? 0), 1967);
  });

  it('shows the plan once, with the last step statuses', () => {
    const plans = ofKind(view.items, 'plan');
    assert.equal(plans.length, 1);
    assert.deepEqual(
      plans[0]?.steps.map((step) => [step.status, step.summary]),
      [
        ['done', 'returns 0.0'],
        ['done', 'len(values)'],
        ['done', '4 passed'],
      ],
    );
    assert.equal(plans[0]?.state, 'completed');
  });

  it('ends the run with its status, turns, repairs and token usage', () => {
    const end = ofKind(view.items, 'run_end')[0];
    assert.equal(end?.status, 'completed');
    assert.equal(end?.turns, 6);
    assert.equal(end?.repairs, 1);
    assert.equal(end?.usage.input_tokens, 18460);
    assert.equal(end?.usage.output_tokens, 430);
    assert.equal(view.header.status, 'idle');
    assert.equal(view.header.lastRunStatus, 'completed');
    assert.equal(view.header.sessionUsage.input_tokens, 18460);
  });

  it('turns a compaction into a notice and ignores unknown event types', () => {
    const notices = ofKind(view.items, 'notice');
    assert.equal(notices.length, 1);
    assert.match(notices[0]?.text ?? '', /Context compacted \(elide\): 14,210 → 9,870 tokens, 2 messages/);
    const state = new PanelState('s');
    assert.equal(state.apply({ type: 'a_future_event' }), false);
    assert.equal(state.view().items.length, 0);
  });

  it('reports running, the turn and the run usage part way through', () => {
    const cut = events.findIndex((envelope) => envelope.event.type === 'gate_start');
    const partial = feed(events.slice(0, cut + 1)).view();
    assert.equal(partial.header.status, 'running');
    assert.equal(partial.header.turn, 4);
    assert.equal(partial.header.runUsage.input_tokens, 2140 + 2630 + 3020 + 3300);
    const gate = ofKind(partial.items, 'gate')[0];
    assert.equal(gate?.status, 'running');
  });

  it('bumps rev only for the items that changed', () => {
    const state = new PanelState('s');
    state.apply({ type: 'run_start', run_id: 'r', prompt: 'hi' } as never);
    state.apply({ type: 'turn_start', turn: 1 } as never);
    state.apply({ type: 'message_start', role: 'assistant' } as never);
    const before = new Map(state.view().items.map((item) => [item.id, item.rev]));
    state.apply({ type: 'message_delta', kind: 'text', delta: 'Hel' } as never);
    const after = state.view().items;
    assert.equal(after[0]?.rev, before.get(after[0]?.id ?? ''));
    assert.notEqual(after[1]?.rev, before.get(after[1]?.id ?? ''));
  });
});

describe('PanelState details', () => {
  it('marks queued steering as pending and moves it where the run took it in', () => {
    const state = new PanelState('s');
    state.apply({ type: 'run_start', run_id: 'r', prompt: 'do it' } as never);
    state.apply({ type: 'message_end', message: { role: 'user', content: 'do it', origin: 'prompt' } } as never);
    state.queueUser('steer', 'use pathlib');
    state.apply({ type: 'message_start', role: 'assistant' } as never);
    state.apply({ type: 'message_delta', kind: 'text', delta: 'Working.' } as never);
    state.apply({ type: 'message_end', message: { role: 'assistant', content: [{ type: 'text', text: 'Working.' }] } } as never);
    let users = state.view().items.filter((item) => item.kind === 'user');
    assert.equal(users[1]?.kind === 'user' && users[1].pending, true);
    state.apply({ type: 'message_end', message: { role: 'user', content: 'use pathlib', origin: 'steer' } } as never);
    state.apply({ type: 'steering_applied', texts: ['use pathlib'] } as never);
    const items = state.view().items;
    users = items.filter((item) => item.kind === 'user');
    assert.equal(users.length, 2);
    assert.equal(items[items.length - 1]?.kind, 'user');
    const steer = users[1];
    assert.ok(steer?.kind === 'user' && !steer.pending && steer.applied);
  });

  it('starts a queued follow-up as the next run without showing it twice', () => {
    const state = new PanelState('s');
    state.apply({ type: 'run_start', run_id: 'r1', prompt: 'first' } as never);
    state.apply({ type: 'turn_start', turn: 1 } as never);
    state.queueUser('follow_up', 'second');
    state.apply({ type: 'run_end', run_id: 'r1', status: 'completed', turns: 1 } as never);
    state.apply({ type: 'follow_up_started', text: 'second' } as never);
    state.apply({ type: 'run_start', run_id: 'r2', prompt: 'second' } as never);
    state.apply({ type: 'message_end', message: { role: 'user', content: 'second', origin: 'follow_up' } } as never);
    const users = state.view().items.filter((item) => item.kind === 'user');
    assert.deepEqual(
      users.map((item) => (item.kind === 'user' ? [item.text, item.origin, item.pending ?? false] : [])),
      [
        ['first', 'prompt', false],
        ['second', 'follow_up', false],
      ],
    );
  });

  it('shows run_start\'s prompt when no user message came before the first turn', () => {
    const state = new PanelState('s');
    state.apply({ type: 'run_start', run_id: 'r', prompt: 'Fix it' } as never);
    state.apply({ type: 'turn_start', turn: 1 } as never);
    const first = state.view().items[0];
    assert.ok(first?.kind === 'user' && first.text === 'Fix it' && first.origin === 'prompt');
  });

  it('drops an assistant message that had only tool calls', () => {
    const state = new PanelState('s');
    state.apply({ type: 'message_start', role: 'assistant' } as never);
    state.apply({ type: 'message_delta', kind: 'tool_call', delta: '{"pa', tool_call_id: 'c1', tool_name: 'read_file' } as never);
    state.apply({
      type: 'message_end',
      message: { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'read_file', arguments: { path: 'a.py' } }] },
    } as never);
    const items = state.view().items;
    assert.equal(items.length, 1);
    assert.equal(items[0]?.kind, 'tool');
    assert.equal(items[0]?.kind === 'tool' && items[0].summary, 'a.py');
  });

  it('keeps the display kind of a tool result, none for text', () => {
    const state = new PanelState('s');
    state.apply({ type: 'tool_call_end', tool_call_id: 'a', name: 'report', is_error: false, content: '# R', display: 'markdown' } as never);
    state.apply({ type: 'tool_call_end', tool_call_id: 'b', name: 'sizes', is_error: false, content: '| a |\n|---|', display: 'table' } as never);
    state.apply({ type: 'tool_call_end', tool_call_id: 'c', name: 'grep', is_error: false, content: 'x', display: 'text' } as never);
    state.apply({ type: 'tool_call_end', tool_call_id: 'd', name: 'old', is_error: false, content: 'x' } as never);
    const tools = state.view().items.filter((item): item is ToolItem => item.kind === 'tool');
    assert.deepEqual(
      tools.map((tool) => tool.display),
      ['markdown', 'table', undefined, undefined],
    );
  });

  it('creates a tool row from its end alone and marks unfinished calls when the run ends', () => {
    const state = new PanelState('s');
    state.apply({ type: 'run_start', run_id: 'r' } as never);
    state.apply({ type: 'tool_call_end', tool_call_id: 'x', name: 'grep', is_error: true, content: 'bad regex' } as never);
    state.apply({ type: 'tool_call_start', tool_call_id: 'y', name: 'run_command', arguments: { command: 'sleep 9' } } as never);
    state.apply({ type: 'run_end', run_id: 'r', status: 'aborted', reason: 'aborted by the user' } as never);
    const tools = state.view().items.filter((item): item is ToolItem => item.kind === 'tool');
    assert.deepEqual(
      tools.map((tool) => tool.status),
      ['error', 'error'],
    );
    assert.match(tools[1]?.statusText ?? '', /aborted/);
    const end = state.view().items.at(-1);
    assert.ok(end?.kind === 'run_end' && end.reason === 'aborted by the user');
  });

  it('turns errors and auto-repair into notices, and keeps preview events out of the timeline', () => {
    const state = new PanelState('s');
    state.apply({ type: 'error', message: 'hook raised', where: 'after_tool_call', fatal: false } as never);
    state.apply({ type: 'preview_started', pid: 4242, generation: 2, command: 'python -m app', state: 'running' } as never);
    state.apply({ type: 'preview_output', text: 'Serving on :8000' } as never);
    state.apply({ type: 'auto_repair', phase: 'started', uri: 'file:///w/app.py' } as never);
    state.apply({ type: 'auto_repair', phase: 'finished', uri: 'file:///w/app.py', status: 'completed' } as never);
    const view = state.view();
    assert.deepEqual(
      view.items.map((item) => item.kind),
      ['notice', 'notice', 'notice'],
    );
    assert.ok(view.items[0]?.kind === 'notice' && view.items[0].level === 'warning' && view.items[0].text === 'after_tool_call: hook raised');
    assert.ok(view.items[2]?.kind === 'notice' && view.items[2].text === 'Auto-repair of app.py: completed');
    assert.deepEqual([view.preview.state, view.preview.pid, view.preview.lines], ['running', 4242, ['Serving on :8000']]);
  });

  it('ignores event types the server never sends (the old split auto-repair names)', () => {
    const state = new PanelState('s');
    const started: { type: string } = { type: 'auto_repair_started', uri: 'file:///w/app.py' } as { type: string };
    const finished: { type: string } = { type: 'auto_repair_finished', uri: 'file:///w/app.py', status: 'completed' } as { type: string };
    assert.equal(state.apply(started), false);
    assert.equal(state.apply(finished), false);
    assert.deepEqual(state.view().items, []);
    assert.equal(state.apply({ type: 'auto_repair', phase: 'started', uri: 'file:///w/app.py' } as { type: string }), true);
    assert.equal(state.view().items.length, 1);
  });

  it('shows a gate that could not look as unverified, never as passed or failed', () => {
    const state = new PanelState('s');
    state.apply({ type: 'gate_start', gate: 'analyzer', generation: 3 } as never);
    state.apply({
      type: 'gate_result',
      gate: 'analyzer',
      passed: false,
      status: 'unverified',
      blockers: [],
      duration_ms: 5,
      stale: false,
      detail: 'no analyzer is running (ruff was not found)',
    } as never);
    const [gate] = ofKind(state.view().items, 'gate');
    assert.equal(gate?.status, 'unverified');
    assert.equal(gate?.detail, 'no analyzer is running (ruff was not found)');
  });

  it('ignores a wire dump (model_request): nothing is shown', () => {
    const state = new PanelState('s');
    state.apply({ type: 'run_start', run_id: 'r1', prompt: 'go' } as never);
    const before = JSON.stringify(state.view());
    state.apply({
      type: 'model_request',
      turn: 1,
      model: 'gpt-4.1',
      format: 'neutral',
      payload: { system: 'x', messages: [] },
    } as never);
    assert.equal(JSON.stringify(state.view()), before);
  });

  it('says what a restore put back and what it kept', () => {
    const state = new PanelState('s');
    state.apply({
      type: 'files_restored',
      restore_id: 'restore-1',
      run_id: 'r1',
      turn: 2,
      restored: ['a.py', 'b.py'],
      conflicts: ['c.py'],
      skipped: [],
    } as never);
    state.apply({ type: 'files_restored', restore_id: 'restore-2', run_id: 'restore-1', restored: ['a.py'] } as never);
    assert.deepEqual(
      state.view().items.flatMap((item) => (item.kind === 'notice' ? [[item.level, item.text]] : [])),
      [
        ['warning', 'Restored 2 file(s) to before turn 2 of run r1; kept your changes to c.py'],
        ['info', 'Restored 1 file(s) to before run restore-1'],
      ],
    );
  });

  it('says which changes an earlier run left and which generations were not verified', () => {
    const state = new PanelState('s');
    state.apply({ type: 'carried_changes', generations: [2], paths: ['app.py'] } as never);
    state.apply({ type: 'watchdog_paused', reason: 'gate analyzer' } as never);
    state.apply({
      type: 'run_end',
      status: 'completed',
      unverified: [{ gate: 'analyzer', generation: 3, reason: 'no analyzer is running' }],
    } as never);
    assert.deepEqual(
      state.view().items.flatMap((item) => (item.kind === 'notice' ? [[item.level, item.text]] : [])),
      [
        ['info', 'Validating 1 file an earlier run changed and did not validate: app.py'],
        ['warning', 'Not verified: generation 3 (analyzer: no analyzer is running)'],
      ],
    );
  });

  it('says what auto-repair did, by phase', () => {
    const state = new PanelState('s');
    const uri = 'file:///home/me/proj/app.py';
    state.apply({ type: 'auto_repair', phase: 'started', uri } as never);
    state.apply({ type: 'auto_repair', phase: 'finished', uri, status: 'failed', reason: 'gates still failing' } as never);
    state.apply({ type: 'auto_repair', phase: 'cancelled', uri, reason: 'you edited the file' } as never);
    assert.deepEqual(
      state.view().items.map((item) => (item.kind === 'notice' ? [item.level, item.text] : [])),
      [
        ['info', 'Auto-repair started for app.py'],
        ['warning', 'Auto-repair of app.py: failed: gates still failing'],
        ['info', 'Auto-repair of app.py cancelled: you edited the file'],
      ],
    );
  });

  it('rebuilds a stored session from its transcript', () => {
    const state = PanelState.fromTranscript('s9', [
      { role: 'user', content: 'bootstrap context', origin: 'bootstrap' },
      { role: 'user', content: 'Fix calc.py', origin: 'prompt' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading it.' },
          { type: 'tool_call', id: 'c1', name: 'read_file', arguments: { path: 'calc.py' } },
        ],
        usage: { input_tokens: 100, output_tokens: 10 },
      },
      { role: 'tool', tool_call_id: 'c1', tool_name: 'read_file', content: '1 x = 1' },
      { role: 'user', content: 'The analyzer found ...', origin: 'repair' },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }], usage: { input_tokens: 120, output_tokens: 5 } },
    ]);
    const view = state.view();
    assert.deepEqual(
      view.items.map((item) => item.kind),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    const tool = view.items[2];
    assert.ok(tool?.kind === 'tool' && tool.status === 'ok' && tool.summary === 'calc.py');
    assert.equal(view.header.sessionUsage.input_tokens, 220);
    assert.equal(view.header.sessionId, 's9');
  });
});

describe('PanelState over a recorded plan-mode run with the preview (plan-preview.jsonl)', () => {
  // Recorded from `rein serve` by test/fixtures/record-plan-preview.py: the
  // preview started by request (sessionId null), a plan-mode prompt whose
  // change makes the preview print a traceback, the repair, the preview stopped.
  const events = loadEvents('plan-preview.jsonl');
  const sessionId = events.find((e) => e.sessionId !== null)?.sessionId ?? null;
  const view = feed(events).view();

  it('shows the task once, a divider per step, and one end for the whole plan', () => {
    const kinds = view.items.map((item) => (item.kind === 'tool' ? `tool:${item.name}` : item.kind === 'gate' ? `gate:${item.gate}` : item.kind));
    assert.deepEqual(kinds, [
      'user',
      'assistant',
      'plan',
      'step',
      'tool:read_file',
      'step',
      'assistant',
      'tool:edit_file',
      'gate:preview_load',
      'gate:runtime_observation',
      'repair',
      'assistant',
      'tool:edit_file',
      'gate:preview_load',
      'gate:runtime_observation',
      'gate:preview_start',
      'assistant',
      'run_end',
    ]);
    const users = ofKind(view.items, 'user');
    assert.deepEqual(
      users.map((user) => [user.origin, user.text]),
      [['prompt', 'Lower THRESHOLD in settings.py by 4; the app must keep running.']],
      'not the gathered context, the step prompts or the summary request',
    );
    assert.deepEqual(
      ofKind(view.items, 'step').map((step) => [step.index, step.total, step.stepId, step.description]),
      [
        [1, 2, 's1', 'Read settings.py to find THRESHOLD'],
        [2, 2, 's2', 'Lower THRESHOLD by 4 in settings.py'],
      ],
    );
    assert.ok(!ofKind(view.items, 'tool').some((tool) => tool.name === 'submit_plan' || tool.name === 'complete_step'), 'the plan box shows what they did');
  });

  it('keeps one plan box with the step statuses, their summaries and the final state', () => {
    const plans = ofKind(view.items, 'plan');
    assert.equal(plans.length, 1);
    assert.deepEqual(
      plans[0]?.steps.map((step) => [step.id, step.status, step.summary]),
      [
        ['s1', 'done', 'THRESHOLD is 3'],
        ['s2', 'done', 'THRESHOLD = 0 (the app rejects negative values)'],
      ],
    );
    assert.equal(plans[0]?.state, 'completed');
  });

  it('ends the plan once, with the totals of its runs (as rein/prompt answers them)', () => {
    const ends = ofKind(view.items, 'run_end');
    assert.equal(ends.length, 1);
    const lastRun = events.filter((e) => e.event.type === 'run_end').at(-1)?.event as { run_id: string };
    assert.deepEqual(
      [ends[0]?.status, ends[0]?.turns, ends[0]?.repairs, ends[0]?.usage.input_tokens, ends[0]?.usage.output_tokens, ends[0]?.runId],
      ['completed', 8, 1, 11900, 329, lastRun.run_id],
    );
    assert.deepEqual([view.header.status, view.header.lastRunStatus], ['idle', 'completed']);
  });

  it('stays busy between the plan\'s runs', () => {
    const afterStep1 = events.findIndex((e) => e.event.type === 'plan_updated' && (e.event as { reason: string }).reason === 'step_done');
    const partial = feed(events.slice(0, afterStep1 + 1)).view();
    assert.equal(partial.header.status, 'running');
    assert.equal(ofKind(partial.items, 'run_end').length, 0);
    assert.equal(ofKind(partial.items, 'plan')[0]?.state, 'executing');
  });

  it('shows the runtime error the preview printed, and the blocker it became', () => {
    const failed = ofKind(view.items, 'gate').find((gate) => gate.status === 'failed');
    assert.equal(failed?.gate, 'runtime_observation');
    assert.match(failed?.blockers[0]?.message ?? '', /ValueError: threshold must not be negative, got -1/);
    const cut = events.findIndex((e) => e.event.type === 'preview_error');
    const during = feed(events.slice(0, cut + 1)).view().preview;
    assert.equal(during.state, 'running');
    assert.equal(during.generation, 1);
    assert.match(during.error?.message ?? '', /ValueError: threshold must not be negative, got -1/);
    assert.equal(during.error?.lines[0], 'Traceback (most recent call last):');
    assert.equal(during.lines.at(-1), 'ValueError: threshold must not be negative, got -1');
  });

  it('follows the preview through start, output, reloads and stop, outside the timeline', () => {
    const started = events[0]?.event as { pid: number };
    assert.deepEqual([events[0]?.sessionId, events[0]?.seq], [null, 0], 'started by request: no session');
    const afterStart = feed(events.slice(0, 2)).view().preview;
    assert.deepEqual(
      [afterStart.state, afterStart.pid, afterStart.command, afterStart.generation, afterStart.lines],
      ['running', started.pid, 'python app.py', 0, ['threshold is 3', 'ready']],
    );
    const preview = view.preview;
    assert.deepEqual(
      [preview.state, preview.pid, preview.reloads, preview.generation, preview.detail, preview.error],
      ['stopped', undefined, 2, 2, 'stopped on request', undefined],
    );
    assert.deepEqual(preview.lines.slice(-2), ['threshold is 0', 'ready']);
    assert.ok(preview.lines.length <= PREVIEW_LINES);
    // By request (no session) and by the run's gates (the session's stream): one section.
    const streams = new Set(events.filter((e) => e.event.type.startsWith('preview_')).map((e) => e.sessionId));
    assert.deepEqual([...streams], [null, sessionId]);
  });
});

describe('plan mode details', () => {
  const plan = (reason: string, ...statuses: string[]): never =>
    ({
      type: 'plan_updated',
      reason,
      steps: statuses.map((status, i) => ({ id: `s${i + 1}`, description: `step ${i + 1}`, status })),
    }) as never;
  const run = (state: PanelState, id: string, prompt: string, status: string, turns = 1): void => {
    state.apply({ type: 'agent_start' });
    state.apply({ type: 'run_start', run_id: id, prompt } as never);
    state.apply({ type: 'message_end', message: { role: 'user', content: prompt, origin: 'prompt' } } as never);
    state.apply({ type: 'turn_start', turn: 1 } as never);
    state.apply({ type: 'run_end', run_id: id, status, turns, usage: { input_tokens: 100, output_tokens: 10 } } as never);
    state.apply({ type: 'agent_end', status } as never);
  };

  it('ends a plan that waits for an answer, then shows the answer that resumes it', () => {
    const state = new PanelState('s');
    state.apply({ type: 'plan_state', state: 'planning', previous: 'idle' } as never);
    run(state, 'r1', 'Task: Pick a greeting\n\nMake the plan now and submit it with submit_plan.', 'completed');
    state.apply(plan('planned', 'pending'));
    state.apply({ type: 'plan_state', state: 'executing', previous: 'planning' } as never);
    run(state, 'r2', 'Step 1 of 1 — s1: ask the person\n\nSteps done so far:\n(none yet)\n\nDo this step now.', 'waiting');
    state.apply({ type: 'plan_state', state: 'waiting', previous: 'executing' } as never);
    let items = state.view().items;
    assert.deepEqual(
      items.map((item) => item.kind),
      ['user', 'plan', 'step', 'run_end'],
    );
    const end = items.at(-1);
    assert.ok(end?.kind === 'run_end' && end.status === 'waiting' && end.turns === 2 && end.runId === 'r2');
    assert.equal(state.header.status, 'idle');
    assert.ok(state.hasRunEnd('r2'), 'the prompt result finds its end');

    state.apply({ type: 'plan_state', state: 'executing', previous: 'waiting' } as never);
    run(state, 'r3', 'hi', 'completed');
    state.apply(plan('step_done', 'done'));
    state.apply({ type: 'plan_state', state: 'completed', previous: 'executing' } as never);
    items = state.view().items;
    assert.deepEqual(
      items.map((item) => (item.kind === 'user' ? `user:${item.text}` : item.kind)),
      ['user:Pick a greeting', 'plan', 'step', 'run_end', 'user:hi', 'run_end'],
    );
  });

  it('shows an aborted plan at once, and a plan tool only when it failed', () => {
    const state = new PanelState('s');
    state.apply({ type: 'plan_state', state: 'planning', previous: 'idle' } as never);
    state.apply({ type: 'tool_call_start', tool_call_id: 'p', name: 'submit_plan', arguments: { steps: [] } } as never);
    state.apply({ type: 'tool_call_end', tool_call_id: 'p', name: 'submit_plan', is_error: true, content: 'Step ids must be unique' } as never);
    run(state, 'r1', 'Task: x\n\nMake the plan now and submit it with submit_plan.', 'aborted');
    const items = state.view().items;
    assert.deepEqual(
      items.map((item) => (item.kind === 'tool' ? `tool:${item.name}:${item.status}` : item.kind)),
      ['tool:submit_plan:error', 'user', 'run_end'],
    );
    assert.ok(items[2]?.kind === 'run_end' && items[2].status === 'aborted');
    assert.equal(state.header.status, 'idle');
  });

  it('rebuilds a plan-mode session from its executor\'s transcript', () => {
    const state = PanelState.fromTranscript('s', [
      { role: 'user', content: 'Step 1 of 1 — s1: read app.py\n\nSteps done so far:\n(none yet)\n\nDo this step now.', origin: 'prompt' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_call', id: 'c1', name: 'read_file', arguments: { path: 'app.py' } },
          { type: 'tool_call', id: 'c2', name: 'complete_step', arguments: { step_id: 's1', success: true, summary: 'read' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', tool_name: 'read_file', content: '1 x = 1' },
      { role: 'tool', tool_call_id: 'c2', tool_name: 'complete_step', content: 'Step s1 done: read' },
    ]);
    assert.deepEqual(
      state.view().items.map((item) => (item.kind === 'tool' ? `tool:${item.name}` : item.kind)),
      ['step', 'tool:read_file'],
    );
  });

  it('reads the plan-act prompts', () => {
    assert.deepEqual(planPrompt('Task: Context for this session (gathered automatically):\n\n<workspace root="/w">\na.py\n</workspace>\n\nDo it\n\nMake the plan now and submit it with submit_plan.'), {
      kind: 'task',
      text: 'Do it',
    });
    assert.deepEqual(planPrompt('Step 3 of 4 — s3: Run: the tests\n\nSteps done so far:\n- s1: x'), {
      kind: 'step',
      index: 3,
      total: 4,
      stepId: 's3',
      description: 'Run: the tests',
    });
    assert.deepEqual(planPrompt('SQLite\n\n(Continue step s2: pick a database; finish it with complete_step.)'), { kind: 'reply', text: 'SQLite' });
    assert.equal(planPrompt('All steps are done:\n- s1: x').kind, 'internal');
  });
});

describe('the subagent box shows what the child says', () => {
  const activity = (event: Record<string, unknown>) =>
    ({ type: 'subagent_activity', child_id: 'task_1', name: 'explore', tool_call_id: 'c1', event }) as never;
  const assistantEnd = (text: string) => ({
    type: 'message_end',
    message: { role: 'assistant', content: [{ type: 'text', text }] },
  });

  it('joins the forwarded deltas, then keeps the message_end text', () => {
    const state = new PanelState('s');
    state.apply(activity({ type: 'message_start', role: 'assistant' }));
    state.apply(activity({ type: 'message_delta', kind: 'text', delta: 'the callers are ' }));
    assert.equal(ofKind(state.view().items, 'subagent')[0]?.text, 'the callers are ');
    state.apply(activity({ type: 'message_delta', kind: 'text', delta: 'a.py' }));
    assert.equal(ofKind(state.view().items, 'subagent')[0]?.text, 'the callers are a.py');
    assert.equal(state.apply(activity(assistantEnd('the callers are a.py'))), true);
    assert.equal(ofKind(state.view().items, 'subagent')[0]?.text, 'the callers are a.py');
  });

  it('shows the message_end text when no delta came', () => {
    const state = new PanelState('s');
    state.apply(activity({ type: 'message_start', role: 'assistant' }));
    state.apply(activity(assistantEnd('found two callers')));
    const [box] = ofKind(state.view().items, 'subagent');
    assert.equal(box?.text, 'found two callers');
  });

  it('ignores the child\'s own prompt and tool results', () => {
    const state = new PanelState('s');
    state.apply(activity(assistantEnd('report')));
    state.apply(activity({ type: 'message_end', message: { role: 'user', content: 'list the files' } }));
    state.apply(
      activity({ type: 'message_end', message: { role: 'tool', tool_call_id: 'x', tool_name: 'grep', content: 'a.py' } }),
    );
    assert.equal(ofKind(state.view().items, 'subagent')[0]?.text, 'report');
  });

  it('shows a waiting child as waiting', () => {
    const state = new PanelState('s');
    state.apply(activity({ type: 'run_end', run_id: 'r', status: 'waiting', reason: 'waiting for the person', turns: 1 }));
    assert.equal(ofKind(state.view().items, 'subagent')[0]?.status, 'waiting');
  });
});

describe('a steer taken in by a running subagent', () => {
  const applied = (texts: string[]) =>
    ({
      type: 'subagent_activity',
      child_id: 'task_1',
      name: 'explore',
      tool_call_id: 'c1',
      event: { type: 'steering_applied', texts, late: false },
    }) as never;

  it('marks our queued steer applied, to that subagent', () => {
    const state = new PanelState('s');
    state.queueUser('steer', 'look at b.py first');
    state.apply(applied(['look at b.py first']));
    const [steer] = ofKind(state.view().items, 'user');
    assert.equal(steer?.pending, false);
    assert.equal(steer?.applied, true);
    assert.equal(steer?.subagent, 'explore');
  });

  it("shows another client's steer once, applied to the subagent", () => {
    const state = new PanelState('s');
    state.apply(applied(['use pathlib']));
    const steers = ofKind(state.view().items, 'user');
    assert.deepEqual(
      steers.map((item) => [item.text, item.applied, item.subagent]),
      [['use pathlib', true, 'explore']],
    );
  });
});

describe('PanelState and checkpoints', () => {
  it('says when the storage limits dropped a run’s checkpoint', () => {
    const state = new PanelState('s');
    state.apply({
      type: 'checkpoint_dropped',
      session_id: 's',
      run_id: 'run_1',
      bytes: 48213,
      reason: 'over the size limit of 200 MB (checkpoints.maxMb)',
    } as never);
    const notices = ofKind(state.view().items, 'notice');
    assert.deepEqual(
      notices.map((n) => [n.level, n.text]),
      [['info', "An older run's checkpoint was dropped (over the size limit of 200 MB (checkpoints.maxMb)): it can no longer be undone."]],
    );
  });
});
