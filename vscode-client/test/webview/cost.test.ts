/**
 * The cost line, the Continue offer after a budget stop and the approval
 * rules section in headless Chromium, fed the way the extension host feeds
 * the page (PanelState -> UpdateBuilder -> postMessage).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { FakePanelHost } from '../fakes';
import { connectedPanel, posted } from '../page';

const SESSION = 'ses_cost';
const REASON = 'budget: the run cost $0.5212, more than harness.maxCostPerRun ($0.5000); continue to go on';

function event(type: string, fields: Record<string, unknown> = {}) {
  return { sessionId: SESSION, seq: 0, event: { type, ...fields } };
}

describe('cost and approvals in the chat webview', () => {
  let browser: Browser;
  let page: Page;
  let host: FakePanelHost;
  const problems: string[] = [];

  before(async () => {
    ({ browser, page, host } = await connectedPanel(problems, 900, SESSION));
  });

  after(async () => {
    await browser.close();
  });

  it('shows no cost line and no rules before anything happened', async () => {
    await host.flush();
    assert.equal(await page.locator('.cost-line').isHidden(), true);
    assert.equal(await page.locator('.approvals-section').isHidden(), true);
    assert.equal(await page.locator('.budget-stop').isHidden(), true);
  });

  it('shows the run\'s tokens, context share and cost as turns end', async () => {
    await host.feed([
      event('agent_start'),
      event('run_start', { run_id: 'r1' }),
      event('turn_start', { turn: 1 }),
      event('turn_end', {
        turn: 1,
        usage: { input_tokens: 12000, output_tokens: 1100, cache_read_tokens: 300 },
        run_usage: { input_tokens: 12000, output_tokens: 1100, cache_read_tokens: 300 },
        cost: 0.041,
        run_cost: 0.041,
        context: { used: 12300, window: 36000, share: 0.3417 },
      }),
    ]);
    assert.equal(await page.locator('.cost-line').textContent(), '12.3k in (300 cached) / 1.1k out · 34% of context · $0.04');
  });

  it('offers Continue when the run ends on its budget, which asks the host to continue', async () => {
    await host.feed([
      event('budget_exceeded', { limit: 'cost', spent: 0.5212, allowed: 0.5 }),
      event('run_end', { run_id: 'r1', status: 'failed', reason: REASON, usage: {}, cost: 0.5212 }),
      event('agent_end', { status: 'failed' }),
    ]);
    const stop = page.locator('.budget-stop');
    await stop.waitFor();
    assert.match((await stop.locator('.budget-text').textContent()) ?? '', /^Stopped: the run cost \$0\.5212, more than harness\.maxCostPerRun/);
    await stop.locator('.budget-continue').click();
    assert.deepEqual((await posted(page)).at(-1), { type: 'continueRun' });
    await host.feed([event('run_start', { run_id: 'r2' })]);
    assert.equal(await stop.isHidden(), true, 'gone once the next run starts');
  });

  it('lists the rules kept with Always allow, and Revoke asks the host to revoke one', async () => {
    host.approvals.setSnapshot({
      rules: [
        { id: 'rule_s', scope: 'session', kind: 'command', pattern: 'npm test' },
        { id: 'rule_w', scope: 'workspace', kind: 'write', pattern: 'src/**' },
      ],
    });
    await host.flush();
    const section = page.locator('.approvals-section');
    await section.waitFor();
    assert.equal(await section.locator('.approval-count').textContent(), '2 rules');
    await section.locator('summary').click();
    const rows = await Promise.all(
      (await section.locator('.approval-rule').all()).map(async (row) => [
        await row.locator('.approval-scope').textContent(),
        await row.locator('.approval-kind').textContent(),
        await row.locator('.approval-pattern').textContent(),
      ]),
    );
    assert.deepEqual(rows, [
      ['workspace', 'writes', 'src/**'],
      ['session', 'command', 'npm test'],
    ]);
    await section.locator('.approval-rule[data-rule="rule_s"] .approval-revoke').click();
    assert.deepEqual((await posted(page)).at(-1), { type: 'revokeApproval', id: 'rule_s' });
    host.approvals.remove('rule_s');
    await host.flush();
    assert.equal(await section.locator('.approval-rule').count(), 1);
  });

  it('broke no Content Security Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
