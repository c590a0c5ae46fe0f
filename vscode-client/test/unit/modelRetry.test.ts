import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PanelState } from '../../src/panel/reducer';

/** An event as the server sends it (apply() checks its type). */
const ev = (event: { type: string } & Record<string, unknown>): { type: string } => event;

const retry = (attempt: number, wait: number) => ev({
  type: 'model_retry',
  provider: 'openai (https://api.openai.com/v1)',
  reason: 'openai (https://api.openai.com/v1) rate limit (HTTP 429): Rate limit reached',
  attempt,
  max_attempts: 4,
  wait_s: wait,
});

function running(): PanelState {
  const state = new PanelState('ses_1');
  state.apply(ev({ type: 'agent_start' }));
  state.apply(ev({ type: 'run_start', run_id: 'run_1', prompt: 'go' }));
  state.apply(ev({ type: 'turn_start', turn: 1 }));
  return state;
}

describe('model_retry', () => {
  it('shows a status line for each retry and clears it when the reply starts', () => {
    const state = running();
    assert.equal(state.apply(retry(1, 20)), true);
    assert.equal(
      state.view().header.retry,
      'Model retry 1 of 4 in 20 s: openai (https://api.openai.com/v1) rate limit (HTTP 429): Rate limit reached',
    );
    state.apply(retry(2, 0.123456));
    assert.match(state.view().header.retry ?? '', /^Model retry 2 of 4 in 0\.123 s: /);
    // A status line, not an item of the conversation.
    assert.deepEqual(state.view().items.map((item) => item.kind), ['user']);
    state.apply(ev({ type: 'message_start', role: 'assistant' }));
    assert.equal(state.view().header.retry, undefined);
  });

  it('clears it when a steer ends the wait (turn_end) or the run ends without a reply', () => {
    const steered = running();
    steered.apply(retry(1, 30));
    steered.apply(ev({ type: 'turn_end', turn: 1, tool_calls: 0, usage: {}, run_usage: {} }));
    assert.equal(steered.view().header.retry, undefined);

    const failed = running();
    failed.apply(retry(4, 1));
    assert.ok(failed.view().header.retry);
    failed.apply(ev({ type: 'run_end', run_id: 'run_1', status: 'failed', reason: 'model error: HTTP 429 (gave up after 5 attempts)', turns: 1, usage: {} }));
    assert.equal(failed.view().header.retry, undefined);
  });
});

describe('model_retry of a subagent', () => {
  it("shows the child's retry in its box until the child's reply starts", () => {
    const state = running();
    const activity = (event: Record<string, unknown>) =>
      ev({ type: 'subagent_activity', tool_call_id: 'call_t', child_id: 'child_1', name: 'task', event });
    state.apply(activity({ type: 'run_start', run_id: 'run_c' }));
    state.apply(activity(retry(1, 5)));
    const box = () => state.view().items.find((item) => item.kind === 'subagent');
    const shown = box();
    assert.ok(shown && shown.kind === 'subagent');
    assert.match(shown.retry ?? '', /^Model retry 1 of 4 in 5 s: openai/);
    assert.equal(state.view().header.retry, undefined); // the parent's request is not waiting
    state.apply(activity({ type: 'message_start', role: 'assistant' }));
    const after = box();
    assert.ok(after && after.kind === 'subagent');
    assert.equal(after.retry, undefined);
  });
});
