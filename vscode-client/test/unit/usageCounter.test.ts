import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PanelState } from '../../src/panel/reducer';
import { isKnownEvent, type Message, type ReinEvent, type Usage } from '../../src/shared/protocol';
import { addUsage, totalTokens, type Item } from '../../src/shared/viewModel';
import { loadEvents } from '../helpers';

/**
 * The panel's token counter over the events of a REAL `rein serve` run with
 * a subagent (written by tests/lsp/test_event_fixture.py, which fails when
 * this fixture is not what the server produces).
 */
const envelopes = loadEvents('real-subagent-run.jsonl');

type TurnEnd = Extract<ReinEvent, { type: 'turn_end' }>;
type RunEnd = Extract<ReinEvent, { type: 'run_end' }>;

function ofKind<K extends Item['kind']>(items: readonly Item[], kind: K): Extract<Item, { kind: K }>[] {
  return items.filter((item): item is Extract<Item, { kind: K }> => item.kind === kind);
}

function sum(usages: (Usage | undefined)[]): Usage {
  return usages.reduce<Usage>((total, usage) => addUsage(total, usage), {});
}

describe('the token counter over a real run with a subagent (real-subagent-run.jsonl)', () => {
  const events: ReinEvent[] = envelopes.map((envelope) => {
    assert.ok(isKnownEvent(envelope.event), `unknown event type ${envelope.event.type}`);
    return envelope.event;
  });
  const turnEnds = events.filter((event): event is TurnEnd => event.type === 'turn_end');
  const runEnd = events.find((event): event is RunEnd => event.type === 'run_end');
  const childEvents = events.flatMap((event) => {
    if (event.type !== 'subagent_activity') {
      return [];
    }
    const inner = event.event as { type: string };
    return isKnownEvent(inner) ? [inner] : [];
  });

  it('is a run with several turns and a subagent that spent tokens', () => {
    assert.ok(turnEnds.length >= 3);
    assert.ok(childEvents.some((event) => event.type === 'turn_end'));
    assert.ok(runEnd);
  });

  it('equals the sum of the turns so far at every turn end, never more', () => {
    const state = new PanelState(envelopes[0]?.sessionId ?? null);
    let turns: Usage = {};
    for (const event of events) {
      state.apply(event);
      if (event.type === 'turn_end') {
        turns = addUsage(turns, event.usage);
        assert.deepEqual(state.view().header.runUsage, turns, `after turn ${event.turn}`);
        assert.deepEqual(state.view().header.runUsage, event.run_usage, `run_usage after turn ${event.turn}`);
      }
    }
  });

  it('counts a running subagent live, and once when its parent turn ends', () => {
    const state = new PanelState(envelopes[0]?.sessionId ?? null);
    const final = runEnd?.usage ?? {};
    let turns: Usage = {};
    let children: Usage = {};
    let shown = 0;
    for (const event of events) {
      state.apply(event);
      if (event.type === 'turn_end') {
        turns = addUsage(turns, event.usage);
        children = {};
      } else if (event.type === 'subagent_activity' && event.event.type === 'turn_end') {
        children = addUsage(children, (event.event as { usage?: Usage }).usage);
        assert.deepEqual(state.view().header.runUsage, addUsage(turns, children));
      }
      const now = totalTokens(state.view().header.runUsage);
      assert.ok(now >= shown, `the counter went down at ${event.type}`);
      assert.ok(now <= totalTokens(final), `the counter passed the run total at ${event.type}`);
      shown = now;
    }
    assert.ok(totalTokens(children) === 0);
  });

  it('ends equal to the run total, with the subagent counted once', () => {
    const state = new PanelState(envelopes[0]?.sessionId ?? null);
    for (const event of events) {
      state.apply(event);
    }
    const view = state.view();
    const total = sum(turnEnds.map((event) => event.usage));
    assert.deepEqual(total, runEnd?.usage);
    assert.deepEqual(view.header.runUsage, total);
    assert.deepEqual(view.header.sessionUsage, total);
    assert.deepEqual(ofKind(view.items, 'run_end')[0]?.usage, total);

    // The child's box shows its own tokens: the sum of its turns, its run total.
    const childTurns = childEvents.filter((event): event is TurnEnd => event.type === 'turn_end');
    const childEnd = childEvents.find((event): event is RunEnd => event.type === 'run_end');
    const box = ofKind(view.items, 'subagent')[0];
    assert.deepEqual(sum(childTurns.map((event) => event.usage)), childEnd?.usage);
    assert.deepEqual(box?.usage, childEnd?.usage);
    // ... which the parent's counter holds once: its own model calls plus the child's.
    const parentCalls = events.flatMap((event) =>
      event.type === 'message_end' && event.message.role === 'assistant' ? [event.message.usage] : [],
    );
    assert.deepEqual(addUsage(sum(parentCalls), childEnd?.usage), total);
  });
});

