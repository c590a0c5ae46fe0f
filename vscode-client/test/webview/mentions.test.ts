/**
 * `@` mentions, the `/` list and the untrusted-workspace banner in headless
 * Chromium: `@` asks the host for the picker, the host's picks show as chips
 * that go with the next new prompt, `/` lists the person's slash commands,
 * and an untrusted workspace says why nothing runs.
 * Saves build/screenshots/chat-panel-mentions.png.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { FakePanelHost } from '../fakes';
import { pngSize, screenshotPath } from '../helpers';
import { connectedPanel, posted } from '../page';

const SESSION = 'ses_mentions';
const CALC = 'file:///work/project/src/calc.py';

describe('@ mentions in the chat webview', () => {
  let browser: Browser;
  let page: Page;
  let host: FakePanelHost;
  const problems: string[] = [];

  before(async () => {
    ({ browser, page, host } = await connectedPanel(problems, 700, SESSION));
  });

  after(async () => {
    await browser.close();
  });

  it('opens the picker when @ starts a word, and leaves an @ inside a word alone', async () => {
    const input = page.locator('.composer textarea');
    await input.pressSequentially('mail me@x ');
    assert.ok(!(await posted(page)).some((m) => m.type === 'mention'));
    await input.fill('');
    await input.pressSequentially('explain @');
    assert.deepEqual((await posted(page)).at(-1), { type: 'mention' });
    assert.equal(await input.inputValue(), 'explain ');
    await page.locator('.mention-button').click();
    assert.deepEqual((await posted(page)).at(-1), { type: 'mention' });
  });

  it('shows each pick as a chip, removable, and sends them with the next new prompt', async () => {
    const input = page.locator('.composer textarea');
    await host.post({ type: 'attachment', label: 'src/calc.py', attachments: [{ kind: 'file', uri: CALC }] });
    await host.post({ type: 'attachment', label: 'Terminal: make', attachments: [{ kind: 'terminal', text: '$ make\nok' }] });
    await host.post({
      type: 'attachment',
      label: 'Problems: src/calc.py',
      attachments: [{ kind: 'problems', uri: CALC, diagnostics: [{ range: { start: { line: 4, character: 1 }, end: { line: 4, character: 5 } }, message: 'Undefined name', severity: 1 }] }],
    });
    const chips = page.locator('.attachments .chip-label');
    assert.deepEqual(await chips.allTextContents(), ['@src/calc.py', '@Terminal: make', '@Problems: src/calc.py']);
    await page.locator('.attachments .chip-remove').nth(1).click();
    assert.deepEqual(await chips.allTextContents(), ['@src/calc.py', '@Problems: src/calc.py']);
    await input.fill('explain this');
    await page.screenshot({ path: screenshotPath('chat-panel-mentions.png') });
    assert.deepEqual(pngSize(screenshotPath('chat-panel-mentions.png')), { width: 440, height: 700 });
    await input.press('Enter');
    const send = (await posted(page)).at(-1);
    assert.deepEqual(send, {
      type: 'send',
      text: 'explain this',
      mode: 'auto',
      runMode: 'agent',
      attachments: [
        { kind: 'file', uri: CALC },
        { kind: 'problems', uri: CALC, diagnostics: [{ range: { start: { line: 4, character: 1 }, end: { line: 4, character: 5 } }, message: 'Undefined name', severity: 1 }] },
      ],
    });
    assert.equal(await chips.count(), 0);
    assert.equal(await page.locator('.attachments').isHidden(), true);
  });

  it('keeps the chips for the next prompt while a run is active (steering carries text only)', async () => {
    const input = page.locator('.composer textarea');
    await host.feed([{ sessionId: SESSION, seq: 0, event: { type: 'agent_start' } }]);
    await host.post({ type: 'attachment', label: 'src/calc.py', attachments: [{ kind: 'file', uri: CALC }] });
    await input.fill('use pathlib');
    await input.press('Enter');
    assert.deepEqual((await posted(page)).at(-1), { type: 'send', text: 'use pathlib', mode: 'auto', runMode: 'agent' });
    assert.deepEqual(await page.locator('.attachments .chip-label').allTextContents(), ['@src/calc.py']);
    await host.feed([{ sessionId: SESSION, seq: 0, event: { type: 'agent_end', status: 'completed' } }]);
  });

  it('lists the slash commands when / starts the prompt, filters them, and fills the one picked', async () => {
    const input = page.locator('.composer textarea');
    const list = page.locator('.command-list');
    await input.fill('');
    await input.pressSequentially('/');
    assert.deepEqual((await posted(page)).at(-1), { type: 'listCommands' });
    await host.post({
      type: 'commands',
      commands: [
        { name: 'review:file', description: 'Review one file for one concern', argumentHint: 'FILE CONCERN', source: '.claude/commands/review/file.md' },
        { name: 'explain', description: 'Explain a module', argumentHint: null, source: '.github/prompts/explain.prompt.md' },
      ],
    });
    assert.deepEqual(await list.locator('.command-name').allTextContents(), ['/review:file FILE CONCERN', '/explain']);
    assert.deepEqual(await list.locator('.command-description').allTextContents(), ['Review one file for one concern', 'Explain a module']);
    await input.pressSequentially('re');
    assert.deepEqual(await list.locator('.command-name').allTextContents(), ['/review:file FILE CONCERN']);
    await list.locator('.command-item').click();
    assert.equal(await input.inputValue(), '/review:file ');
    assert.equal(await list.isHidden(), true);
    // A path is not a command: no list.
    await input.fill('');
    await input.pressSequentially('/etc/hosts');
    assert.equal(await list.isHidden(), true);
    await input.fill('');
  });

  it('says an untrusted workspace runs nothing, offers to manage trust, and sends nothing', async () => {
    await host.post({ type: 'connection', state: 'untrusted', detail: 'ignored' });
    const banner = page.locator('.banner');
    assert.equal(await banner.locator('.banner-text').textContent(), 'Rein starts its server and runs commands only in a trusted workspace.');
    await banner.locator('button').click();
    assert.deepEqual((await posted(page)).at(-1), { type: 'command', command: 'manageTrust' });
    await page.locator('.composer textarea').fill('hello');
    assert.equal(await page.locator('.composer button.primary').isDisabled(), true);
  });

  it('shows code in notices and banners as code, not raw backticks', async () => {
    await host.post({ type: 'connection', state: 'running' });
    host.state.notice('error', 'Undefined name `nmae`');
    await host.flush();
    const notice = page.locator('.item.notice').last();
    assert.equal(await notice.textContent(), 'Undefined name nmae');
    assert.equal(await notice.locator('code').textContent(), 'nmae');
    await host.post({ type: 'connection', state: 'missing', detail: 'no `rein` on PATH' });
    assert.equal(await page.locator('.banner code').textContent(), 'rein');
    await host.post({ type: 'connection', state: 'running' });
  });

  it('offers Set API Key on a run that failed on its key, and says the reason once', async () => {
    const reason = 'openai rejected the credentials (HTTP 401): bad key; the API key was read from the environment variable OPENAI_API_KEY (is not set)';
    await host.feed(
      [
        { type: 'agent_start' },
        { type: 'run_start', run_id: 'rk', prompt: 'go' },
        { type: 'error', message: reason, where: 'run', fatal: true },
        { type: 'run_end', run_id: 'rk', status: 'failed', reason, turns: 1 },
        { type: 'agent_end', status: 'failed' },
      ].map((event) => ({ sessionId: SESSION, seq: 0, event })),
    );
    const text = (await page.locator('.timeline').textContent()) ?? '';
    assert.equal(text.split('rejected the credentials').length - 1, 1);
    await page.locator('.item.run-end button[data-command="setApiKey"]').last().click();
    assert.deepEqual((await posted(page)).at(-1), { type: 'command', command: 'setApiKey' });
  });

  it('shows a prompt with attachments as its text and each attachment folded under its name', async () => {
    const prompt = 'explain this\n\n<attachment kind="file" path="src/calc.py">\ndef add(a, b):\n    return a - b\n</attachment>\n\n<attachment kind="terminal">\n$ make\nok\n</attachment>';
    await host.post({ type: 'connection', state: 'running' });
    await host.feed([
      { sessionId: SESSION, seq: 0, event: { type: 'agent_start' } },
      { sessionId: SESSION, seq: 0, event: { type: 'run_start', run_id: 'ra', prompt } },
      { sessionId: SESSION, seq: 0, event: { type: 'turn_start', turn: 1 } },
    ]);
    const user = page.locator('.item.user').last();
    assert.equal(await user.locator('.user-text').textContent(), 'explain this');
    assert.deepEqual(await user.locator('.user-attachment > summary').allTextContents(), ['@src/calc.py', '@Terminal']);
    assert.equal(await user.locator('.attachment-body').first().isVisible(), false);
    await user.locator('.user-attachment > summary').first().click();
    assert.equal(await user.locator('.attachment-body').first().textContent(), 'def add(a, b):\n    return a - b');
    assert.ok(!((await user.textContent()) ?? '').includes('<attachment'));
    await host.feed([{ sessionId: SESSION, seq: 0, event: { type: 'agent_end', status: 'completed' } }]);
  });

  it('broke nothing on the page', () => {
    assert.deepEqual(problems, []);
  });
});
