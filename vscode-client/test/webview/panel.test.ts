/**
 * The chat webview in headless Chromium, fed the recorded runs the way the
 * extension host feeds it (PanelState -> UpdateBuilder -> postMessage), with
 * the real page (chatHtml: CSP with a nonce) and the built bundle. The
 * "looks right" tests check what the picture shows (rows, texts, classes, no
 * overflow) and save build/screenshots/chat-panel.png (an agent run, the
 * preview section open) and chat-panel-plan.png (a plan-mode run); `make
 * screenshots` copies them to docs/images, the tests never write there.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { FakePanelHost } from '../fakes';
import { loadEvents, pngSize, screenshotPath } from '../helpers';
import { connectedPanel, posted } from '../page';

const SCREENSHOT = screenshotPath('chat-panel.png');
const PLAN_SCREENSHOT = screenshotPath('chat-panel-plan.png');

async function scrollTimelineToTop(page: Page): Promise<void> {
  await page.evaluate(() => {
    const timeline = (globalThis as unknown as { document: { querySelector(s: string): { scrollTop: number } | null } }).document.querySelector('.timeline');
    if (timeline) {
      timeline.scrollTop = 0;
    }
  });
}

/** What a screenshot of the page shows: the timeline's rows in view, the open rows, whether anything overflows sideways. */
interface Picture {
  scrollTop: number;
  overflow: string[];
  rows: { classes: string; text: string; inView: boolean; open: boolean }[];
}

async function picture(page: Page): Promise<Picture> {
  return page.evaluate(() => {
    interface Box { top: number; bottom: number }
    interface El {
      className: string;
      textContent: string | null;
      scrollWidth: number;
      clientWidth: number;
      scrollTop: number;
      hasAttribute(name: string): boolean;
      getBoundingClientRect(): Box;
      querySelectorAll(selector: string): Iterable<El>;
    }
    const doc = (globalThis as unknown as { document: El & { querySelector(s: string): El | null } }).document;
    const timeline = doc.querySelector('.timeline');
    if (!timeline) {
      throw new Error('no timeline');
    }
    const view = timeline.getBoundingClientRect();
    const overflow = [...doc.querySelectorAll('.timeline, .timeline .item, .composer, .status-line, .preview-section')]
      .filter((el) => el.scrollWidth > el.clientWidth + 1)
      .map((el) => el.className);
    const rows = [...timeline.querySelectorAll(':scope > .item')].map((el) => {
      const box = el.getBoundingClientRect();
      return {
        classes: el.className,
        text: (el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60),
        inView: box.bottom > view.top && box.top < view.bottom,
        open: el.hasAttribute('open'),
      };
    });
    return { scrollTop: timeline.scrollTop, overflow, rows };
  });
}

const planEvents = loadEvents('plan-preview.jsonl');
/** The preview's events of the plan run up to before it was stopped: running, reloaded twice. */
const previewEvents = planEvents.slice(0, planEvents.findIndex((e) => e.event.type === 'preview_stopped')).filter((e) => e.event.type.startsWith('preview_'));

