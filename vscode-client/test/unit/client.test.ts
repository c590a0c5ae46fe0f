import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { apiKeyEnvName } from '../../src/apiKey';
import { trustGate, UNTRUSTED_DETAIL } from '../../src/trust';
import {
  contributedKeys,
  explicitSettings,
  type SettingScopes,
  USER_ONLY_SETTINGS,
  userOnly,
  wideningNotice,
  withSecretFiles,
  withStoragePath,
  withWorkspaceTrust,
  workspaceServerNames,
  workspaceWidenings,
} from '../../src/configuration';
import { backoffMs, RestartPolicy } from '../../src/restartPolicy';
import { chatHtml } from '../../src/panel/chatView';
import { changedItems, UpdateBuilder } from '../../src/panel/updates';
import { locateServer, type ServerLookup } from '../../src/serverPath';
import { statusText } from '../../src/statusBar';
import type { Header, Item, McpView, PreviewView } from '../../src/shared/viewModel';
import { ROOT } from '../helpers';

function lookup(files: string[], overrides: Partial<ServerLookup> = {}): ServerLookup {
  return {
    setting: '',
    workspaceFolders: ['/w'],
    pythonBinDirs: [],
    pathEnv: '/usr/local/bin:/usr/bin',
    platform: 'linux',
    trusted: true,
    isExecutable: (file) => files.includes(file),
    ...overrides,
  };
}

describe('locateServer', () => {
  it('prefers the setting, then the selected Python environment, then .venv, then PATH', () => {
    const all = ['/opt/rein', '/envs/py311/bin/rein', '/w/.venv/bin/rein', '/usr/bin/rein'];
    assert.deepEqual(locateServer(lookup(all, { setting: '/opt/rein', pythonBinDirs: ['/envs/py311/bin'] })), {
      found: true,
      path: '/opt/rein',
      source: 'setting',
    });
    assert.deepEqual(locateServer(lookup(all, { pythonBinDirs: ['/envs/py311/bin'] })), {
      found: true,
      path: '/envs/py311/bin/rein',
      source: 'python',
    });
    assert.deepEqual(locateServer(lookup(all)), { found: true, path: '/w/.venv/bin/rein', source: 'venv' });
    assert.deepEqual(locateServer(lookup(['/usr/bin/rein'])), { found: true, path: '/usr/bin/rein', source: 'PATH' });
  });

  it('expands ${workspaceFolder} and resolves a relative setting against the workspace', () => {
    const found = locateServer(lookup(['/w/tools/rein'], { setting: '${workspaceFolder}/tools/rein' }));
    assert.ok(found.found && found.path === '/w/tools/rein');
    const relative = locateServer(lookup(['/w/tools/rein'], { setting: 'tools/rein' }));
    assert.ok(relative.found && relative.path === '/w/tools/rein');
  });

  it('starts nothing inside the workspace before the person trusts it', () => {
    const all = ['/w/.venv/bin/rein', '/w/env/bin/rein', '/w/tools/rein', '/usr/bin/rein'];
    const untrusted = { trusted: false, pathEnv: '/w/tools:/usr/bin' };
    // The workspace's .venv, its selected environment and a PATH entry inside it are passed over.
    assert.deepEqual(locateServer(lookup(all, { ...untrusted, pythonBinDirs: ['/w/env/bin'] })), {
      found: true,
      path: '/usr/bin/rein',
      source: 'PATH',
    });
    const none = locateServer(lookup(['/w/.venv/bin/rein'], untrusted));
    assert.ok(!none.found && /not trusted/.test(none.reason));
    const setting = locateServer(lookup(all, { ...untrusted, setting: '${workspaceFolder}/tools/rein' }));
    assert.ok(!setting.found && /inside the workspace/.test(setting.reason) && /not trusted/.test(setting.reason));
    const relative = locateServer(lookup(all, { ...untrusted, setting: 'tools/rein' }));
    assert.ok(!relative.found && /inside the workspace/.test(relative.reason));
    // Outside every folder, the setting is honoured.
    assert.deepEqual(locateServer(lookup(['/opt/rein'], { ...untrusted, setting: '/opt/rein' })), {
      found: true,
      path: '/opt/rein',
      source: 'setting',
    });
  });

  it('explains what is missing', () => {
    const bad = locateServer(lookup([], { setting: '/nope/rein' }));
    assert.ok(!bad.found && /rein\.server\.path is set to "\/nope\/rein"/.test(bad.reason));
    const none = locateServer(lookup([]));
    assert.ok(!none.found && /No `rein` executable found/.test(none.reason));
  });
});

