/**
 * The real VS Code test: code-server 4.139.1 (VS Code 1.139.1) with the
 * packaged rein-*.vsix, driven in headless Chromium.
 *
 * 1. Always: code-server starts, the Rein extension activates (its panel
 *    shows the chat), and the fixture's Python error shows in the editor
 *    (the ruff stand-in analyzer gives the editor real diagnostics).
 * 2. A prompt in the panel runs against `rein mock-server` playing e2e/scenario.yaml;
 *    the first edit leaves an error that the analyzer gate finds in the
 *    editor's diagnostics (a failed gate, a repair attempt), the repair's edit
 *    lands in the editor buffer, the gate passes, the panel shows the run
 *    completed, the error is gone, and the diff link opens the change;
 *    Rein: Start Preview asks the server (no preview is configured there).
 * 3. Plan mode: the test switches the mock to e2e/plan-scenario.yaml through
 *    its control API (POST /mock/scenario), starts a new session with the
 *    panel's Plan mode on; a two-step plan runs: step 1 edits, step 2 gives
 *    up, the planner revises it and the revised step has a subagent edit
 *    (its box shows what it said); the plan box shows both steps done, the
 *    edits land in calc.py.
 * 4. ask_user: e2e/ask-scenario.yaml; the step asks the person, the test
 *    dismisses VS Code's input box, the panel shows the run waiting with the
 *    question; the answer typed in the panel (with e2e/resume-scenario.yaml
 *    loaded) resumes the step, which edits with it and completes.
 * 3b. The `/` list: typing `/` in the panel lists the workspace's
 *    .claude/commands/explain-calc.md with its argument hint and description;
 *    the panel's setup view lists it as used, and the editor's diagnostics
 *    (the stand-in analyzer's) as covering .py.
 * 3c. An isolated run: e2e/isolated-scenario.yaml; "New isolated session"
 *    in the panel, a prompt that writes NOTES.md in the copy (the folder
 *    untouched), the isolated runs section lists the file, Review shows its
 *    hunk kept, Apply kept brings it into the folder and the copy goes.
 * 4b. Navigation: e2e/navigation-scenario.yaml; with main.ts open (VS
 *    Code's TypeScript support has analysed it), the model's find_definition
 *    of area() is answered by the editor (rein/navigate ->
 *    vscode.executeDefinitionProvider): geometry.ts, line 3; the panel shows
 *    the place as a link that opens geometry.ts.
 * 5. Undo this run: e2e/checkpoint-scenario.yaml; a run creates stats.py,
 *    edits calc.py and deletes legacy.py; its checkpoint row in the panel
 *    lists them; Undo this run, confirmed in VS Code's modal, puts all three
 *    back (disk and editor); Undo this restore brings the run's version back;
 *    the person types into calc.py and Undo this run keeps calc.py as a
 *    conflict (the others restored); Compare opens calc.py as Rein left it
 *    against the person's.
 * 6. Review: rein.approval.write "review" (the server restarted with it);
 *    e2e/review-scenario.yaml edits shapes.py in two places; the editor shows
 *    Keep | Undo on each hunk; one is undone, one kept; the panel's file is
 *    mixed, the disk has the kept change only.
 * 7. Cost and approvals: rein.approval.command "ask" and a price for
 *    mock-model (the server restarted with them); e2e/approval-scenario.yaml
 *    runs "echo checks && echo done"; VS Code's modal offers Always allow,
 *    the test keeps it for the workspace; the panel's cost line shows the
 *    tokens, the context share and the cost; the same commands in another
 *    order run again without asking; the rules section lists both rules and
 *    Revoke drops one.
 * 8. Configuration that fails safe: the user settings get an invalid
 *    provider ("openai-compatible") next to the local base URL; the server
 *    restarts with them, VS Code shows the error naming the key and the
 *    allowed values, a prompt fails with the reason, and no request reaches
 *    the local mock or a second mock standing in for the default endpoint
 *    (OPENAI_BASE_URL in the server's environment).
 * 8. VS Code's language models: rein.model.provider "vscode-lm" with the
 *    model of the test extension e2e/lm-provider (a language model chat
 *    provider whose scripted model calls write_file, then answers). The
 *    first prompt asks for consent and fails with the reason; after Allow
 *    the prompt runs through vscode.lm, the file is written, the requests
 *    the model saw carry Rein's tools and the tool result; the panel's model
 *    picker lists the model.
 *
 * When `rein serve` cannot start, the suite fails (before it starts
 * code-server) with the reason: the round trip is never skipped.
 *
 * Saves build/screenshots/vscode-e2e.png, vscode-e2e-diff.png,
 * vscode-e2e-checkpoint.png, vscode-e2e-undone.png, vscode-e2e-conflict.png,
 * vscode-e2e-review.png, vscode-e2e-vscode-lm.png and vscode-e2e-model-picker.png (`make screenshots` copies those the docs show to
 * docs/images). Needs: the vsix (npm run
 * package), out/e2e/analyzer (scripts/build.mjs --tests), chromium,
 * .venv/bin/ruff (without it the squiggle checks are left out).
 * REIN_E2E_REIN names another `rein`.
 */

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { launchChromium } from '../test/browser';
import { pngSize, REPO, ROOT, screenshotPath } from '../test/helpers';
import { freePort, httpOk, installCodeServer, portOpen, ProcessGroup, waitUntil, type CodeServer } from './harness';

const SCREENSHOT = screenshotPath('vscode-e2e.png');
const DIFF_SCREENSHOT = screenshotPath('vscode-e2e-diff.png');
const CHECKPOINT_SCREENSHOT = screenshotPath('vscode-e2e-checkpoint.png');
const UNDONE_SCREENSHOT = screenshotPath('vscode-e2e-undone.png');
const CONFLICT_SCREENSHOT = screenshotPath('vscode-e2e-conflict.png');
const REVIEW_SCREENSHOT = screenshotPath('vscode-e2e-review.png');
const LM_SCREENSHOT = screenshotPath('vscode-e2e-vscode-lm.png');
const PICKER_SCREENSHOT = screenshotPath('vscode-e2e-model-picker.png');
const APPROVALS_SCREENSHOT = screenshotPath('vscode-e2e-approvals.png');
const MENTION_SCREENSHOT = screenshotPath('vscode-e2e-mention.png');
const WALKTHROUGH_SCREENSHOT = screenshotPath('vscode-e2e-walkthrough.png');
const UNTRUSTED_SCREENSHOT = screenshotPath('vscode-e2e-untrusted.png');
/** REIN_E2E_REIN points the test at another `rein` (e.g. to see the suite fail without one). */
const REIN = process.env.REIN_E2E_REIN ?? path.join(REPO, '.venv', 'bin', 'rein');
const RUFF = path.join(REPO, '.venv', 'bin', 'ruff');
const MOD = process.platform === 'darwin' ? 'Meta' : 'Control';

/** Whether `rein serve` can start (its --help answers), and why not. */
function reinServeExists(): { ok: boolean; why: string } {
  if (!fs.existsSync(REIN)) {
    return { ok: false, why: `${REIN} does not exist (run make setup)` };
  }
  const result = spawnSync(REIN, ['serve', '--help'], { encoding: 'utf8', timeout: 30_000 });
  if (result.status === 0) {
    return { ok: true, why: '' };
  }
  const said = (result.stderr || result.stdout || '').trim().split('\n').pop() ?? '';
  return { ok: false, why: `\`${REIN} serve --help\` failed${said ? ` (${said})` : ''}` };
}