describe('chat webview in headless Chromium', () => {
  let browser: Browser;
  let page: Page;
  let host: FakePanelHost;
  const problems: string[] = [];
  const events = loadEvents();

  before(async () => {
    ({ browser, page, host } = await connectedPanel(problems, 1960, events[0]?.sessionId ?? 's'));
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

  it('hides the preview section until a preview is known, and offers agent and plan mode for a new prompt', async () => {
    assert.equal(await page.locator('.preview-section').count(), 1);
    assert.equal(await page.locator('.preview-section').isHidden(), true);
    const modes = page.locator('.composer .mode-toggle [role="radio"]');
    assert.deepEqual(await modes.allTextContents(), ['Agent', 'Plan']);
    assert.deepEqual(await Promise.all((await modes.all()).map((mode) => mode.getAttribute('aria-checked'))), ['true', 'false']);
    await modes.nth(1).click();
    assert.equal(await modes.nth(1).getAttribute('aria-checked'), 'true');
    assert.match((await page.locator('.composer textarea').getAttribute('placeholder')) ?? '', /plans it/);
    await modes.nth(0).click();
    assert.equal(await modes.nth(0).getAttribute('aria-checked'), 'true');
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

  it('sends a prompt with Enter in the chosen mode, and while running steers or queues a follow-up', async () => {
    const input = page.locator('.composer textarea');
    await page.locator('.mode-toggle [data-mode="plan"]').click();
    await input.fill('Also add a docstring to mean().');
    await input.press('Enter');
    await host.feed([{ sessionId: 's', seq: 0, event: { type: 'agent_start' } }]);
    await page.locator('.mode-toggle').waitFor({ state: 'hidden' }); // Enter steers now: the mode is for a new prompt
    await input.fill('use a one-line docstring');
    await input.press('Enter');
    await input.fill('then update the README');
    await input.press('Alt+Enter');
    const sends = (await posted(page)).filter((m) => m.type === 'send');
    assert.deepEqual(sends, [
      { type: 'send', text: 'Also add a docstring to mean().', mode: 'auto', runMode: 'plan' },
      { type: 'send', text: 'use a one-line docstring', mode: 'auto', runMode: 'plan' },
      { type: 'send', text: 'then update the README', mode: 'followUp', runMode: 'plan' },
    ]);
    assert.equal(await input.inputValue(), '');
    await page.locator('.composer button.danger').click();
    assert.deepEqual((await posted(page)).at(-1), { type: 'abort' });
    await host.feed([{ sessionId: 's', seq: 0, event: { type: 'agent_end', status: 'completed' } }]);
    await page.locator('.mode-toggle [data-mode="agent"]').click();
  });

  it('shows the preview\'s state and last lines in a collapsible section whose buttons ask the host', async () => {
    await host.feed(previewEvents);
    const section = page.locator('.preview-section');
    await section.waitFor();
    assert.match((await section.getAttribute('class')) ?? '', /\bstate-running\b/);
    assert.equal(await section.locator('.preview-state').textContent(), 'running');
    assert.equal(await section.locator('.preview-command').textContent(), 'python app.py');
    assert.match((await section.locator('.preview-meta').textContent()) ?? '', /^pid \d+ · gen 2$/);
    assert.equal(await section.getAttribute('open'), null, 'collapsed until opened');
    await section.locator('summary').click();
    const lines = ((await section.locator('.preview-lines').textContent()) ?? '').split('\n');
    assert.deepEqual(lines.slice(-2), ['threshold is 0', 'ready']);
    assert.equal(lines.length, 13);
    assert.equal(await section.locator('.preview-error').isHidden(), true, 'the reload after the repair cleared the error');
    assert.deepEqual(
      await Promise.all((await section.locator('.preview-actions button').all()).map(async (button) => [await button.textContent(), await button.isDisabled()])),
      [
        ['Start', true],
        ['Restart', false],
        ['Stop', false],
      ],
    );
    await section.locator('button.preview-restart').click();
    await section.locator('button.preview-stop').click();
    assert.deepEqual((await posted(page)).slice(-2), [
      { type: 'preview', action: 'restart' },
      { type: 'preview', action: 'stop' },
    ]);
    // While the request is under way.
    host.state.preview.setPending('restart');
    await host.flush();
    assert.equal(await section.locator('.preview-state').textContent(), 'restarting…');
    assert.equal(await section.locator('.preview-actions button:disabled').count(), 3);
    host.state.preview.setPending(undefined);
    await host.flush();
    assert.equal(await section.locator('.preview-actions button:disabled').count(), 1);
  });

  it('loaded nothing remote and broke no Content Security Policy rule', () => {
    assert.deepEqual(problems, []);
  });

  it('looks right: the run from its top, the test run open, the preview section open (chat-panel.png)', async () => {
    // Open the test run so the screenshot shows a tool row's details.
    await page.locator('.item.tool').nth(4).locator('summary').click({ position: { x: 8, y: 8 } });
    await scrollTimelineToTop(page);
    const shown = await picture(page);
    assert.equal(shown.scrollTop, 0);
    assert.deepEqual(shown.overflow, [], 'nothing wider than the panel');
    assert.deepEqual(
      shown.rows.map((row) => row.classes),
      [
        'item user origin-prompt',
        'item assistant', // thinking, then the plan
        'item tool status-ok', // read_file
        'item plan',
        'item assistant',
        'item tool status-ok', // task
        'item subagent completed',
        'item assistant',
        'item tool status-ok', // edit_file
        'item user origin-steer',
        'item assistant',
        'item gate failed',
        'item repair',
        'item assistant',
        'item tool status-ok', // edit_file
        'item tool status-ok', // run_command
        'item notice info', // the compaction
        'item assistant',
        'item gate passed',
        'item run-end completed',
      ],
    );
    assert.ok(shown.rows.every((row) => row.inView), 'the whole run is in the picture');
    const opened = shown.rows.filter((row) => row.open);
    assert.equal(opened.length, 1, 'only the test run is open');
    assert.match(opened[0]?.text ?? '', /^run_commandpython -m pytest -q1\.8 s/);
    assert.match(shown.rows[0]?.text ?? '', /^Youmean\(\) crashes on an empty list/);
    assert.match(shown.rows.at(-1)?.text ?? '', /^Run completed6 turns · 1 repair/);
    const open = page.locator('.item.tool[open]');
    assert.match((await open.textContent()) ?? '', /4 passed in 0\.03s/);
    assert.equal(await open.locator('.tool-summary').textContent(), 'python -m pytest -q');
    const section = page.locator('.preview-section');
    assert.deepEqual([await section.getAttribute('open'), await section.locator('.preview-state').textContent()], ['', 'running']);
    assert.equal(await section.locator('.preview-lines').isVisible(), true);
    await page.screenshot({ path: SCREENSHOT });
    assert.deepEqual(pngSize(SCREENSHOT), { width: 440, height: 1960 });
  });
});

describe('a plan-mode run with the preview in headless Chromium (plan-preview.jsonl)', () => {
  let browser: Browser;
  let page: Page;
  let host: FakePanelHost;
  const problems: string[] = [];

  before(async () => {
    const sessionId = planEvents.find((e) => e.sessionId !== null)?.sessionId ?? 's';
    ({ browser, page, host } = await connectedPanel(problems, 1370, sessionId));
    await host.post({
      type: 'sessions',
      current: sessionId,
      sessions: [{ id: sessionId, title: 'Lower THRESHOLD in settings.py by 4; the app must keep running.', status: 'completed', updatedAt: 1796212800.5 }],
    });
    await host.feed(planEvents);
    await page.locator('.item.run-end').waitFor();
  });

  after(async () => {
    await browser.close();
  });

  it('shows the task once, the plan with its steps, a divider per step and one end', async () => {
    assert.deepEqual(await page.locator('.item.user .user-text').allTextContents(), ['Lower THRESHOLD in settings.py by 4; the app must keep running.']);
    const plan = page.locator('.item.plan');
    assert.equal(await plan.count(), 1);
    assert.equal(await plan.locator('.badge').textContent(), 'completed');
    assert.equal(await plan.locator('.muted.right').textContent(), '2 of 2 done');
    assert.deepEqual(await plan.locator('.step.done').allTextContents(), [
      'Read settings.py to find THRESHOLD — THRESHOLD is 3',
      'Lower THRESHOLD by 4 in settings.py — THRESHOLD = 0 (the app rejects negative values)',
    ]);
    assert.deepEqual(await page.locator('.item.step-start').allTextContents(), [
      'Step 1 of 2Read settings.py to find THRESHOLD',
      'Step 2 of 2Lower THRESHOLD by 4 in settings.py',
    ]);
    assert.deepEqual(await page.locator('.item.tool .tool-name').allTextContents(), ['read_file', 'edit_file', 'edit_file']);
    assert.equal(await page.locator('.item.run-end').count(), 1);
    assert.equal(await page.locator('.item.run-end .run-meta').textContent(), '8 turns · 1 repair · 11.9k in · 329 out');
    assert.equal(await page.locator('.item.gate.failed .gate-title').textContent(), 'Gate runtime_observation');
    assert.equal(await page.locator('.status-line .state').textContent(), 'Idle');
  });

  it('shows the stopped preview, ready to start again', async () => {
    const section = page.locator('.preview-section');
    assert.equal(await section.locator('.preview-state').textContent(), 'stopped');
    await section.locator('summary').click();
    assert.equal(await section.locator('.preview-detail').textContent(), 'stopped on request');
    assert.deepEqual(
      await Promise.all((await section.locator('.preview-actions button').all()).map((button) => button.isDisabled())),
      [false, false, true],
    );
  });

  it('loaded nothing remote, broke no CSP rule, and looks right: the plan from its top, the preview folded (chat-panel-plan.png)', async () => {
    assert.deepEqual(problems, []);
    await page.locator('.preview-section > summary').click(); // folded: one line
    await page.locator('.mode-toggle [data-mode="plan"]').click();
    await scrollTimelineToTop(page);
    const shown = await picture(page);
    assert.equal(shown.scrollTop, 0);
    assert.deepEqual(shown.overflow, [], 'nothing wider than the panel');
    assert.deepEqual(
      shown.rows.map((row) => row.classes),
      [
        'item user origin-prompt',
        'item assistant',
        'item plan',
        'item step-start',
        'item tool status-ok', // read_file
        'item step-start',
        'item assistant',
        'item tool status-ok', // edit_file
        'item gate passed', // preview_load
        'item gate failed', // runtime_observation: the traceback
        'item repair',
        'item assistant',
        'item tool status-ok', // edit_file
        'item gate passed',
        'item gate passed',
        'item gate passed',
        'item assistant',
        'item run-end completed',
      ],
    );
    assert.ok(shown.rows.every((row) => row.inView && !row.open), 'the whole run is in the picture, every row folded');
    assert.match(shown.rows[2]?.text ?? '', /^Plancompleted2 of 2 done/);
    const section = page.locator('.preview-section');
    assert.deepEqual([await section.getAttribute('open'), await section.locator('.preview-state').textContent()], [null, 'stopped']);
    assert.equal(await section.locator('.preview-lines').isVisible(), false, 'folded: one line');
    assert.equal(await page.locator('.mode-toggle [data-mode="plan"]').getAttribute('aria-checked'), 'true');
    await page.screenshot({ path: PLAN_SCREENSHOT });
    assert.deepEqual(pngSize(PLAN_SCREENSHOT), { width: 440, height: 1370 });
  });
});
