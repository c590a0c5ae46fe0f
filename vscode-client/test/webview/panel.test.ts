/**
 * The chat webview in headless Chromium, fed the recorded run the way the
 * extension host feeds it (PanelState -> UpdateBuilder -> postMessage), with
 * the real page (chatHtml: CSP with a nonce) and the built bundle. Saves
 * docs/images/chat-panel.png.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { chatHtml } from '../../src/panel/chatView';
import { PanelState } from '../../src/panel/reducer';
import { UpdateBuilder } from '../../src/panel/updates';
import type { HostMessage, WebviewMessage } from '../../src/shared/messages';
import type { EventEnvelope } from '../../src/shared/protocol';
import { launchChromium } from '../browser';
import { loadEvents, REPO, ROOT } from '../helpers';

const SCREENSHOT = path.join(REPO, 'docs', 'images', 'chat-panel.png');
const NONCE = 'dGVzdG5vbmNl';

/** The page as the extension serves it, plus a stand-in for acquireVsCodeApi. */
function writePage(): string {
  const dist = path.join(ROOT, 'dist', 'webview');
  assert.ok(fs.existsSync(path.join(dist, 'main.js')), 'run scripts/build.mjs first');
  const html = chatHtml(
    { cspSource: 'file:' },
    `file://${path.join(dist, 'main.js')}`,
    `file://${path.join(dist, 'panel.css')}`,
    NONCE,
  );
  const api = `<script nonce="${NONCE}">
  (() => {
    const posted = [];
    let state;
    window.__posted = posted;
    window.acquireVsCodeApi = () => ({
      postMessage: (message) => posted.push(message),
      getState: () => state,
      setState: (next) => { state = next; },
    });
  })();
</script>
`;
  const page = html.replace(`<script nonce="${NONCE}"`, `${api}<script nonce="${NONCE}"`);
  const dir = path.join(ROOT, 'out', 'webview-page');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'index.html');
  fs.writeFileSync(file, page);
  return file;
}

class Host {
  readonly state: PanelState;
  private readonly updates = new UpdateBuilder();

  constructor(
    private readonly page: Page,
    sessionId: string,
  ) {
    this.state = new PanelState(sessionId);
  }

  async post(message: HostMessage): Promise<void> {
    await this.page.evaluate((msg) => {
      (globalThis as unknown as { postMessage(m: unknown, origin: string): void }).postMessage(msg, '*');
    }, message);
  }

  async feed(envelopes: readonly EventEnvelope[]): Promise<void> {
    for (const envelope of envelopes) {
      this.state.apply(envelope.event);
      const update = this.updates.next(this.state.view());
      if (update) {
        await this.post(update);
      }
    }
  }
}

async function posted(page: Page): Promise<WebviewMessage[]> {
  return page.evaluate(() => (globalThis as unknown as { __posted: WebviewMessage[] }).__posted.slice());
}