function vsix(): string {
  const found = fs.readdirSync(ROOT).filter((name) => /^rein-.*\.vsix$/.test(name));
  assert.ok(found.length > 0, 'no rein-*.vsix in vscode-client/: run `npm run package` first');
  return path.join(ROOT, found.sort().pop() ?? '');
}

/** The e2e stand-in analyzer, packaged from out/e2e/analyzer. */
function analyzerVsix(): string {
  return testVsix('analyzer', 'rein-e2e-ruff.vsix');
}

/** A test extension from out/e2e/<name> (scripts/build.mjs --tests), packaged. */
function testVsix(name: string, file: string): string {
  const dir = path.join(ROOT, 'out', 'e2e', name);
  assert.ok(fs.existsSync(path.join(dir, 'extension.js')), 'run scripts/build.mjs --tests first');
  fs.copyFileSync(path.join(ROOT, 'LICENSE'), path.join(dir, 'LICENSE'));
  const out = path.join(ROOT, 'out', 'e2e', file);
  execFileSync(
    path.join(ROOT, 'node_modules', '.bin', 'vsce'),
    ['package', '--no-dependencies', '--allow-missing-repository', '--out', out],
    { cwd: dir, stdio: 'ignore' },
  );
  return out;
}

interface Env {
  temp: string;
  workspace: string;
  port: number;
  modelPort: number;
  /** The stand-in for the default endpoint: OPENAI_BASE_URL points here. */
  publicPort: number;
  userData: string;
  codeServer: ProcessGroup;
  mock: ProcessGroup;
  publicMock: ProcessGroup;
  browser: Browser;
  page: Page;
  logs: string;
}

function settings(modelPort: number, trust = false): Record<string, unknown> {
  return {
    // The untrusted-workspace test turns workspace trust on (and opens the folder untrusted).
    ...(trust ? { 'security.workspace.trust.startupPrompt': 'never', 'security.workspace.trust.emptyWindow': false } : { 'security.workspace.trust.enabled': false }),
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.colorTheme': 'Default Dark Modern',
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'workbench.layoutControl.enabled': false,
    'window.commandCenter': false,
    'chat.disableAIFeatures': true,
    'chat.commandCenter.enabled': false,
    'extensions.ignoreRecommendations': true,
    'extensions.autoCheckUpdates': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'git.enabled': false,
    'editor.minimap.enabled': false,
    'rein.server.path': REIN,
    'rein.model.provider': 'openai',
    'rein.model.baseUrl': `http://127.0.0.1:${modelPort}/v1`,
    'rein.model.model': 'mock-model',
    'rein.approval.command': 'allow',
  };
}

/** `label`: the folder under out/e2e/logs this suite keeps its logs in (each suite its own). */
async function startAll(server: CodeServer, label: string, trust = false): Promise<Env> {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'rein-e2e-'));
  const logs = path.join(ROOT, 'out', 'e2e', 'logs', label);
  fs.rmSync(logs, { recursive: true, force: true });
  fs.mkdirSync(logs, { recursive: true });
  const workspace = path.join(temp, 'workspace');
  fs.cpSync(path.join(ROOT, 'e2e', 'workspace'), workspace, { recursive: true });
  const userData = path.join(temp, 'user-data');
  const extensions = path.join(temp, 'extensions');
  const [port, modelPort, publicPort] = [await freePort(), await freePort(), await freePort()];
  // User settings; machine-scoped ones (rein.server.path) count only as remote
  // "Machine" settings in code-server, so write both.
  for (const scope of ['User', 'Machine']) {
    fs.mkdirSync(path.join(userData, scope), { recursive: true });
    fs.writeFileSync(path.join(userData, scope, 'settings.json'), JSON.stringify(settings(modelPort, trust), null, 2));
  }

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.dirname(server.node)}:${process.env.PATH ?? ''}`,
    XDG_CONFIG_HOME: path.join(temp, 'config'),
    XDG_DATA_HOME: path.join(temp, 'data'),
    XDG_CACHE_HOME: path.join(temp, 'cache'),
    OPENAI_API_KEY: 'e2e-mock-key',
    OPENAI_BASE_URL: `http://127.0.0.1:${publicPort}/v1`,
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${publicPort}`,
    REIN_E2E_RUFF: RUFF,
    REIN_E2E_LM_LOG: path.join(temp, 'lm-requests.jsonl'),
  };
  for (const extension of [vsix(), analyzerVsix(), testVsix('lm-provider', 'rein-e2e-lm.vsix')]) {
    execFileSync(server.node, [server.entry, '--extensions-dir', extensions, '--user-data-dir', userData, '--install-extension', extension], {
      env,
      stdio: 'ignore',
    });
  }

  const mock = new ProcessGroup('rein mock-server', REIN, ['mock-server', '--port', String(modelPort), '--scenario', path.join(ROOT, 'e2e', 'scenario.yaml')], {
    cwd: workspace,
    env,
    logFile: path.join(logs, 'mock-server.log'),
  });
  const publicMock = new ProcessGroup('rein mock-server (default endpoint)', REIN, ['mock-server', '--port', String(publicPort), '--scenario', path.join(ROOT, 'e2e', 'scenario.yaml')], {
    cwd: workspace,
    env,
    logFile: path.join(logs, 'mock-server-public.log'),
  });
  let codeServer: ProcessGroup | undefined;
  let browser: Browser | undefined;
  try {
    await waitUntil(`rein mock-server on port ${modelPort}`, () => portOpen(modelPort), 30_000, mock);
    await waitUntil(`rein mock-server on port ${publicPort}`, () => portOpen(publicPort), 30_000, publicMock);

    codeServer = new ProcessGroup(
      'code-server',
      server.node,
      [
        server.entry,
        '--auth', 'none',
        '--bind-addr', `127.0.0.1:${port}`,
        '--disable-telemetry',
        '--disable-update-check',
        ...(trust ? [] : ['--disable-workspace-trust']),
        '--extensions-dir', extensions,
        '--user-data-dir', userData,
        workspace,
      ],
      { cwd: workspace, env, logFile: path.join(logs, 'code-server.log') },
    );
    await waitUntil(`code-server /healthz on port ${port}`, () => httpOk(`http://127.0.0.1:${port}/healthz`), 60_000, codeServer);

    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    return { temp, workspace, port, modelPort, publicPort, userData, codeServer, mock, publicMock, browser, page, logs };
  } catch (error) {
    // A later step failed: stop what started, or it outlives the test run.
    await browser?.close().catch(() => undefined);
    await codeServer?.stop();
    await mock.stop();
    await publicMock.stop();
    throw error;
  }
}