describe('tool_retry', () => {
  it('shows the retry on the tool until its end', () => {
    const state = new PanelState('s');
    const apply = (event: ReinEvent): boolean => state.apply(event);
    apply({ type: 'run_start', run_id: 'r', prompt: 'hi' });
    apply({ type: 'turn_start', turn: 1 });
    apply({ type: 'tool_call_start', tool_call_id: 'c1', name: 'read_file', arguments: { path: 'a.py' } });
    apply({
      type: 'tool_retry',
      tool_call_id: 'c1',
      name: 'read_file',
      attempt: 1,
      max_attempts: 3,
      reason: 'read_file failed: TimeoutError: slow',
      delay_ms: 250,
    });
    const tool = ofKind(state.view().items, 'tool')[0];
    assert.equal(tool?.statusText, 'retry 1 of 3: read_file failed: TimeoutError: slow');
    assert.equal(tool?.status, 'running');
  });
});

describe('the token counter over a recorded plan-mode run (plan-preview.jsonl)', () => {
  it('shows each run\'s tokens so far at every turn end', () => {
    const recorded = loadEvents('plan-preview.jsonl');
    const state = new PanelState(recorded.find((e) => e.sessionId !== null)?.sessionId ?? null);
    let checked = 0;
    for (const { event } of recorded) {
      state.apply(event);
      if (isKnownEvent(event) && event.type === 'turn_end') {
        assert.deepEqual(state.view().header.runUsage, event.run_usage, `after turn ${event.turn}`);
        checked += 1;
      }
    }
    assert.ok(checked >= 4);
  });
});

describe('a reloaded session', () => {
  const messages: Message[] = [
    { role: 'user', content: 'what is in the project?', origin: 'prompt' },
    { role: 'assistant', content: [{ type: 'text', text: 'app.py and notes.txt' }], usage: { input_tokens: 1900, output_tokens: 30 } },
  ];

  it('shows the session total the server keeps, subagents included', () => {
    const state = PanelState.fromTranscript('s', messages, undefined, { inputTokens: 6100, outputTokens: 165, cacheReadTokens: 3500, cacheWriteTokens: 0 });
    assert.deepEqual(state.view().header.sessionUsage, { input_tokens: 6100, output_tokens: 165, cache_read_tokens: 3500, cache_write_tokens: 0 });
    // The next run adds to it.
    const apply = (event: ReinEvent): boolean => state.apply(event);
    apply({ type: 'run_start', run_id: 'r2', prompt: 'more' });
    apply({ type: 'turn_start', turn: 1 });
    apply({ type: 'turn_end', turn: 1, usage: { input_tokens: 100, output_tokens: 5 }, run_usage: { input_tokens: 100, output_tokens: 5 } });
    assert.equal(state.view().header.sessionUsage.input_tokens, 6200);
  });

  it('sums the transcript when the server sends no total', () => {
    const state = PanelState.fromTranscript('s', messages);
    assert.equal(state.view().header.sessionUsage.input_tokens, 1900);
  });
});
