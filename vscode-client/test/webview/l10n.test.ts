/**
 * The panel in another language: the page loaded with a pseudo-localized
 * bundle (every string of l10n/bundle.l10n.json as "[xx] …", as the
 * extension passes `vscode.l10n.bundle`) shows its placeholder, mode labels,
 * button titles and item headers translated, with the values in place, and
 * the words the host's view-model code makes (src/shared, the reducer: a
 * notice, the cost line, usage lines, durations) in the same language.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { FakePanelHost } from '../fakes';
import { loadEvents, pseudoBundle } from '../helpers';
import { connectedPanel } from '../page';

async function texts(page: Page, selector: string): Promise<string[]> {
  return (await page.locator(selector).allTextContents()).map((text) => text.trim());
}

describe('the panel with a pseudo-localized bundle', () => {
  let browser: Browser;
  let page: Page;
  let host: FakePanelHost;
  const problems: string[] = [];
  const events = loadEvents();

  before(async () => {
    ({ browser, page, host } = await connectedPanel(problems, 1200, events[0]?.sessionId ?? 's', { language: 'xx', bundle: pseudoBundle() }));
    await host.feed(events);
  });

  after(async () => {
    await browser?.close();
  });

  it('translates the composer: placeholder, mode labels, button titles', async () => {
    assert.equal(await page.getAttribute('.prompt-input', 'placeholder'), '[xx] Ask Rein to change something…');
    assert.deepEqual(await texts(page, '.mode-option'), ['[xx] Agent', '[xx] Plan']);
    assert.equal(await page.getAttribute('.mode-option[data-mode="plan"]', 'title'), '[xx] Plan mode: Rein first makes a plan, then carries it out step by step');
    assert.equal(await page.getAttribute('.composer .primary', 'title'), '[xx] Send (Enter)');
    assert.equal(await page.getAttribute('.icon-button[aria-label="[xx] New session"]', 'title'), '[xx] New session');
    assert.equal(await page.getAttribute('html', 'lang'), 'xx');
  });

  it('translates item headers with their values in place', async () => {
    assert.deepEqual(await texts(page, '.repair-title'), ['[xx] Repair attempt 1 of 3']);
    const runTitles = await texts(page, '.run-title');
    assert.ok(runTitles.length > 0 && runTitles.every((t) => t.startsWith('[xx] Run [xx] ')), runTitles.join(' | '));
    const labels = await texts(page, '.tool-body .label');
    assert.ok(labels.includes('[xx] Arguments'), labels.join(' | '));
    assert.deepEqual(problems, []);
  });

  it("translates the host-built words: a reducer notice, the cost line, the run's usage, tool durations", async () => {
    const notices = await texts(page, '.item.notice');
    assert.deepEqual(notices, ['[xx] Context compacted (elide): 14,210 → 9,870 tokens, 2 messages · oldest tool results elided']);
    assert.equal(await page.textContent('.cost-line'), '[xx] 30.7k in (12.3k cached) / 430 out');
    const meta = await texts(page, '.run-end .run-meta');
    assert.ok(meta.length > 0 && meta.every((m) => /· \[xx\] [\d.]+k? in · [\d.]+k? out/.test(m)), meta.join(' | '));
    const times = (await texts(page, '.tool-time')).filter(Boolean);
    assert.ok(times.length > 0 && times.every((t) => /^\[xx\] [\d.]+ (ms|s)$/.test(t)), times.join(' | '));
    assert.deepEqual(problems, []);
  });

  it('translates a connection banner with its detail', async () => {
    await host.post({ type: 'connection', state: 'failed', detail: 'exit code 3' });
    assert.equal(await page.textContent('.banner .banner-text'), '[xx] The Rein server keeps stopping: exit code 3');
    assert.equal(await page.textContent('.banner .link-button'), '[xx] Restart');
  });
});