async function stopAll(env: Env | undefined): Promise<void> {
  if (!env) {
    return;
  }
  await env.page.screenshot({ path: path.join(env.logs, 'last.png') }).catch(() => undefined);
  await env.browser.close().catch(() => undefined);
  await env.codeServer.stop();
  await env.mock.stop();
  await env.publicMock.stop();
  // Keep VS Code's logs (the "Rein" output channel, the extension host) for a look after a failure.
  const vscodeLogs = path.join(env.temp, 'user-data', 'logs');
  if (fs.existsSync(vscodeLogs)) {
    fs.rmSync(path.join(env.logs, 'vscode'), { recursive: true, force: true });
    fs.cpSync(vscodeLogs, path.join(env.logs, 'vscode'), { recursive: true });
  }
  fs.rmSync(env.temp, { recursive: true, force: true });
}

async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press(`${MOD}+Shift+P`);
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${title}`);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first().waitFor();
  await input.press('Enter');
}

async function openFile(page: Page, name: string): Promise<void> {
  // Quick Open may still be filling its list (a loaded machine, a language
  // server indexing), and Enter opens its focused row, which need not be the
  // file's (twice in CI no tab opened): the file's own row is clicked, and
  // it is asked again, at most three times.
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press(`${MOD}+P`);
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(name);
    const row = page
      .locator('.quick-input-widget .monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${name.replace('.', '\\.')}$`) }) })
      .first();
    const tab = page.locator(`.tab[aria-label^="${name}"]`).first();
    try {
      await row.waitFor({ timeout: 15_000 });
      await row.click();
      await tab.waitFor({ timeout: 15_000 });
      return;
    } catch (error) {
      if (attempt >= 3) {
        throw error;
      }
      await page.keyboard.press('Escape');
    }
  }
}

/** The Rein chat inside the webview's two iframes. */
function chat(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

/** Drags the side bar's edge so the panel is as wide as a person would make it (for the screenshots). */
async function widenSideBar(page: Page, width: number): Promise<void> {
  const box = await page.locator('.part.sidebar').first().boundingBox();
  if (!box || box.width >= width) {
    return;
  }
  const edge = box.x + box.width;
  await page.mouse.move(edge + 1, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + width, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.mouse.move(box.x + width + 400, box.y + box.height / 2); // off the sash, which lights up under the mouse
}

/** Switches the mock's scenario through its control API (no restart). */
async function useScenario(env: Env, file: string): Promise<void> {
  const reply = await fetch(`http://127.0.0.1:${env.modelPort}/mock/scenario`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ file: path.join(ROOT, 'e2e', file) }),
  });
  const body = (await reply.json()) as { index?: number; turns?: number };
  assert.equal(reply.status, 200, JSON.stringify(body));
  assert.equal(body.index, 0);
}

/** Every turn of the mock's current scenario was asked for: the run took the scripted path. */
async function assertScenarioUsedUp(env: Env): Promise<void> {
  const state = (await (await fetch(`http://127.0.0.1:${env.modelPort}/mock/scenario`)).json()) as { name: string; index: number; turns: number };
  assert.equal(state.index, state.turns, `scenario ${state.name}: ${state.index} of ${state.turns} turns used\n${env.mock.tail()}`);
}

/** The model requests a mock server has seen. */
async function mockRequests(port: number): Promise<{ path: string }[]> {
  const reply = (await (await fetch(`http://127.0.0.1:${port}/mock/requests`)).json()) as { requests: { path: string }[] };
  return reply.requests;
}

/** Writes the user settings (both scopes, as startAll does). */
function writeSettings(env: Env, values: Record<string, unknown>): void {
  for (const scope of ['User', 'Machine']) {
    fs.writeFileSync(path.join(env.userData, scope, 'settings.json'), JSON.stringify(values, null, 2));
  }
}

function calcOnDisk(workspace: string): string {
  return fs.readFileSync(path.join(workspace, 'calc.py'), 'utf8');
}

/** Sends a task from the panel's composer. */
async function send(panel: FrameLocator, text: string): Promise<void> {
  const input = panel.locator('.composer textarea');
  await input.fill(text);
  await input.press('Enter');
}

async function waitForEnd(env: Env, panel: FrameLocator, selector: string): Promise<void> {
  try {
    await panel.locator(selector).first().waitFor({ timeout: 90_000 });
  } catch (error) {
    const ends = await panel.locator('.item.run-end').allTextContents();
    const notices = await panel.locator('.item.notice').allTextContents();
    // What blocked (a repair the scenario did not script shows here).
    const gates = await panel.locator('.item.gate').allTextContents();
    throw new Error(`no ${selector}: ${String(error)}\nrun ends: ${ends.join(' | ')}\ngates: ${gates.join(' | ')}\nnotices: ${notices.join(' | ')}\n${env.mock.tail()}`);
  }
}

async function editorText(page: Page): Promise<string> {
  const text = await page.locator('.editor-instance .monaco-editor .view-lines').first().innerText();
  return text.replace(/\u00a0/g, ' ');
}

