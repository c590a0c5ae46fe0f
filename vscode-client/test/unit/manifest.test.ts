import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { Commands, WALKTHROUGH } from '../../src/commands';
import { ROOT } from '../helpers';

interface Setting {
  type?: string | string[];
  default?: unknown;
  description?: string;
  markdownDescription?: string;
  enum?: string[];
}

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  contributes: {
    configuration: { properties: Record<string, Setting> };
    commands: { command: string; title: string; category?: string }[];
    views: Record<string, { id: string; type?: string }[]>;
    viewsContainers: { activitybar: { id: string }[] };
  };
  engines: { vscode: string };
  devDependencies: Record<string, string>;
  capabilities?: {
    untrustedWorkspaces?: { supported?: string; restrictedConfigurations?: string[] };
    virtualWorkspaces?: { supported?: boolean; description?: string };
  };
  activationEvents: string[];
  repository?: { type?: string; url?: string };
  publisher: string;
  version: string;
  name: string;
};
const settings = pkg.contributes.configuration.properties;
/** The manifest's strings (package.nls.json): `%key%` in package.json is `nls[key]`. */
const nls = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.nls.json'), 'utf8')) as Record<string, string>;
const text = (value: string | undefined): string => value?.replace(/^%(.+)%$/, (_m, key: string) => nls[key] ?? `<missing ${key}>`) ?? '';