describe('client helpers', () => {
  it('backs off 1, 2, 4, 8, 16 s and caps at 30 s', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => backoffMs(n)), [1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it('restarts after quick crashes with backoff, gives up after five, forgives a stable run', () => {
    const policy = new RestartPolicy(5, 60_000, 1000);
    policy.started(0);
    assert.deepEqual(policy.crashed(100), { giveUp: false, crashes: 1, delayMs: 1000 });
    policy.started(2000);
    assert.deepEqual(policy.crashed(2100), { giveUp: false, crashes: 2, delayMs: 2000 });
    policy.started(5000);
    assert.deepEqual(policy.crashed(5000 + 60_000), { giveUp: false, crashes: 1, delayMs: 1000 });
    assert.equal(policy.crashed(70_000).giveUp, false); // start failed: no started() in between
    assert.equal(policy.crashed(70_100).giveUp, false);
    assert.equal(policy.crashed(70_200).giveUp, false);
    assert.deepEqual(policy.crashed(70_300), { giveUp: true, crashes: 5 });
    policy.reset();
    assert.equal(policy.crashed(80_000).giveUp, false);
  });

  it('sends the server what the person set, without the client-only keys', () => {
    const contributed = contributedKeys(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')));
    const section = {
      server: { path: '/opt/rein' },
      trace: { server: 'verbose' },
      model: { provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: '', maxTokens: null },
      harness: { maxRepairAttempts: 3, toolTimeoutMs: 1000 },
      gates: { analyzer: { enabled: true, severity: 'error' }, dependencies: { commands: { 'package.json': 'npm install' } }, preview: { reload: 'restart' } },
      autoRepair: 'off',
    };
    const userSet = new Set(['rein.model.baseUrl', 'rein.gates.dependencies.commands', 'rein.server.path']);
    assert.deepEqual(explicitSettings(section, contributed, (key) => userSet.has(key)), {
      model: { baseUrl: 'http://127.0.0.1:9/v1' },
      harness: { toolTimeoutMs: 1000 },
      gates: { dependencies: { commands: { 'package.json': 'npm install' } } },
    });
  });

  it('adds storagePath to the rein section the server pulls', () => {
    assert.deepEqual(withStoragePath('rein', { autoRepair: 'off' }, '/store'), { autoRepair: 'off', storagePath: '/store' });
    assert.deepEqual(withStoragePath('rein', null, '/store'), { storagePath: '/store' });
    assert.equal(withStoragePath('rein.storagePath', null, '/store'), '/store');
    assert.deepEqual(withStoragePath('python', { x: 1 }, '/store'), { x: 1 });
  });

  it('reads no workspace MCP file in an untrusted workspace', () => {
    const section = { mcp: { servers: { mine: { command: 'x' } } }, autoRepair: 'off' };
    assert.deepEqual(withWorkspaceTrust(section, true), { ...section, mcp: { ...section.mcp, workspaceServers: [] } });
    assert.deepEqual(withWorkspaceTrust(section, false), {
      mcp: { servers: { mine: { command: 'x' } }, workspaceServers: [], configFiles: false },
      autoRepair: 'off',
    });
    assert.deepEqual(withWorkspaceTrust({ mcp: { configFiles: true } }, false), { mcp: { configFiles: false, workspaceServers: [] } });
    assert.deepEqual(withWorkspaceTrust({}, false), { mcp: { configFiles: false, workspaceServers: [] } });
  });

  it('names the MCP servers the workspace settings define, which a workspace cannot hide', () => {
    const info = {
      globalValue: { mine: { command: 'a' } },
      workspaceValue: { team: { command: 'b' } },
      workspaceFolderValue: { folder: { command: 'c' }, mine: { command: 'd' } },
    };
    assert.deepEqual(workspaceServerNames(info), ['folder', 'mine', 'team']);
    assert.deepEqual(workspaceServerNames({ globalValue: { mine: {} } } as never), []);
    assert.deepEqual(workspaceServerNames(undefined), []);
    const spoofed = { mcp: { workspaceServers: [] as string[], servers: {} } };
    assert.deepEqual(withWorkspaceTrust(spoofed, true, ['team']).mcp, { workspaceServers: ['team'], servers: {} });
  });

  it('sends only the user\'s value of the settings that widen what runs unasked', () => {
    const scopes: Record<string, SettingScopes> = {
      'rein.approval.command': { globalValue: 'ask', workspaceValue: 'allow' },
      'rein.approval.mcp': { workspaceFolderValue: 'allow' },
      'rein.approval.mcpAllow': { workspaceValue: ['evil'] },
      'rein.tools.passEnv': { globalValue: ['NPM_TOKEN'], workspaceValue: ['OPENAI_API_KEY'] },
      'rein.hooks': { globalValue: { Stop: [] }, workspaceValue: { PreToolUse: ['evil'] } },
      'rein.hookOptions.timeoutS': { workspaceValue: 3600 },
      'rein.hookOptions.maxStopContinuations': { globalValue: 2, workspaceFolderValue: 100 },
      'rein.sandbox.writable': { workspaceValue: ['~'] },
      'rein.sandbox.network': { workspaceFolderValue: ['attacker.example'] },
      'rein.sandbox.bwrap': { workspaceValue: '/x/evil' },
      'rein.sandbox.also': { workspaceValue: [] },
    };
    // The merged section as a client might get it, workspace values included.
    const merged = {
      approval: { command: 'allow', mcp: 'allow', mcpAllow: ['evil'], write: 'review' },
      tools: { passEnv: ['OPENAI_API_KEY'] },
      hooks: { PreToolUse: ['evil'] },
      hookOptions: { timeoutS: 3600, maxStopContinuations: 100 },
    };
    const users = {
      approval: { command: 'ask' },
      tools: { passEnv: ['NPM_TOKEN'] },
      hookOptions: { maxStopContinuations: 2 },
      hooks: { Stop: [] },
    };
    assert.deepEqual(userOnly(merged, (key) => scopes[key]), { ...users, approval: { command: 'ask', write: 'review' } });
    assert.deepEqual(userOnly({ approval: { mcp: 'allow' }, hooks: { Stop: ['x'] } }, () => undefined), {});
    // A repository's .vscode/settings.json cannot widen the sandbox; hidden (narrows) stays.
    const sandbox = { sandbox: { writable: ['~'], network: ['attacker.example'], bwrap: '/x/evil', hidden: ['/h'] } };
    assert.deepEqual(userOnly(sandbox, (key) => (key === 'rein.sandbox.network' ? { globalValue: ['pypi'] } : undefined)), {
      sandbox: { hidden: ['/h'], network: ['pypi'] },
    });
    assert.deepEqual(userOnly({}, (key) => scopes[key]), users);
    assert.deepEqual(workspaceWidenings((key) => scopes[key]), USER_ONLY_SETTINGS);
    assert.deepEqual(workspaceWidenings(() => ({ globalValue: 'allow' })), []);
    assert.equal(
      wideningNotice(['rein.approval.command']),
      'This workspace tries to set rein.approval.command in its own settings; Rein ignores it: only your user settings can widen what runs without asking.',
    );
    assert.equal(wideningNotice([]), undefined);
  });

  it('lets a workspace only add secret files, never shorten or unlock the list', () => {
    // VS Code's merged value is the workspace's: the server gets the user's list and the additions.
    const merged = { tools: { secretFiles: [], grepBackend: 'python', workspaceSecretFiles: ['x'] } };
    const scopes: Record<string, SettingScopes> = {
      'rein.tools.secretFiles': {
        globalValue: ['.env', '!.env.local'],
        workspaceValue: ['!.env', 'deploy/*.cfg'],
        workspaceFolderValue: ['deploy/*.cfg', 'vault.txt'],
      },
    };
    assert.deepEqual(withSecretFiles(merged, (key) => scopes[key]), {
      tools: { grepBackend: 'python', secretFiles: ['.env', '!.env.local'], workspaceSecretFiles: ['deploy/*.cfg', 'vault.txt'] },
    });
    // The user set nothing: the server keeps its defaults; a workspace's empty list adds nothing.
    const emptied = { tools: { secretFiles: [] } };
    assert.deepEqual(withSecretFiles(emptied, () => ({ workspaceValue: [] })), {});
  });

  it('gives the widening settings the machine scope and restricts them', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
      contributes: { configuration: { properties: Record<string, { scope?: string }> } };
    };
    for (const key of USER_ONLY_SETTINGS) {
      assert.equal(manifest.contributes.configuration.properties[key]?.scope, 'machine', key);
      assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(key), key);
    }
  });

  it('names the API key variable by provider unless rein.model.apiKeyEnv says otherwise', () => {
    assert.equal(apiKeyEnvName('openai', ''), 'OPENAI_API_KEY');
    assert.equal(apiKeyEnvName('anthropic', undefined), 'ANTHROPIC_API_KEY');
    assert.equal(apiKeyEnvName('replay', ''), undefined);
    assert.equal(apiKeyEnvName('openai', ' MY_GATEWAY_KEY '), 'MY_GATEWAY_KEY');
  });
});