describe('Rein in VS Code (code-server)', { timeout: 300_000 }, () => {
  const serve = reinServeExists();
  let env: Env | undefined;
  let server: CodeServer;

  before(async () => {
    // No skipping: without a server there is no round trip to test.
    assert.ok(serve.ok, `\`rein serve\` cannot start: ${serve.why}`);
    server = installCodeServer();
    env = await startAll(server, 'main');
  });

  after(async () => {
    await stopAll(env);
  });

  it('starts, activates the extension and shows the Rein panel', async () => {
    assert.ok(env);
    const { page } = env;
    await openFile(page, 'calc.py');
    if (fs.existsSync(RUFF)) {
      // The stand-in analyzer's diagnostics are the editor's diagnostics.
      await page.locator('.editor-instance .squiggly-error').first().waitFor({ timeout: 30_000 });
    }
    await runCommand(page, 'Rein: Open Chat');
    const panel = chat(page);
    await panel.locator('.composer textarea').waitFor({ timeout: 60_000 });
    await widenSideBar(page, 440);
    assert.equal(await panel.locator('.empty-title').textContent(), 'Rein');
    assert.deepEqual(await panel.locator('.composer .mode-toggle [role="radio"]').allTextContents(), ['Agent', 'Plan']);
    await page.locator('.statusbar-item', { hasText: 'Rein' }).first().waitFor();
  });

  it('runs a prompt: the edit lands in the buffer, a gate result shows, the run completes', async () => {
    assert.ok(env);
    const { page } = env;
    const panel = chat(page);
    try {
      await panel.locator('.banner.state-running').waitFor({ state: 'attached', timeout: 60_000 });
    } catch (error) {
      const banner = await panel.locator('.banner').first().textContent().catch(() => null);
      throw new Error(`\`rein serve\` did not start in VS Code: ${String(error)}\nthe panel says: ${banner ?? '(nothing)'}`);
    }
    const input = panel.locator('.composer textarea');
    await input.fill('Fix the undefined name in calc.py.');
    await input.press('Enter');
    const end = panel.locator('.item.run-end');
    try {
      await end.waitFor({ timeout: 120_000 });
    } catch (error) {
      const notices = await panel.locator('.item.notice').allTextContents();
      throw new Error(`the run did not end: ${String(error)}\nnotices: ${notices.join(' | ')}\n${env.mock.tail()}`);
    }
    const endClass = (await end.last().getAttribute('class')) ?? '';
    const summary = `${await end.last().textContent()} | notices: ${(await panel.locator('.item.notice').allTextContents()).join(' | ')}`;
    assert.match(endClass, /\bcompleted\b/, summary);
    assert.match((await panel.locator('.status-line').textContent()) ?? '', /last run completed/);

    // The first fix left an undefined name: the analyzer gate saw it in the
    // editor's diagnostics, blocked, and the repair fixed it.
    const gates = panel.locator('.item.gate');
    assert.equal(await gates.count(), 2, 'two gate results were rendered');
    assert.match((await gates.first().getAttribute('class')) ?? '', /\bfailed\b/);
    assert.match((await gates.first().locator('.blocker').textContent()) ?? '', /calc\.py:13:\d+.*F821.*Undefined name `total`/);
    assert.equal(await panel.locator('.item.repair .repair-title').textContent(), 'Repair attempt 1 of 3');
    assert.match((await gates.last().getAttribute('class')) ?? '', /\bpassed\b/);
    assert.equal(await gates.last().locator('.gate-result').textContent(), 'passed');

    assert.equal(await panel.locator('.item.tool .tool-name', { hasText: 'edit_file' }).count(), 2);
    await waitUntil('the edit in the editor buffer', async () => (await editorText(page)).includes('n={len(values)}'), 15_000);
    assert.ok(!(await editorText(page)).includes('n={count}'));
    if (fs.existsSync(RUFF)) {
      await waitUntil('the F821 squiggle to go', async () => (await page.locator('.editor-instance .squiggly-error').count()) === 0, 15_000);
    }
    await page.screenshot({ path: SCREENSHOT });
    assert.deepEqual(pngSize(SCREENSHOT), { width: 1400, height: 860 });

    // The repair's diff link opens VS Code's diff editor on that change.
    await panel.locator('.item.tool .diff-link').last().click();
    await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 15_000 });
    await page.locator('.tab', { hasText: 'Rein edit' }).first().waitFor();
    // The diff editor draws its sides a moment after it shows.
    const side = async (which: string): Promise<string> =>
      (await page.locator(`.monaco-diff-editor .${which} .view-lines`).first().innerText()).replace(/\u00a0/g, ' ');
    await waitUntil('the diff editor to draw both sides', async () => (await side('modified')) !== '' && (await side('original')) !== '', 15_000);
    assert.match(await side('modified'), /n=\{len\(values\)\}/);
    assert.match(await side('original'), /n=\{total\}/);
    await page.screenshot({ path: DIFF_SCREENSHOT });
    assert.deepEqual(pngSize(DIFF_SCREENSHOT), { width: 1400, height: 860 });

    // No preview is configured here: the panel's section stays hidden (its
    // rein/preview status said "off"), and Rein: Start Preview, a rein/preview
    // round trip, says how to configure one.
    assert.equal(await panel.locator('.preview-section').isHidden(), true);
    await runCommand(page, 'Rein: Start Preview');
    await page.locator('.notification-list-item-message', { hasText: 'no preview is configured' }).first().waitFor({ timeout: 15_000 });
  });
  it('attaches a file with @ in the prompt box: the model reads it as a tagged block', async () => {
    assert.ok(env);
    const { page } = env;
    const panel = chat(page);
    await useScenario(env, 'mention-scenario.yaml');
    await panel.locator('button[aria-label="New session"]').click();
    await panel.locator('.item.run-end').first().waitFor({ state: 'detached', timeout: 15_000 });
    const input = panel.locator('.composer textarea');
    await input.fill('');
    await input.pressSequentially('What does this file define? @');
    // VS Code's quick pick: the selection, Problems, the terminal, then the workspace's files.
    const quick = page.locator('.quick-input-widget');
    await quick.locator('.monaco-list-row', { hasText: 'Selection' }).first().waitFor({ timeout: 15_000 });
    await quick.locator('input').fill('shapes');
    await quick.locator('.monaco-list-row', { hasText: 'shapes.py' }).first().waitFor();
    await quick.locator('input').press('Enter');
    await panel.locator('.attachments .chip-label', { hasText: '@shapes.py' }).waitFor({ timeout: 15_000 });
    assert.equal(await input.inputValue(), 'What does this file define? ');
    await page.screenshot({ path: MENTION_SCREENSHOT });
    await input.click();
    await input.press('End');
    await input.press('Enter');
    await waitForEnd(env, panel, '.item.run-end');
    assert.match((await panel.locator('.item.run-end').last().getAttribute('class')) ?? '', /\bcompleted\b/, env.mock.tail());
    await assertScenarioUsedUp(env);
    assert.equal(await panel.locator('.attachments .chip').count(), 0, 'the chips went with the prompt');
  });

  it("types / in the prompt box: the workspace's .claude/commands are listed with their descriptions", async () => {
    assert.ok(env);
    const panel = chat(env.page);
    const input = panel.locator('.composer textarea');
    await input.fill('');
    await input.pressSequentially('/');
    // Asked from the server (rein/commands) when `/` starts the prompt.
    const item = panel.locator('.command-list .command-item', { hasText: '/explain-calc' });
    await item.waitFor({ timeout: 15_000 });
    assert.equal(await item.locator('.command-name').textContent(), '/explain-calc FUNCTION');
    assert.equal(await item.locator('.command-description').textContent(), 'Explain a function of calc.py');
    assert.equal(await item.getAttribute('title'), '.claude/commands/explain-calc.md');
    await item.click();
    assert.equal(await input.inputValue(), '/explain-calc ');
    assert.equal(await panel.locator('.command-list').isHidden(), true);
    await input.fill('');
    // The setup view (rein/setup) lists it as used; its Analyzers part says what the editor's diagnostics covered.
    const setup = panel.locator('.setup-section');
    await setup.locator('summary').click({ position: { x: 8, y: 8 } });
    const command = setup.locator('.setup-item[data-name="/explain-calc"]');
    await command.waitFor({ timeout: 15_000 });
    assert.equal(await command.locator('.setup-status').textContent(), 'used');
    assert.equal(await command.locator('.setup-source').textContent(), '.claude/commands/explain-calc.md');
    if (fs.existsSync(RUFF)) {
      // The stand-in analyzer reported on calc.py (no problem left since the first run fixed it).
      assert.equal(await setup.locator('.coverage-seen[data-ext=".py"]').count(), 1);
    }
    await setup.locator('summary').click({ position: { x: 8, y: 8 } });
  });

  it('starts an isolated run from the panel: its copy changes, the section lists the file, its review keeps the hunk into the folder', async () => {
    assert.ok(env);
    const { page, workspace } = env;
    const panel = chat(page);
    const notes = path.join(workspace, 'NOTES.md');
    await useScenario(env, 'isolated-scenario.yaml');
    await panel.locator('button[aria-label="New isolated session"]').click();
    await panel.locator('.item.run-end').first().waitFor({ state: 'detached', timeout: 15_000 });
    const section = panel.locator('.isolated-section');
    const row = section.locator('.isolated-run.shown');
    await row.waitFor({ timeout: 60_000 }); // the copy is made, the panel shows its session
    await send(panel, 'Add a NOTES.md about the calculator.');
    await waitForEnd(env, panel, '.item.run-end');
    assert.match((await panel.locator('.item.run-end').last().getAttribute('class')) ?? '', /\bcompleted\b/, env.mock.tail());
    await assertScenarioUsedUp(env);
    assert.equal(fs.existsSync(notes), false, 'nothing reaches the folder before it is kept');
    // The section asked again when the run ended: its changed file and verdict.
    await waitUntil('the row to list NOTES.md', async () => ((await row.locator('.isolated-changed').textContent()) ?? '').includes('NOTES.md'), 15_000);
    assert.equal(await row.locator('.isolated-state').textContent(), 'completed');
    // Review: its one hunk (the new file), clean and kept; Apply kept applies it.
    await row.locator('button', { hasText: 'Review' }).click();
    const hunk = row.locator('.isolated-hunk[data-hunk^="NOTES.md#0~"]');
    await hunk.waitFor({ timeout: 15_000 });
    assert.equal(await hunk.locator('.hunk-head .badge').textContent(), 'kept');
    await row.locator('button', { hasText: 'Apply kept (1)' }).click();
    await waitUntil('NOTES.md in the folder', async () => fs.existsSync(notes) && fs.readFileSync(notes, 'utf8').includes('fixture calculator'), 30_000);
    await page.locator('.notification-list-item-message', { hasText: 'the isolated run was kept: NOTES.md' }).first().waitFor({ timeout: 15_000 });
    // Kept without conflicts: the copy is removed, the section empties.
    await section.waitFor({ state: 'hidden', timeout: 15_000 });
  });

  it("navigates with the editor's TypeScript support: find_definition answered through rein/navigate, shown as a link", async () => {
    // Goes green with the semantic tools of issue 36 (find_definition asks the session's navigator).
    assert.ok(env);
    const { page } = env;
    const panel = chat(page);
    await openFile(page, 'main.ts');
    // VS Code's TypeScript support has analysed main.ts: the unused import is faded.
    await page.locator('.editor-instance .squiggly-inline-unnecessary').first().waitFor({ timeout: 60_000 });
    await useScenario(env, 'navigation-scenario.yaml');
    await panel.locator('button[aria-label="New session"]').click();
    await panel.locator('.item.run-end').first().waitFor({ state: 'detached', timeout: 15_000 });
    await send(panel, 'Where is area defined?');
    await waitForEnd(env, panel, '.item.run-end');
    assert.match((await panel.locator('.item.run-end').last().getAttribute('class')) ?? '', /\bcompleted\b/, env.mock.tail());
    await assertScenarioUsedUp(env);
    // The result's place is a link: it opens geometry.ts at the definition.
    const row = panel.locator('.item.tool').filter({ has: panel.locator('.tool-name', { hasText: /^find_definition$/ }) });
    await row.locator('summary').click({ position: { x: 8, y: 8 } });
    const places = row.locator('.result-locations .loc-place .location');
    assert.equal(await places.first().textContent(), '3:17');
    await places.first().click();
    await page.locator('.tab.active[aria-label^="geometry.ts"]').waitFor({ timeout: 15_000 });
  });

  it('runs a plan in Plan mode: two steps with edits, a replan and a subagent, one end for the plan', async () => {
    assert.ok(env);
    const { page, workspace } = env;
    const panel = chat(page);
    await useScenario(env, 'plan-scenario.yaml');
    await panel.locator('button[aria-label="New session"]').click();
    await panel.locator('.item.run-end').first().waitFor({ state: 'detached', timeout: 15_000 });
    await panel.locator('.composer .mode-toggle [role="radio"]', { hasText: 'Plan' }).click();
    assert.equal(await panel.locator('.composer .mode-toggle [role="radio"][aria-checked="true"]').textContent(), 'Plan');

    await send(panel, 'Document divide and add total.');
    await waitForEnd(env, panel, '.item.run-end');
    const ends = panel.locator('.item.run-end');
    assert.equal(await ends.count(), 1, 'one end for the whole plan');
    assert.match((await ends.first().getAttribute('class')) ?? '', /\bcompleted\b/, (await ends.first().textContent()) ?? '');

    const plan = panel.locator('.item.plan');
    assert.equal(await plan.count(), 1);
    assert.equal(await plan.locator('.badge').textContent(), 'completed');
    assert.equal(await plan.locator('.step.done').count(), 2);
    assert.match((await plan.locator('.step').first().textContent()) ?? '', /Add a docstring to divide\(\) — divide\(\) has a docstring/);
    // Step 2 gave up, the planner revised it, and the revised step ran.
    assert.deepEqual(await panel.locator('.item.step-start .step-label').allTextContents(), ['Step 1 of 2', 'Step 2 of 2', 'Step 2 of 2']);
    assert.match((await plan.locator('.step').nth(1).textContent()) ?? '', /Have a subagent add total\(\) before mean\(\) — a subagent added total\(\)/);
    // The revised step's edit was the subagent's: its box shows what it said.
    assert.equal(await panel.locator('.item.tool .tool-name', { hasText: 'edit_file' }).count(), 1);
    const subagent = panel.locator('.item.subagent');
    assert.equal(await subagent.count(), 1);
    assert.match((await subagent.getAttribute('class')) ?? '', /\bcompleted\b/);
    assert.match((await subagent.locator('.sub-text').textContent()) ?? '', /total\(\) is in calc\.py, before mean\(\)\./);
    await panel.locator('.item.assistant', { hasText: 'divide() is documented and total() sums the values.' }).waitFor();
    await waitUntil(
      'both steps\' edits in calc.py',
      async () => calcOnDisk(workspace).includes('"""a divided by b."""') && calcOnDisk(workspace).includes('def total(values: list[float]) -> float:'),
      15_000,
    );
    await assertScenarioUsedUp(env);
  });

  it('shows a run waiting on ask_user and resumes it with the answer typed in the panel', async () => {
    assert.ok(env);
    const { page, workspace } = env;
    const panel = chat(page);
    await useScenario(env, 'ask-scenario.yaml');
    await panel.locator('button[aria-label="New session"]').click();
    await panel.locator('.item.run-end').first().waitFor({ state: 'detached', timeout: 15_000 });
    // Plan mode is still on from the last test.
    await send(panel, 'Rename the mean label in report().');

    // VS Code asks in an input box; the person dismisses it, so the run waits.
    const question = page.locator('.quick-input-widget', { hasText: 'Which label should report() use: avg or average?' });
    await question.waitFor({ timeout: 60_000 });
    await page.locator('.quick-input-widget input').press('Escape');
    await waitForEnd(env, panel, '.item.run-end.waiting');
    const waiting = panel.locator('.item.run-end.waiting');
    assert.match((await waiting.locator('.run-reason').textContent()) ?? '', /Which label should report\(\) use: avg or average\?/);
    assert.match((await panel.locator('.status-line').textContent()) ?? '', /last run waiting/);
    assert.equal(await panel.locator('.item.plan .badge').textContent(), 'waiting');
    await assertScenarioUsedUp(env);
    assert.ok(calcOnDisk(workspace).includes('mean={'), 'nothing was edited while waiting');

    // The answer, typed in the panel, resumes the waiting step.
    await useScenario(env, 'resume-scenario.yaml');
    await send(panel, 'avg');
    await waitForEnd(env, panel, '.item.run-end.completed');
    assert.equal(await panel.locator('.item.plan .step.done').count(), 1);
    assert.equal(await panel.locator('.item.plan .badge').textContent(), 'completed');
    await waitUntil('the answer\'s edit in calc.py', async () => calcOnDisk(workspace).includes('avg={'), 15_000);
    await assertScenarioUsedUp(env);
  });

  it('undoes a run from the panel: Undo this run, VS Code\'s modal, a created, an edited and a deleted file as before', async () => {
    assert.ok(env);
    const { page, workspace } = env;
    const panel = chat(page);
    await useScenario(env, 'checkpoint-scenario.yaml');
    await panel.locator('button[aria-label="New session"]').click();
    await panel.locator('.item.run-end').first().waitFor({ state: 'detached', timeout: 15_000 });
    await panel.locator('.composer .mode-toggle [role="radio"]', { hasText: 'Agent' }).click();
    const calcBefore = calcOnDisk(workspace);
    const legacy = path.join(workspace, 'legacy.py');
    const legacyBefore = fs.readFileSync(legacy, 'utf8');
    const stats = path.join(workspace, 'stats.py');
    await send(panel, 'Add a stats module with spread() and drop legacy.py.');
    await waitForEnd(env, panel, '.item.run-end.completed');
    await assertScenarioUsedUp(env);
    await waitUntil(
      'the run\'s three changes on disk',
      async () => fs.existsSync(stats) && !fs.existsSync(legacy) && calcOnDisk(workspace).includes('spread() is in stats.py'),
      15_000,
    );

    // The run's checkpoint row: its files and Undo this run (loaded with rein/checkpoints after run_end).
    const row = panel.locator('.item.checkpoint').last();
    await row.waitFor({ timeout: 30_000 });
    assert.equal(await row.locator('.ckpt-title').textContent(), 'Changed 3 files');
    assert.deepEqual(
      (await row.locator(':scope > .ckpt-files .ckpt-file').allTextContents()).sort(),
      ['Astats.pyRestore', 'Dlegacy.pyRestore', 'Mcalc.pyRestore'],
    );
    // calc.py in the editor shows the run's edit (and nothing else is open for the picture).
    await runCommand(page, 'Notifications: Clear All Notifications');
    await runCommand(page, 'View: Close All Editors');
    await openFile(page, 'calc.py');
    await waitUntil('the run\'s edit in the calc.py editor', async () => (await editorText(page)).includes('spread() is in stats.py'), 15_000);
    await row.locator('.ckpt-undo').scrollIntoViewIfNeeded();
    await page.screenshot({ path: CHECKPOINT_SCREENSHOT });
    assert.deepEqual(pngSize(CHECKPOINT_SCREENSHOT), { width: 1400, height: 860 });

    // Undo this run asks first (a modal naming the files), then restores.
    await row.locator('.ckpt-undo').click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 15_000 });
    assert.match((await dialog.textContent()) ?? '', /3 files will be put back to how they were before it/);
    await dialog.locator('.monaco-button', { hasText: 'Undo Run' }).click();
    await waitUntil(
      'the three files as before the run',
      async () => !fs.existsSync(stats) && fs.existsSync(legacy) && fs.readFileSync(legacy, 'utf8') === legacyBefore && calcOnDisk(workspace) === calcBefore,
      30_000,
    );
    await waitUntil('calc.py in the editor as before the run', async () => (await editorText(page)).startsWith(calcBefore.split('\n')[0] ?? '-'), 15_000);
    const outcome = panel.locator('.item.checkpoint .ckpt-outcome-head').first();
    await outcome.waitFor({ timeout: 15_000 });
    assert.equal(await outcome.textContent(), 'Restored 3 files (the whole run)');
    // The restore is a checkpoint of its own, which can be undone in turn.
    await panel.locator('.item.checkpoint.kind-restore .ckpt-undo', { hasText: 'Undo this restore' }).waitFor({ timeout: 15_000 });
    await page.screenshot({ path: UNDONE_SCREENSHOT });

    // Undo the restore (the run's changes come back), then the person types in
    // calc.py, and Undo this run again: calc.py is a conflict the restore does
    // not touch, the other two files are restored, and Compare opens calc.py
    // as Rein left it against the person's.
    await panel.locator('.item.checkpoint.kind-restore .ckpt-undo').click();
    await page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Undo Restore' }).click();
    await waitUntil('the run\'s changes back', async () => fs.existsSync(stats) && !fs.existsSync(legacy), 30_000);
    await waitUntil('the run\'s edit back in the editor', async () => (await editorText(page)).includes('spread() is in stats.py'), 15_000);
    await page.locator('.editor-instance .view-line').first().click();
    await page.keyboard.press('End');
    await page.keyboard.type('  # mine');
    await waitUntil('the person\'s typing in the buffer', async () => (await editorText(page)).includes('# mine'), 15_000);
    await page.keyboard.press(`${MOD}+S`); // saved, so no editor is left dirty for the next test
    await waitUntil('the person\'s typing saved', async () => calcOnDisk(workspace).includes('# mine'), 15_000);
    await panel.locator('.item.checkpoint.kind-run .ckpt-undo').last().click();
    const again = page.locator('.monaco-dialog-box');
    await again.waitFor({ timeout: 15_000 });
    await again.locator('.monaco-button', { hasText: 'Undo Run' }).click();
    const conflict = panel.locator('.item.checkpoint.kind-run .ckpt-conflict').first();
    await conflict.waitFor({ timeout: 30_000 });
    assert.equal(await conflict.locator('.ckpt-path').textContent(), 'calc.py');
    await waitUntil('the others restored', async () => !fs.existsSync(stats) && fs.existsSync(legacy), 30_000);
    assert.match(await editorText(page), /spread\(\) is in stats\.py\)\.""" {2}# mine/, 'the person\'s text is kept');
    await conflict.locator('.link-button', { hasText: 'Compare' }).click();
    await page.locator('.tab', { hasText: 'as Rein left it ↔ yours' }).first().waitFor({ timeout: 15_000 });
    const side = async (which: string): Promise<string> =>
      (await page.locator(`.monaco-diff-editor .${which} .view-lines`).first().innerText()).replace(/\u00a0/g, ' ');
    await waitUntil('the comparison to draw both sides', async () => (await side('modified')).includes('# mine') && (await side('original')) !== '', 15_000);
    // Left: calc.py as the run (then the undone restore) left it; right: the person's buffer.
    assert.match(await side('original'), /spread\(\) is in stats\.py/);
    assert.doesNotMatch(await side('original'), /# mine/);
    await page.screenshot({ path: CONFLICT_SCREENSHOT });
  });

  it('reviews a run in the editor: Undo one hunk and Keep the other with the CodeLens, the panel shows the file mixed', async () => {
    assert.ok(env);
    const { page, workspace } = env;
    const panel = chat(page);
    const shapes = path.join(workspace, 'shapes.py');
    const before = fs.readFileSync(shapes, 'utf8');
    // Review mode for the sessions the restarted server makes.
    writeSettings(env, { ...settings(env.modelPort), 'rein.approval.write': 'review' });
    await runCommand(page, 'Rein: Restart Server');
    await panel.locator('.banner.state-starting').waitFor({ state: 'attached', timeout: 30_000 });
    await panel.locator('.banner.state-running').waitFor({ state: 'attached', timeout: 60_000 });
    await useScenario(env, 'review-scenario.yaml');
    await runCommand(page, 'View: Close All Editors');
    await openFile(page, 'shapes.py');
    await panel.locator('button[aria-label="New session"]').click();
    await panel.locator('.item.run-end').first().waitFor({ state: 'detached', timeout: 15_000 });
    await send(panel, 'Use math.pi in circle().');
    await waitForEnd(env, panel, '.item.run-end.completed');
    await assertScenarioUsedUp(env);

    // Pending: both edits applied, the panel's review lists the file, the editor has a lens per hunk.
    const review = panel.locator('.item.checkpoint .ckpt-review').last();
    await review.waitFor({ timeout: 30_000 });
    assert.equal(await review.locator('.ckpt-review-title').textContent(), 'Review: 1 file pending');
    const tools = (await panel.locator('.item.tool').allTextContents()).join(' | ');
    await waitUntil(`both edits in the editor (tool rows: ${tools})`, async () => (await editorText(page)).includes('with math.pi') && (await editorText(page)).includes('math.pi * radius'), 15_000);
    const lenses = page.locator('.editor-instance .codelens-decoration');
    await waitUntil('a Keep | Undo lens on each hunk', async () => (await lenses.count()) === 2, 30_000);
    assert.match((await lenses.first().textContent()) ?? '', /Keep.*\|.*Undo/);
    await review.locator('.review-file > summary .ckpt-path').first().click(); // its hunks, for the picture
    await runCommand(page, 'Notifications: Clear All Notifications');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 15_000 });
    await page.screenshot({ path: REVIEW_SCREENSHOT });

    // Undo the docstring hunk: its old line comes back in the buffer, its lens goes.
    await lenses.first().locator('a', { hasText: 'Undo' }).click();
    await waitUntil('the first hunk undone in the editor', async () => (await editorText(page)).startsWith(before.split('\n')[0] ?? '-'), 15_000);
    await waitUntil('one lens left', async () => (await lenses.count()) === 1, 15_000);
    // The other hunk moved up two lines with the undo: its lens is right above its line.
    await waitUntil('the lens above circle()\'s return', async () => {
      const lens = await lenses.first().boundingBox();
      const line = await page.locator('.editor-instance .view-line', { hasText: 'math.pi * radius' }).first().boundingBox();
      return lens !== null && line !== null && line.y >= lens.y && line.y - lens.y <= 2 * lens.height + 4;
    }, 15_000);
    // Keep the other: the file keeps it, the lens goes, the panel shows the file mixed.
    await lenses.first().locator('a', { hasText: 'Keep' }).click();
    await waitUntil('no lens left', async () => (await lenses.count()) === 0, 15_000);
    assert.match(await editorText(page), /math\.pi \* radius/);
    await panel.locator('.item.checkpoint .review-file.status-mixed').last().waitFor({ timeout: 15_000 });
    assert.equal(await panel.locator('.item.checkpoint .ckpt-review .ckpt-review-title').last().textContent(), 'Reviewed');
    await waitUntil(
      'shapes.py on disk: the old docstring, the new circle()',
      async () => {
        const text = fs.readFileSync(shapes, 'utf8');
        return text.startsWith(before.split('\n')[0] ?? '-') && text.includes('math.pi * radius');
      },
      15_000,
    );
  });

  it('cost and approvals: Always allow a compound command for the workspace, the cost line, the rules with Revoke', async () => {
    assert.ok(env);
    const { page } = env;
    const panel = chat(page);
    writeSettings(env, {
      ...settings(env.modelPort),
      'rein.approval.command': 'ask',
      'rein.model.prices': { 'mock-model': { input: 2.5, output: 10 } },
    });
    await runCommand(page, 'Rein: Restart Server');
    await panel.locator('.banner.state-starting').waitFor({ state: 'attached', timeout: 30_000 });
    await panel.locator('.banner.state-running').waitFor({ state: 'attached', timeout: 60_000 });
    await useScenario(env, 'approval-scenario.yaml');
    await runCommand(page, 'Notifications: Clear All Notifications');
    await panel.locator('button[aria-label="New session"]').click();
    await panel.locator('.item.run-end').first().waitFor({ state: 'detached', timeout: 15_000 });
    await panel.locator('.composer .mode-toggle [role="radio"]', { hasText: 'Agent' }).click();
    await send(panel, 'Run the checks.');

    // VS Code's modal: the command and the exact rules Always allow keeps.
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 60_000 });
    const asked = (await dialog.textContent()) ?? '';
    assert.match(asked, /echo checks && echo done/);
    assert.match(asked, /"Always allow" keeps exactly: command "echo checks", command "echo done"/);
    // echo has no subcommand: no wider rule is offered for it.
    assert.doesNotMatch(asked, /Always allow this prefix/);
    await dialog.locator('.monaco-button', { hasText: 'Always allow (workspace)' }).click();
    await waitForEnd(env, panel, '.item.run-end.completed');
    const costLine = (await panel.locator('.cost-line').textContent()) ?? '';
    assert.match(costLine, /^24\.4k in \/ 340 out · \d+% of context · \$0\.06$/, costLine);

    // The same commands in another order: allowed by the rules, no modal.
    await send(panel, 'Run them again.');
    await waitUntil('the second run to complete', async () => (await panel.locator('.item.run-end.completed').count()) === 2, 90_000);
    assert.equal(await page.locator('.monaco-dialog-box').count(), 0, 'not asked again');
    await assertScenarioUsedUp(env);

    const section = panel.locator('.approvals-section');
    await section.waitFor({ timeout: 15_000 });
    if ((await section.getAttribute('open')) === null) {
      await section.locator('summary').click();
    }
    assert.deepEqual(await section.locator('.approval-pattern').allTextContents(), ['echo checks', 'echo done']);
    assert.deepEqual(await section.locator('.approval-scope').allTextContents(), ['workspace', 'workspace']);
    await page.screenshot({ path: APPROVALS_SCREENSHOT });
    await section.locator('.approval-rule', { hasText: 'echo done' }).locator('.approval-revoke').click();
    await waitUntil('the revoked rule to leave the list', async () => (await section.locator('.approval-rule').count()) === 1, 15_000);
    assert.deepEqual(await section.locator('.approval-pattern').allTextContents(), ['echo checks']);
  });

  it('an invalid provider with a local base URL: the prompt fails with the reason, no request leaves', async () => {
    assert.ok(env);
    const { page } = env;
    const panel = chat(page);
    const localBefore = (await mockRequests(env.modelPort)).length;
    await panel.locator('button[aria-label="New session"]').click();
    await panel.locator('.item.run-end').first().waitFor({ state: 'detached', timeout: 15_000 });
    // The provider changes: the extension restarts the server, which starts with it.
    writeSettings(env, { ...settings(env.modelPort), 'rein.model.provider': 'openai-compatible' });
    const reported = page.locator('.notification-list-item-message', { hasText: 'rein.model.provider' }).first();
    await reported.waitFor({ timeout: 60_000 });
    assert.match((await reported.textContent()) ?? '', /'openai', 'anthropic', 'replay' or 'vscode-lm'.*'openai-compatible'/);

    await send(panel, 'Summarise calc.py.');
    const failed = panel.locator('.item.notice', { hasText: 'The prompt failed' }).first();
    await failed.waitFor({ timeout: 60_000 });
    const said = (await failed.textContent()) ?? '';
    assert.match(said, /the model settings cannot be used: rein\.model\.provider: .*'openai', 'anthropic', 'replay' or 'vscode-lm'/, said);
    assert.match(said, /No model request is sent/, said);
    // Nothing reached the configured server, nor the default endpoint.
    assert.equal((await mockRequests(env.modelPort)).length, localBefore);
    assert.deepEqual(await mockRequests(env.publicPort), []);
  });

  it('runs a prompt through VS Code\'s language models (vscode-lm): consent, a tool call that writes a file, the model picker', async () => {
    assert.ok(env);
    const { page } = env;
    const panel = chat(page);
    await panel.locator('button[aria-label="New session"]').click();
    // The test extension's model, chosen in the settings (the server restarts with it).
    writeSettings(env, {
      ...settings(env.modelPort),
      'chat.disableAIFeatures': false,
      'rein.model.provider': 'vscode-lm',
      'rein.model.model': 'rein-test/scripted',
    });
    const button = panel.locator('button.model-button');
    await button.locator('.model-label', { hasText: 'Scripted (rein-test)' }).waitFor({ timeout: 60_000 });

    // The first prompt: no consent yet. Rein asks; the run fails with the reason.
    await send(panel, 'Write the note.');
    const ask = page.locator('.notification-list-item', { hasText: "allow Rein to send your prompts to VS Code's language models" }).first();
    await ask.waitFor({ timeout: 60_000 });
    await panel.locator('.item.run-end.failed', { hasText: 'consent required' }).first().waitFor({ timeout: 60_000 });
    await ask.locator('a.monaco-button', { hasText: 'Allow' }).click();

    // Allowed: the prompt again runs through the scripted model and writes the file.
    const note = path.join(env.workspace, 'lm_note.txt');
    await send(panel, 'Write the note.');
    await waitUntil(
      'the run through vscode-lm to write lm_note.txt',
      async () => {
        // VS Code may ask too (the first use of another extension's models).
        const allow = page.locator('.monaco-dialog-box a.monaco-button', { hasText: 'Allow' });
        if (await allow.count()) {
          await allow.first().click().catch(() => undefined);
        }
        // The editor creates the file, then saves its text: wait for the text.
        return fs.existsSync(note) && fs.statSync(note).size > 0;
      },
      60_000,
    );
    assert.equal(fs.readFileSync(note, 'utf8'), 'written by the scripted VS Code language model\n');
    // On a timeout this says how the runs ended and what the panel noticed.
    await waitForEnd(env, panel, '.item.run-end.completed');
    // The API reports no token counts: the run's are Rein's estimate, marked so.
    assert.match((await panel.locator('.item.run-end.completed .run-meta').last().textContent()) ?? '', /≈[\d.]+k? in · ≈\d+ out/);
    await panel.locator('.item.assistant', { hasText: 'Wrote lm_note.txt.' }).first().waitFor({ timeout: 15_000 });
    // What the model was sent: Rein's tools with the tool mode, the system
    // prompt in the first user message, the tool's result in the second request.
    const requests = fs
      .readFileSync(path.join(env.temp, 'lm-requests.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { tools: string[]; messages: string[] });
    assert.equal(requests.length, 2, JSON.stringify(requests));
    assert.ok(requests[0]?.tools.includes('write_file'), JSON.stringify(requests[0]?.tools));
    assert.match(requests[0]?.messages[0] ?? '', /^<instructions>/);
    assert.match(requests[0]?.messages.at(-1) ?? '', /Write the note\./);
    assert.match(requests[1]?.messages.at(-1) ?? '', /\[result lm-call-1\]/);
    await runCommand(page, 'Notifications: Clear All Notifications');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await page.locator('.notification-toast').first().waitFor({ state: 'detached' });
    await page.screenshot({ path: LM_SCREENSHOT });

    // The picker lists the configured model and VS Code's.
    await button.click();
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Scripted (rein-test)' }).first();
    await row.waitFor({ timeout: 15_000 });
    await page.screenshot({ path: PICKER_SCREENSHOT });
    await row.click();
    await button.locator('.model-label', { hasText: 'Scripted (rein-test)' }).waitFor({ timeout: 15_000 });
  });
});

describe('Rein in an untrusted workspace (code-server)', { timeout: 300_000 }, () => {
  const serve = reinServeExists();
  let env: Env | undefined;

  before(async () => {
    assert.ok(serve.ok, `\`rein serve\` cannot start: ${serve.why}`);
    env = await startAll(installCodeServer(), 'untrusted', true);
  });

  after(async () => {
    await stopAll(env);
  });

  it('starts no server, says why in the panel and the status bar, and offers to manage trust', async () => {
    assert.ok(env);
    const { page } = env;
    await page.locator('.monaco-workbench .part.banner').getByText('Restricted Mode').first().waitFor({ timeout: 30_000 });
    // The Rein view in the activity bar (opening it activates the extension).
    await page.locator('.activitybar .action-item a[aria-label^="Rein"]').first().click();
    const panel = chat(page);
    await panel.locator('.composer textarea').waitFor({ timeout: 60_000 });
    await widenSideBar(page, 440);
    const banner = panel.locator('.banner.state-untrusted');
    await banner.waitFor({ timeout: 30_000 });
    assert.equal(await banner.locator('.banner-text').textContent(), 'Rein starts its server and runs commands only in a trusted workspace.');
    assert.equal(await banner.locator('button').textContent(), 'Manage Workspace Trust');
    await panel.locator('.composer textarea').fill('Fix calc.py');
    assert.equal(await panel.locator('.composer button.primary').isDisabled(), true, 'nothing can be sent');
    assert.equal((await mockRequests(env.modelPort)).length, 0, 'no model request');
    await page.screenshot({ path: UNTRUSTED_SCREENSHOT });
    await banner.locator('button').click();
    await page.locator('.workspace-trust-editor').first().waitFor({ timeout: 30_000 });
  });
});

// Its own VS Code: the walkthrough's media are a second webview and may open as a modal editor,
// which would stand in the way of the other tests.
describe('Rein: Get Started (code-server)', { timeout: 300_000 }, () => {
  const serve = reinServeExists();
  let env: Env | undefined;

  before(async () => {
    assert.ok(serve.ok, `\`rein serve\` cannot start: ${serve.why}`);
    env = await startAll(installCodeServer(), 'get-started');
  });

  after(async () => {
    await stopAll(env);
  });

  it('opens the walkthrough with Rein: Get Started', async () => {
    assert.ok(env);
    const { page } = env;
    // The extension's contributions are loaded (its view in the activity bar) before its command is looked up.
    await page.locator('.activitybar .action-item a[aria-label^="Rein"]').first().waitFor({ timeout: 60_000 });
    await runCommand(page, 'Rein: Get Started');
    const walkthrough = page.locator('.gettingStartedContainer');
    await walkthrough.getByText('Get started with Rein').first().waitFor({ timeout: 30_000 });
    for (const step of ['Install the Rein server', 'Choose a model or set a key', 'Fix a problem with Rein']) {
      await walkthrough.getByText(step).first().waitFor();
    }
    await page.screenshot({ path: WALKTHROUGH_SCREENSHOT });
  });
});
