/**
 * The chat page as the extension serves it (chatHtml: CSP with a nonce, the
 * built bundle), opened in headless Chromium with a stand-in for
 * acquireVsCodeApi that records what the page posts.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chatHtml, type PageLocale } from '../src/panel/chatView';
import { useBundle } from '../src/shared/l10n';
import type { WebviewMessage } from '../src/shared/messages';
import { launchChromium } from './browser';
import { FakePanelHost } from './fakes';
import { ROOT } from './helpers';

const NONCE = 'dGVzdG5vbmNl';

/** The page as the extension serves it (in `locale`'s language), plus a stand-in for acquireVsCodeApi. */
function writePage(locale: PageLocale): string {
  const dist = path.join(ROOT, 'dist', 'webview');
  assert.ok(fs.existsSync(path.join(dist, 'main.js')), 'run scripts/build.mjs first');
  const html = chatHtml(
    { cspSource: 'file:' },
    `file://${path.join(dist, 'main.js')}`,
    `file://${path.join(dist, 'panel.css')}`,
    NONCE,
    locale,
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

export async function posted(page: Page): Promise<WebviewMessage[]> {
  return page.evaluate(() => (globalThis as unknown as { __posted: WebviewMessage[] }).__posted.slice());
}

/** A fresh page with the panel (translated with `locale.bundle`, if any); records page errors and CSP reports in `problems`. */
export async function openPanel(browser: Browser, problems: string[], height: number, locale: PageLocale = {}): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 440, height }, deviceScaleFactor: 1 });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) {
      problems.push(`console ${message.type()}: ${message.text()}`);
    }
  });
  await page.goto(`file://${writePage(locale)}`);
  await page.waitForSelector('.composer textarea');
  return page;
}

/** A fresh headless Chromium with the panel open (`openPanel`) and a FakePanelHost on `sessionId`, the server connected. */
export async function connectedPanel(
  problems: string[],
  height: number,
  sessionId: string,
  locale: PageLocale = {},
): Promise<{ browser: Browser; page: Page; host: FakePanelHost }> {
  const browser = await launchChromium();
  const page = await openPanel(browser, problems, height, locale);
  // The host's words (notices, the cost line) in the page's language, as registerChatPanel sets them.
  useBundle(locale.bundle);
  const host = new FakePanelHost(page, sessionId);
  await host.post({ type: 'connection', state: 'running' });
  return { browser, page, host };
}
