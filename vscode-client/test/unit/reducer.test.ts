import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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

  it('renders errors, preview events and auto-repair as notices or a preview box', () => {
    const state = new PanelState('s');
    state.apply({ type: 'error', message: 'hook raised', where: 'after_tool_call', fatal: false } as never);
    state.apply({ type: 'preview_started', pid: 4242, generation: 2, command: 'python -m app', state: 'running' } as never);
    state.apply({ type: 'preview_output', text: 'Serving on :8000\n' } as never);
    state.apply({ type: 'preview_reloaded', generation: 3, strategy: 'restart', pid: 4250, state: 'running' } as never);
    state.apply({
      type: 'preview_error',
      message: 'runtime error in the preview output',
      lines: ['Traceback (most recent call last):', 'NameError: name x is not defined'],
      state: 'running',
    } as never);
    state.apply({ type: 'preview_stopped', reason: 'the program exited', state: 'exited', exit_code: 1 } as never);
    state.apply({ type: 'auto_repair_started', uri: 'file:///w/app.py' } as never);
    state.apply({ type: 'auto_repair_finished', uri: 'file:///w/app.py', status: 'completed' } as never);
    const items = state.view().items;
    assert.deepEqual(
      items.map((item) => item.kind),
      ['notice', 'preview', 'notice', 'notice'],
    );
    const preview = items[1];
    assert.ok(preview?.kind === 'preview');
    assert.deepEqual(
      [preview.pid, preview.generation, preview.reloads, preview.state, preview.command, preview.stopped, preview.output],
      [4250, 3, 1, 'exited', 'python -m app', 'the program exited (exit code 1)', 'Serving on :8000\n'],
    );
    assert.deepEqual(preview.errors, [
      { message: 'runtime error in the preview output', lines: ['Traceback (most recent call last):', 'NameError: name x is not defined'] },
    ]);
    assert.ok(items[0]?.kind === 'notice' && items[0].level === 'warning' && items[0].text === 'after_tool_call: hook raised');
    assert.ok(items[3]?.kind === 'notice' && items[3].text === 'Auto-repair of app.py: completed');
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