describe('package.json', () => {
  it('contributes every rein setting with a description and a default', () => {
    const expected: Record<string, unknown> = {
      'rein.server.path': '',
      'rein.trace.server': 'off',
      'rein.model.provider': 'openai',
      'rein.model.baseUrl': '',
      'rein.model.model': '',
      'rein.model.apiKeyEnv': '',
      'rein.model.maxTokens': null,
      'rein.model.temperature': null,
      'rein.model.script': '',
      'rein.model.prices': {},
      'rein.harness.maxModelTurnsPerRun': 100,
      'rein.harness.maxRepairAttempts': 3,
      'rein.harness.toolExecution': 'parallel',
      'rein.harness.toolRetries': 3,
      'rein.harness.maxToolResultChars': 16000,
      'rein.harness.maxToolCallsPerTurn': 64,
      'rein.harness.maxContextTokens': 100000,
      'rein.harness.runIdleTimeoutMs': 900000,
      'rein.harness.subagentMaxDepth': 2,
      'rein.harness.maxTokensPerRun': null,
      'rein.harness.maxCostPerRun': null,
      'rein.gates.analyzer.enabled': true,
      'rein.gates.analyzer.severity': 'error',
      'rein.gates.dependencies.commands': {},
      'rein.gates.runtime.command': '',
      'rein.gates.tests.enabled': 'auto',
      'rein.gates.tests.command': '',
      'rein.gates.preview.command': '',
      'rein.gates.preview.reload': 'restart',
      'rein.gates.preview.errorPatterns': undefined,
      'rein.gates.preview.readiness.line': '',
      'rein.gates.preview.readiness.url': '',
      'rein.gates.preview.observationWindowMs': 1000,
      'rein.gates.preview.readiness.timeoutMs': 10000,
      'rein.gates.preview.readiness.quietMs': 2000,
      'rein.gates.preview.readiness.pollMs': 100,
      'rein.gates.preview.busyTimeoutMs': 10000,
      'rein.gates.preview.busyPollMs': 100,
      'rein.gates.preview.exitDrainMs': 1000,
      'rein.gates.preview.settleQuietMs': 100,
      'rein.gates.preview.settleMaxMs': 500,
      'rein.approval.read': 'allow',
      'rein.approval.write': 'allow',
      'rein.approval.command': 'sandboxed',
      'rein.approval.mcp': 'ask',
      'rein.approval.mcpAllow': [],
      'rein.approval.timeoutMs': 600000,
      'rein.tools.grepBackend': 'auto',
      'rein.tools.disabled': [],
      'rein.tools.toolkits': [],
      'rein.tools.passEnv': [],
      'rein.tools.secretFiles': ['.env', '.env.*', '!.env.example', '!.env.sample', '!.env.template', '.envrc', '.npmrc', '.pypirc', '.netrc', '_netrc', '.pgpass', '.git-credentials', '.htpasswd', 'id_rsa', 'id_dsa', 'id_ecdsa', 'id_ed25519', '*.pem', '*.key', '*.p12', '*.pfx', '*.keystore', '*.jks', 'credentials.json', 'service-account*.json', '.aws/credentials', '.docker/config.json', '.kube/config', 'secrets.yaml', 'secrets.yml', 'secrets.json', 'secrets.toml', '.streamlit/secrets.toml', '*.tfvars'],
      'rein.sandbox.writable': [],
      'rein.sandbox.network': [],
      'rein.sandbox.bwrap': 'bwrap',
      'rein.sandbox.also': ['gates', 'preview', 'install'],
      'rein.autoRepair': 'off',
      'rein.sessions.idleEvictMs': 600000,
      'rein.sessions.maxInMemory': 32,
      'rein.checkpoints.enabled': true,
      'rein.checkpoints.maxMb': 200,
      'rein.checkpoints.maxAgeDays': 30,
      'rein.checkpoints.maxFileKb': 2048,
      'rein.mcp.servers': {},
      'rein.mcp.configFiles': true,
      'rein.instructions.files': ['**/AGENTS.md', 'CLAUDE.md', '.github/copilot-instructions.md', '.cursor/rules/*.mdc'],
      'rein.mcp.lazyTools': false,
      'rein.mcp.maxToolShare': 0.1,
      'rein.hooks': {},
      'rein.hookOptions.timeoutS': 60,
      'rein.hookOptions.maxStopContinuations': 3,
    };
    assert.deepEqual(Object.keys(settings).sort(), Object.keys(expected).sort());
    // An untrusted workspace's settings cannot choose the server or the gates' commands.
    const trust = pkg.capabilities?.untrustedWorkspaces;
    assert.equal(trust?.supported, 'limited');
    for (const key of [
      'rein.server.path',
      'rein.gates.dependencies.commands',
      'rein.gates.runtime.command',
      'rein.gates.tests.command',
      'rein.gates.preview.command',
      'rein.mcp.servers',
      'rein.mcp.configFiles',
      'rein.model.baseUrl',
      'rein.model.apiKeyEnv',
    ]) {
      assert.ok(trust?.restrictedConfigurations?.includes(key), `${key} is restricted in untrusted workspaces`);
      assert.ok(key in settings, `${key} is a setting`);
    }
    // A workspace's settings must not make the server import code.
    assert.equal((settings['rein.tools.toolkits'] as { scope?: string }).scope, 'machine');
    // Nor add hooks: those are commands (the workspace's own hooks are asked about).
    assert.equal((settings['rein.hooks'] as { scope?: string }).scope, 'machine');
    assert.ok(trust?.restrictedConfigurations?.includes('rein.hooks'));
    for (const [key, value] of Object.entries(expected)) {
      const setting = settings[key] as Setting;
      assert.ok(setting.description ?? setting.markdownDescription, `${key} has a description`);
      assert.ok('default' in setting, `${key} has a default`);
      if (value !== undefined) {
        assert.deepEqual(setting.default, value, `${key} default`);
      }
    }
    assert.deepEqual(settings['rein.model.provider']?.enum, ['openai', 'anthropic', 'replay', 'vscode-lm']);
    assert.deepEqual(settings['rein.gates.preview.reload']?.enum, ['restart', 'signal', 'self']);
    assert.deepEqual(settings['rein.autoRepair']?.enum, ['off', 'onSave']);
    assert.deepEqual(settings['rein.approval.write']?.enum, ['allow', 'ask', 'deny', 'review']);
  });

  it('takes every manifest string from package.nls.json, and every key there is used', () => {
    const raw = fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8');
    const used = new Set([...raw.matchAll(/"%([^"%]+)%"/g)].map((m) => m[1] ?? ''));
    assert.deepEqual([...used].filter((key) => !(key in nls)), [], 'placeholders without a string');
    assert.deepEqual(Object.keys(nls).filter((key) => !used.has(key)), [], 'strings nothing uses');
    for (const [key, setting] of Object.entries(settings)) {
      const described = setting.description ?? setting.markdownDescription ?? '';
      assert.match(described, /^%.+%$/, `${key}: its description is in package.nls.json`);
    }
    assert.match(text(pkg.contributes.commands[0]?.title), /^[A-Z]/);
    const ignore = fs.readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8');
    assert.match(ignore, /^!package\.nls\.json$/m, 'the strings ship in the .vsix');
    assert.match(ignore, /^!media\/walkthrough\/\*\.md$/m, 'the walkthrough media ship in the .vsix');
    assert.match(ignore, /^!CHANGELOG\.md$/m, 'the changelog ships in the .vsix');
    const changelog = fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
    assert.ok(changelog.includes(`## ${pkg.version}`), 'the changelog has an entry for the version');
  });

  it('orders the settings with the model first', () => {
    const ordered = Object.entries(settings as Record<string, { order?: number }>).sort((a, b) => (a[1].order ?? 1e9) - (b[1].order ?? 1e9));
    assert.deepEqual(ordered.map(([, s]) => s.order), ordered.map((_, i) => i), 'every setting has its order');
    assert.deepEqual(ordered.slice(0, 4).map(([key]) => key), ['rein.model.provider', 'rein.model.model', 'rein.model.baseUrl', 'rein.model.apiKeyEnv']);
    const firstOther = ordered.findIndex(([key]) => !key.startsWith('rein.model.'));
    assert.ok(ordered.slice(firstOther).every(([key]) => !key.startsWith('rein.model.')), 'the model settings come together, first');
    assert.deepEqual(Object.keys(settings), ordered.map(([key]) => key), 'package.json lists them in that order');
  });

  it('has the chat as a webview view in its own activity-bar container', () => {
    assert.deepEqual(pkg.contributes.viewsContainers.activitybar.map((c) => c.id), ['rein']);
    assert.deepEqual(pkg.contributes.views.rein, [
      { type: 'webview', id: 'rein.chat', name: '%view.rein.chat.name%', icon: 'media/rein.svg', contextualTitle: '%view.rein.chat.contextualTitle%' },
    ]);
  });

  it('names the commands of issues 9 and 10 and leaves the server commands to the server', () => {
    const titles = pkg.contributes.commands.map((c) => `${text(c.category)}: ${text(c.title)}`);
    for (const title of ['New Session', 'Ask', 'Fix Problems in File', 'Abort', 'Show Output', 'Set API Key', 'Start Preview', 'Stop Preview', 'Restart Preview']) {
      assert.ok(titles.includes(`Rein: ${title}`), `Rein: ${title}`);
    }
    const ids = pkg.contributes.commands.map((c) => c.command);
    for (const id of Object.values(Commands)) {
      assert.ok(ids.includes(id), `${id} is contributed`);
    }
    for (const serverCommand of ['rein.fix', 'rein.explain', 'rein.ask', 'rein.abort', 'rein.preview.start', 'rein.preview.stop', 'rein.preview.restart']) {
      assert.ok(!ids.includes(serverCommand), `${serverCommand} is registered by vscode-languageclient`);
    }
  });

  it('follows the conventions: no virtual workspaces, a repository, activation on the view and commands only', () => {
    assert.equal(pkg.capabilities?.virtualWorkspaces?.supported, false);
    assert.ok(pkg.capabilities?.virtualWorkspaces?.description);
    assert.equal(pkg.repository?.type, 'git');
    assert.match(pkg.repository?.url ?? '', /^https:\/\//);
    // Commands and the view activate the extension by themselves (VS Code >= 1.74); nothing at startup.
    assert.deepEqual(pkg.activationEvents, ['onView:rein.chat']);
  });

  it('has a walkthrough whose steps have media that exist and links to contributed commands', () => {
    const walkthroughs = (pkg.contributes as unknown as {
      walkthroughs: { id: string; steps: { id: string; description: string; media: { markdown?: string; image?: string } }[] }[];
    }).walkthroughs;
    assert.deepEqual(walkthroughs.map((w) => w.id), ['rein.gettingStarted']);
    assert.equal(WALKTHROUGH, `${pkg.publisher}.${pkg.name}#rein.gettingStarted`);
    const steps = walkthroughs[0]?.steps ?? [];
    assert.deepEqual(steps.map((s) => s.id), ['installServer', 'chooseModel', 'tryFix']);
    const ids = new Set(pkg.contributes.commands.map((c) => c.command));
    for (const step of steps) {
      const media = step.media.markdown ?? step.media.image ?? '';
      assert.ok(fs.existsSync(path.join(ROOT, media)), `${step.id}: ${media} exists`);
      for (const [, command] of step.description.matchAll(/\(command:([\w.]+)/g)) {
        assert.ok(ids.has(command ?? ''), `${step.id} links ${command ?? ''}, a contributed command`);
      }
    }
  });

  it('keeps @types/vscode no newer than engines.vscode (vsce refuses otherwise)', () => {
    const engine = pkg.engines.vscode.replace(/^\^/, '');
    const types = (pkg.devDependencies['@types/vscode'] ?? '').replace(/^[\^~]/, '');
    assert.equal(types, engine);
  });
});