describe('status bar text', () => {
  const idle: Header = { sessionId: null, status: 'idle', turn: 0, runUsage: {}, sessionUsage: {} };
  it('says idle, running with turn and tokens, or what is wrong with the server', () => {
    assert.equal(statusText({ state: 'running' }, idle).text, '$(hubot) Rein');
    const running: Header = { ...idle, status: 'running', turn: 3, runUsage: { input_tokens: 12000, output_tokens: 345 } };
    assert.equal(statusText({ state: 'running' }, running).text, '$(sync~spin) Rein: turn 3 · 12.3k tokens');
    assert.ok(statusText({ state: 'missing', detail: 'x' }, idle).warning);
    assert.match(statusText({ state: 'restarting', detail: 'exit code 1; restarting in 2 s' }, idle).tooltip, /restarting in 2 s/);
  });
});

describe('chat view plumbing', () => {
  it('has a CSP with a nonce and no remote sources', () => {
    const html = chatHtml({ cspSource: 'vscode-webview://abc' }, 'vscode-webview://abc/main.js', 'vscode-webview://abc/panel.css', 'N0NCE');
    const csp = /content="([^"]+)"/.exec(html)?.[1] ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-N0NCE'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    assert.match(html, /<script nonce="N0NCE" src="vscode-webview:\/\/abc\/main.js"><\/script>/);
  });

  it('sends everything after a reset, then only changes, and nothing when nothing changed', () => {
    const builder = new UpdateBuilder();
    const header = { sessionId: 's', status: 'idle' as const, turn: 0, runUsage: {}, sessionUsage: {} };
    const items = [{ id: 'a', rev: 1, kind: 'notice', level: 'info', text: 'x' }] as Item[];
    const preview: PreviewView = { rev: 0, state: 'unknown', reloads: 0, lines: [] };
    const mcp: McpView = { rev: 0, servers: [] };
    const first = builder.next({ header, items, preview, mcp });
    assert.equal(first?.reset, true);
    assert.deepEqual(first.preview, preview, 'a reset sends the preview section');
    assert.equal(builder.next({ header, items, preview, mcp }), undefined);
    const turned = builder.next({ header: { ...header, turn: 2 }, items, preview, mcp });
    assert.deepEqual(turned?.items, []);
    assert.equal(turned?.preview, undefined, 'the preview did not change');
    const removed = builder.next({ header: { ...header, turn: 2 }, items: [], preview, mcp });
    assert.deepEqual(removed?.order, []);
    const running: PreviewView = { ...preview, rev: 1, state: 'running', lines: ['ready'] };
    const previewOnly = builder.next({ header: { ...header, turn: 2 }, items: [], preview: running, mcp });
    assert.deepEqual([previewOnly?.items, previewOnly?.preview?.state], [[], 'running']);
    assert.equal(previewOnly?.mcp, undefined, 'the MCP servers did not change');
    const mcpRunning: McpView = { rev: 1, servers: [{ name: 'time', source: 'vscode', state: 'running', tools: 2 }] };
    const mcpOnly = builder.next({ header: { ...header, turn: 2 }, items: [], preview: running, mcp: mcpRunning });
    assert.deepEqual([mcpOnly?.items, mcpOnly?.preview, mcpOnly?.mcp], [[], undefined, mcpRunning]);
    builder.reset();
    assert.equal(builder.next({ header, items, preview: running, mcp })?.items.length, 1);
  });

  it('sends only new or changed items', () => {
    const sent = new Map<string, number>();
    const items = [
      { id: 'a', rev: 1, kind: 'notice', level: 'info', text: 'x' },
      { id: 'b', rev: 2, kind: 'notice', level: 'info', text: 'y' },
    ] as Item[];
    assert.equal(changedItems(items, sent).length, 2);
    assert.equal(changedItems(items, sent).length, 0);
    (items[1] as { rev: number }).rev = 3;
    assert.deepEqual(
      changedItems(items, sent).map((item) => item.id),
      ['b'],
    );
  });
});

describe('an untrusted workspace', () => {
  it('starts nothing and says why until the workspace is trusted', () => {
    assert.equal(trustGate(true), undefined);
    assert.deepEqual(trustGate(false), { state: 'untrusted', detail: UNTRUSTED_DETAIL });
    assert.match(UNTRUSTED_DETAIL, /only in a trusted workspace/);
  });

  it('shows a shield in the status bar with the reason', () => {
    const header: Header = { sessionId: null, status: 'idle', turn: 0, runUsage: {}, sessionUsage: {} };
    assert.deepEqual(statusText({ state: 'untrusted', detail: UNTRUSTED_DETAIL }, header), {
      text: '$(shield) Rein',
      tooltip: `Rein: ${UNTRUSTED_DETAIL}`,
      warning: true,
    });
  });
});
