import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApprovalsModel } from '../../src/panel/approvals';
import { ChatController } from '../../src/panel/controller';
import { CONTINUE_PROMPT, costLine, formatCost, isBudgetStop } from '../../src/panel/cost';
import { PanelState } from '../../src/panel/reducer';
import { UpdateBuilder } from '../../src/panel/updates';
import type { ReinEvent } from '../../src/shared/protocol';
import { envelope, FakeConnection, nextEvent } from '../fakes';

function apply(state: PanelState, ...events: Record<string, unknown>[]): void {
  for (const event of events) {
    state.apply(event as unknown as ReinEvent);
  }
}

describe('the cost line', () => {
  it('says tokens in and out, the cached part, the context share and the cost, as $/progress does', () => {
    const usage = { input_tokens: 8200, output_tokens: 1100, cache_read_tokens: 4100 };
    assert.equal(
      costLine(usage, { used: 43000, window: 128000, share: 0.3359 }, 0.0412),
      '12.3k in (4.1k cached) / 1.1k out · 34% of context · $0.04',
    );
  });

  it('leaves the cost out when the price is unknown, and is empty before anything is spent', () => {
    assert.equal(costLine({ input_tokens: 900, output_tokens: 20 }, null, null), '900 in / 20 out');
    assert.equal(costLine({}, undefined, undefined), '');
    assert.equal(formatCost(0.0021), '$0.0021');
    assert.equal(formatCost(1.5), '$1.50');
  });

  it('knows a budget stop by its failed status and reason', () => {
    assert.equal(isBudgetStop('failed', 'budget: the run cost $0.52, more than harness.maxCostPerRun ($0.50)'), true);
    assert.equal(isBudgetStop('failed', 'model error: 500'), false);
    assert.equal(isBudgetStop('completed', 'budget: x'), false);
    assert.equal(isBudgetStop('failed', null), false);
  });
});

describe('the header over the events of a run', () => {
  it('follows turn_end and run_end, and offers Continue after a budget stop until the next run', () => {
    const state = new PanelState('s1');
    apply(
      state,
      { type: 'agent_start' },
      { type: 'run_start', run_id: 'r1' },
      { type: 'turn_start', turn: 1 },
      {
        type: 'turn_end',
        turn: 1,
        usage: { input_tokens: 1000, output_tokens: 100 },
        run_usage: { input_tokens: 1000, output_tokens: 100 },
        cost: 0.002,
        run_cost: 0.002,
        context: { used: 1000, window: 10000, share: 0.1 },
      },
    );
    assert.equal(state.view().header.costLine, '1.0k in / 100 out · 10% of context · $0.0020');
    const reason = 'budget: the run processed 1,220 tokens, more than harness.maxTokensPerRun (1,000); continue to go on';
    apply(state, {
      type: 'run_end',
      run_id: 'r1',
      status: 'failed',
      reason,
      turns: 1,
      usage: { input_tokens: 1000, output_tokens: 100 },
      cost: null,
      context: { used: 1000, window: 10000, share: 0.1 },
    });
    assert.equal(state.view().header.costLine, '1.0k in / 100 out · 10% of context', 'no cost when it is unknown');
    assert.equal(state.view().header.budgetStop, reason);
    apply(state, { type: 'run_start', run_id: 'r2' });
    assert.equal(state.view().header.budgetStop, undefined);
  });

  it('has no budget stop for another failure', () => {
    const state = new PanelState('s1');
    apply(state, { type: 'run_start', run_id: 'r1' }, { type: 'run_end', run_id: 'r1', status: 'failed', reason: 'model error: boom' });
    assert.equal(state.view().header.budgetStop, undefined);
  });
});

describe('the approval rules section', () => {
  const result = {
    rules: [
      { id: 'b', scope: 'session', kind: 'command', pattern: 'npm test', sessionId: 's1' },
      { id: 'a', scope: 'workspace', kind: 'write', pattern: 'src/**' },
      { id: 'x', scope: 'forever', kind: 'command', pattern: 'rm' },
      { scope: 'workspace', kind: 'command', pattern: 'no id' },
    ],
  };

  it('takes the list from rein/approvals, the workspace first, leaving out what is not a rule', () => {
    const model = new ApprovalsModel();
    model.setSnapshot(result as never);
    assert.deepEqual(
      model.view().rules.map((r) => [r.id, r.scope, r.pattern]),
      [
        ['a', 'workspace', 'src/**'],
        ['b', 'session', 'npm test'],
      ],
    );
    const rev = model.rev;
    model.setSnapshot(result as never);
    assert.equal(model.rev, rev, 'the same list is no change');
    model.remove('a');
    assert.deepEqual(model.view().rules.map((r) => r.id), ['b']);
    assert.equal(model.rev, rev + 1);
  });

  it('is sent to the webview when it changes', () => {
    const model = new ApprovalsModel();
    const state = new PanelState('s1');
    const builder = new UpdateBuilder();
    const view = () => ({ ...state.view(), approvals: model.view() });
    assert.ok(builder.next(view())?.approvals, 'after a reset');
    assert.equal(builder.next(view()), undefined);
    model.setSnapshot(result as never);
    assert.equal(builder.next(view())?.approvals?.rules.length, 2);
  });

  it('is loaded for the shown session, refreshed after a run, and a rule revoked with rein/approvals/revoke', async () => {
    const connection = new FakeConnection();
    let rules = result.rules.slice(0, 2);
    connection.responders.set('rein/sessions', () => ({ sessions: [] }));
    connection.responders.set('rein/checkpoints', () => ({ runs: [] }));
    connection.responders.set('rein/review', () => ({ runs: [] }));
    connection.responders.set('rein/approvals', () => ({ rules }));
    connection.responders.set('rein/approvals/revoke', (params) => {
      rules = rules.filter((r) => r.id !== params.id);
      return { revoked: true };
    });
    const controller = new ChatController(connection, undefined);
    const shown = nextEvent(controller.onDidChange, () => controller.view().approvals?.rules.length === 2);
    connection.emit(envelope(1, { type: 'agent_start' }));
    await shown;
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/approvals')?.params, { sessionId: 's1' });

    await controller.revokeApproval('a');
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/approvals/revoke')?.params, { id: 'a' });
    assert.deepEqual(controller.view().approvals?.rules.map((r) => r.id), ['b']);

    const asked = connection.requests.filter((r) => r.method === 'rein/approvals').length;
    connection.emit(envelope(2, { type: 'run_start', run_id: 'r1' }));
    connection.emit(envelope(3, { type: 'run_end', run_id: 'r1', status: 'completed' }));
    assert.equal(connection.requests.filter((r) => r.method === 'rein/approvals').length, asked + 1, 'asked again after the run');
    controller.dispose();
  });

  it('says in the timeline when a revoke fails', async () => {
    const connection = new FakeConnection();
    connection.responders.set('rein/approvals', () => ({ rules: [] }));
    connection.responders.set('rein/approvals/revoke', () => {
      throw new Error('rein/approvals/revoke: invalid params: id: no rule');
    });
    const controller = new ChatController(connection, undefined);
    await controller.revokeApproval('gone');
    const notices = controller.state.view().items.filter((item) => item.kind === 'notice');
    assert.match(JSON.stringify(notices), /Revoking the approval rule failed: .*no rule/);
    controller.dispose();
  });
});

describe('Continue after a budget stop', () => {
  it('is the follow-up prompt "continue"', () => {
    assert.equal(CONTINUE_PROMPT, 'continue');
  });
});