describe('chat webview in headless Chromium', () => {
  let browser: Browser;
  let page: Page;
  let host: Host;
  const problems: string[] = [];
  const events = loadEvents();

  before(async () => {
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 440, height: 1730 }, deviceScaleFactor: 1 });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) {
        problems.push(`console ${message.type()}: ${message.text()}`);
      }
    });
    await page.goto(`file://${writePage()}`);
    await page.waitForSelector('.composer textarea');
    host = new Host(page, events[0]?.sessionId ?? 's');
    await host.post({ type: 'connection', state: 'running' });
    await host.post({
      type: 'sessions',
      current: events[0]?.sessionId ?? null,
      sessions: [
        { id: events[0]?.sessionId ?? 's', title: 'Fix mean() and report() in calc.py', status: 'completed', updatedAt: 1796208060.25 },
        { id: 's-older', title: 'Add a CLI entry point', status: 'completed', updatedAt: 1796141100.5 },
      ],
    });
  });

  after(async () => {
    await browser.close();
  });

  it('asks the host for its state when it loads', async () => {
    assert.deepEqual((await posted(page))[0], { type: 'ready' });
  });

  it('streams the assistant text while it arrives', async () => {
    const firstText = events.findIndex((e) => e.event.type === 'message_delta' && (e.event as { kind: string }).kind === 'text');
    await host.feed(events.slice(0, firstText + 2));
    const streaming = page.locator('.item.assistant.streaming .md');
    await streaming.waitFor();
    const partial = (await streaming.textContent()) ?? '';
    assert.ok(partial.length > 0 && "I'll read calc.py first and make a short plan.".startsWith(partial), partial);
    assert.equal(await page.locator('.send-label').textContent(), 'Steer');
    assert.equal(await page.locator('.status-line .state').textContent(), 'Running');
  });

  it('renders the whole recorded run', async () => {
    const firstText = events.findIndex((e) => e.event.type === 'message_delta' && (e.event as { kind: string }).kind === 'text');
    await host.feed(events.slice(firstText + 2));
    await page.locator('.item.run-end').waitFor();

    const tools = page.locator('.item.tool');
    assert.deepEqual(await tools.locator('.tool-name').allTextContents(), ['read_file', 'task', 'edit_file', 'edit_file', 'run_command']);
    assert.equal(await page.locator('.item.tool.status-ok').count(), 5);
    assert.deepEqual(await tools.locator('.tool-time').allTextContents(), ['4 ms', '2.3 s', '39 ms', '29 ms', '1.8 s']);
    assert.equal(await page.locator('.item.tool .diff-link').count(), 2);
    assert.equal(await tools.nth(4).locator('.tool-summary').textContent(), 'python -m pytest -q');

    const gates = page.locator('.item.gate');
    assert.equal(await gates.count(), 2);
    assert.match((await gates.nth(0).getAttribute('class')) ?? '', /\bfailed\b/);
    assert.equal(await gates.nth(0).locator('.gate-result').textContent(), '1 blocker');
    assert.equal(await gates.nth(0).locator('.blocker .location').textContent(), 'calc.py:15:42');
    assert.equal(await gates.nth(0).locator('.blocker .code').textContent(), 'F821');
    assert.match((await gates.nth(1).getAttribute('class')) ?? '', /\bpassed\b/);
    assert.equal(await gates.nth(1).locator('.gate-result').textContent(), 'passed');

    assert.equal(await page.locator('.item.repair .repair-title').textContent(), 'Repair attempt 1 of 3');
    assert.equal(await page.locator('.item.repair .dot.used').count(), 1);

    const subagent = page.locator('.item.subagent');
    assert.equal(await subagent.count(), 1);
    assert.match((await subagent.textContent()) ?? '', /Subagent explore\s*completedturn 2 · 1 tool call · 1\.97k tokens/);

    assert.equal(await page.locator('.item.plan .step.done').count(), 3);

    const final = page.locator('.item.assistant').last();
    assert.equal(await final.locator('ol > li').count(), 2);
    assert.equal(await final.locator('pre code').textContent(), '4 passed in 0.03s');
    assert.equal(await page.locator('.item.assistant.streaming').count(), 0);

    const end = page.locator('.item.run-end');
    assert.equal(await end.locator('.run-title').textContent(), 'Run completed');
    assert.equal(await end.locator('.run-meta').textContent(), '6 turns · 1 repair · 18.5k in · 430 out · 12.3k cached');
    assert.equal(await page.locator('.status-line .state').textContent(), 'Idle');
    assert.equal(await page.locator('.send-label').textContent(), 'Send');
    assert.match((await page.locator('.item.user.origin-steer').textContent()) ?? '', /Steeringapplied/);
  });

  it('asks the host to open the diff of an edit and the file of a blocker', async () => {
    const itemId = await page.locator('.item.tool .diff-link').first().getAttribute('data-diff');
    await page.locator('.item.tool .diff-link').first().click();
    await page.locator('.blocker .location').first().click();
    const messages = await posted(page);
    assert.deepEqual(messages.slice(-2), [
      { type: 'openDiff', itemId },
      { type: 'openFile', path: 'calc.py', line: 14, character: 41 },
    ]);
    // The diff link does not fold the row open.
    assert.equal(await page.locator('.item.tool[open]').count(), 0);
  });

  it('sends a prompt with Enter, and while running steers or queues a follow-up', async () => {
    const input = page.locator('.composer textarea');
    await input.fill('Also add a docstring to mean().');
    await input.press('Enter');
    await host.feed([{ sessionId: 's', seq: 0, event: { type: 'agent_start' } }]);
    await input.fill('use a one-line docstring');
    await input.press('Enter');
    await input.fill('then update the README');
    await input.press('Alt+Enter');
    const sends = (await posted(page)).filter((m) => m.type === 'send');
    assert.deepEqual(sends, [
      { type: 'send', text: 'Also add a docstring to mean().', mode: 'auto' },
      { type: 'send', text: 'use a one-line docstring', mode: 'auto' },
      { type: 'send', text: 'then update the README', mode: 'followUp' },
    ]);
    assert.equal(await input.inputValue(), '');
    await page.locator('.composer button.danger').click();
    assert.deepEqual((await posted(page)).at(-1), { type: 'abort' });
    await host.feed([{ sessionId: 's', seq: 0, event: { type: 'agent_end', status: 'completed' } }]);
  });

  it('loaded nothing remote and broke no Content Security Policy rule', () => {
    assert.deepEqual(problems, []);
  });

  it('looks right (docs/images/chat-panel.png)', async () => {
    // Open the test run so the screenshot shows a tool row's details.
    await page.locator('.item.tool').nth(4).locator('summary').click({ position: { x: 8, y: 8 } });
    await page.evaluate(() => {
      const timeline = (globalThis as unknown as { document: { querySelector(s: string): { scrollTop: number } | null } }).document.querySelector('.timeline');
      if (timeline) {
        timeline.scrollTop = 0;
      }
    });
    fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    assert.ok(fs.statSync(SCREENSHOT).size > 10_000);
  });
});
