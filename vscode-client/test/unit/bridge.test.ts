import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import {
  collectDiagnostics,
  DiagnosticsAnswerer,
  DiagnosticsChangeBatcher,
  registerDiagnosticsBridge,
  toLspDiagnostic,
} from '../../src/bridge/diagnostics';
import { askUser, confirmToolCall, rememberedAnswerKey } from '../../src/bridge/dialogs';
import { saveDocuments } from '../../src/bridge/save';
import { selectionContext } from '../../src/commands';
import type { DiagnosticsResult } from '../../src/shared/protocol';
import { FakeConnection } from '../fakes';
import {
  Diagnostic,
  DiagnosticRelatedInformation,
  DiagnosticSeverity,
  DiagnosticTag,
  Location,
  Range,
  stub,
  stubDocument,
  Uri,
  workspace,
} from '../stub/vscode';

const CALC = 'file:///work/project/calc.py';

function diagnostic(message: string, severity: DiagnosticSeverity, line = 14): Diagnostic {
  return new Diagnostic(new Range(line, 41, line, 46), message, severity);
}

afterEach(() => stub.reset());

describe('rein/diagnostics', () => {
  it('converts to LSP form: 1-based severity, code, code description, source, tags, related', () => {
    const d = diagnostic('Undefined name `count`', DiagnosticSeverity.Error);
    d.source = 'Ruff';
    d.code = { value: 'F821', target: Uri.parse('https://docs.astral.sh/ruff/rules/undefined-name') };
    d.tags = [DiagnosticTag.Unnecessary];
    d.relatedInformation = [
      new DiagnosticRelatedInformation(new Location(Uri.parse(CALC), new Range(2, 0, 2, 4)), 'defined here'),
    ];
    assert.deepEqual(toLspDiagnostic(d as never), {
      range: { start: { line: 14, character: 41 }, end: { line: 14, character: 46 } },
      severity: 1,
      message: 'Undefined name `count`',
      code: 'F821',
      codeDescription: { href: 'https://docs.astral.sh/ruff/rules/undefined-name' },
      source: 'Ruff',
      tags: [1],
      relatedInformation: [
        {
          location: { uri: CALC, range: { start: { line: 2, character: 0 }, end: { line: 2, character: 4 } } },
          message: 'defined here',
        },
      ],
    });
    const severities = [DiagnosticSeverity.Error, DiagnosticSeverity.Warning, DiagnosticSeverity.Information, DiagnosticSeverity.Hint];
    assert.deepEqual(
      severities.map((s) => toLspDiagnostic(diagnostic('x', s) as never).severity),
      [1, 2, 3, 4],
    );
    const numeric = diagnostic('x', DiagnosticSeverity.Warning);
    numeric.code = 2304;
    assert.equal(toLspDiagnostic(numeric as never).code, 2304);
  });

  it('answers for the asked URIs, including files without problems', () => {
    stub.diagnostics.set(CALC, [diagnostic('a', DiagnosticSeverity.Error)]);
    const result = collectDiagnostics({ uris: [CALC, 'file:///work/project/ok.py'] });
    assert.deepEqual(
      result.items.map((item) => [item.uri, item.diagnostics.length]),
      [
        [CALC, 1],
        ['file:///work/project/ok.py', 0],
      ],
    );
  });

  it('answers null with every file that has problems (files only, not output channels)', () => {
    stub.diagnostics.set(CALC, [diagnostic('a', DiagnosticSeverity.Error), diagnostic('b', DiagnosticSeverity.Hint)]);
    stub.diagnostics.set('file:///work/project/clean.py', []);
    stub.diagnostics.set('output://rein/1', [diagnostic('c', DiagnosticSeverity.Error)]);
    const result = collectDiagnostics({ uris: null });
    assert.deepEqual(
      result.items.map((item) => [item.uri, item.diagnostics.map((d) => d.severity)]),
      [[CALC, [1, 4]]],
    );
  });
});

describe('rein/diagnostics opens what it is asked about', () => {
  const openTextDocument = workspace.openTextDocument;
  let opened: string[];
  let now: number;

  beforeEach(() => {
    opened = [];
    now = 1000;
    (workspace as { openTextDocument: unknown }).openTextDocument = (uri: Uri) => {
      if (uri.toString().endsWith('/gone.py')) {
        return Promise.reject(new Error('file not found'));
      }
      opened.push(uri.toString());
      const document = stubDocument(uri.toString(), false);
      workspace.textDocuments.push(document); // as VS Code: open until closed
      return Promise.resolve(document);
    };
  });
  afterEach(() => {
    (workspace as { openTextDocument: unknown }).openTextDocument = openTextDocument;
  });

  it('opens documents that are not open and is pending until their diagnostics change', async () => {
    const open = 'file:///work/project/open.py';
    workspace.textDocuments = [stubDocument(open, false)];
    const answerer = new DiagnosticsAnswerer(() => now, 3000);
    const first = await answerer.answer({ uris: [CALC, open, 'file:///work/project/gone.py', 'untitled:Untitled-1'] });
    assert.deepEqual(opened, [CALC], 'only the file that is not open, exists and is a file');
    assert.equal(first.pending, true);
    assert.equal((await answerer.answer({ uris: [open] })).pending, undefined, 'an open document is not pending');
    stub.diagnostics.set(CALC, [diagnostic('Undefined name `count`', DiagnosticSeverity.Error)]);
    answerer.changed([Uri.parse(CALC)] as never);
    const second = await answerer.answer({ uris: [CALC] });
    assert.equal(second.pending, undefined);
    assert.deepEqual(
      second.items.map((item) => [item.uri, item.diagnostics.length]),
      [[CALC, 1]],
    );
  });

  it('stops saying pending after openWaitMs (a clean file may never get diagnostics)', async () => {
    const answerer = new DiagnosticsAnswerer(() => now, 3000);
    assert.equal((await answerer.answer({ uris: [CALC] })).pending, true);
    now += 3000;
    assert.equal((await answerer.answer({ uris: [CALC] })).pending, undefined);
  });

  it('opens nothing for null (every file with problems)', async () => {
    const answerer = new DiagnosticsAnswerer(() => now, 3000);
    const result = await answerer.answer({ uris: null });
    assert.deepEqual(opened, []);
    assert.equal(result.pending, undefined);
  });
});

describe('rein/diagnosticsChanged', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  it('sends the changed file URIs of one quiet period in one notification', () => {
    const sent: string[][] = [];
    const batcher = new DiagnosticsChangeBatcher((uris) => sent.push(uris), 20);
    batcher.add([Uri.parse(CALC)] as never);
    mock.timers.tick(10);
    batcher.add([Uri.parse('file:///work/project/b.py'), Uri.parse(CALC), Uri.parse('git:/x')] as never);
    mock.timers.tick(9);
    assert.deepEqual(sent, [], 'not before the period is over');
    mock.timers.tick(1);
    assert.deepEqual(sent, [[CALC, 'file:///work/project/b.py']]);
    mock.timers.tick(1000);
    assert.equal(sent.length, 1, 'nothing more without changes');
    batcher.add([Uri.parse('git:/only-git')] as never);
    mock.timers.tick(1000);
    assert.equal(sent.length, 1, 'no notification for URIs of other schemes');
  });

  it("sends each open document's version from when its diagnostics changed, not from when the batch is sent", () => {
    const connection = new FakeConnection();
    const context = { subscriptions: [] as { dispose(): unknown }[] };
    registerDiagnosticsBridge(context as never, connection);
    const calc = { ...stubDocument(CALC, false), version: 3 };
    workspace.textDocuments = [calc];
    try {
      stub.fireDiagnosticsChanged([Uri.parse(CALC), Uri.parse('file:///work/project/closed.py')]);
      calc.version = 4; // Rein's next edit lands before the batch goes
      mock.timers.tick(50);
      assert.deepEqual(connection.notifications, [
        { method: 'rein/diagnosticsChanged', params: { uris: [CALC, 'file:///work/project/closed.py'], versions: { [CALC]: 3 } } },
      ]);
    } finally {
      workspace.textDocuments = [];
      for (const disposable of context.subscriptions) {
        disposable.dispose();
      }
    }
  });

  it('sends at once on flush, and nothing after dispose', () => {
    const sent: string[][] = [];
    const batcher = new DiagnosticsChangeBatcher((uris) => sent.push(uris), 20);
    batcher.add([Uri.parse(CALC)] as never);
    batcher.flush();
    assert.deepEqual(sent, [[CALC]]);
    mock.timers.tick(20);
    assert.equal(sent.length, 1, 'the flushed batch is not sent again');
    batcher.add([Uri.parse(CALC)] as never);
    batcher.dispose();
    mock.timers.tick(1000);
    assert.equal(sent.length, 1);
  });

  it('is what the bridge sends the server 50 ms after the editor\'s diagnostics change, and answers rein/diagnostics', async () => {
    const connection = new FakeConnection();
    const context = { subscriptions: [] as { dispose(): unknown }[] };
    registerDiagnosticsBridge(context as never, connection);
    stub.diagnostics.set(CALC, [diagnostic('Undefined name `count`', DiagnosticSeverity.Error)]);
    stub.fireDiagnosticsChanged([Uri.parse(CALC)]);
    stub.fireDiagnosticsChanged([Uri.parse('output://rein/1')]);
    mock.timers.tick(49);
    assert.deepEqual(connection.notifications, []);
    mock.timers.tick(1);
    assert.deepEqual(connection.notifications, [{ method: 'rein/diagnosticsChanged', params: { uris: [CALC], versions: {} } }]);
    const answer = (await connection.call('rein/diagnostics', { uris: [CALC] })) as DiagnosticsResult;
    assert.deepEqual(
      answer.items.map((item) => [item.uri, item.diagnostics.map((d) => d.message)]),
      [[CALC, ['Undefined name `count`']]],
    );
    for (const subscription of context.subscriptions) {
      subscription.dispose();
    }
    stub.fireDiagnosticsChanged([Uri.parse(CALC)]);
    mock.timers.tick(1000);
    assert.equal(connection.notifications.length, 1, 'disposed with the extension');
  });
});

describe('rein/confirm and rein/askUser', () => {
  it('asks with a modal that shows the command, and approves only on Allow', async () => {
    stub.answers.push('Allow');
    const params = { sessionId: 's', tool: 'run_command', title: 'Run a command', detail: 'python -m pytest -q' };
    assert.deepEqual(await confirmToolCall(params), { approved: true });
    const call = stub.calls[0];
    assert.equal(call?.kind, 'warning');
    assert.equal(call?.message, 'Rein: Run a command');
    assert.deepEqual(call?.items, ['Allow', 'Deny']);
    const options = call?.options as { modal: boolean; detail: string };
    assert.equal(options.modal, true);
    assert.match(options.detail, /python -m pytest -q/);
    stub.answers.push('Deny');
    assert.deepEqual(await confirmToolCall(params), { approved: false });
    stub.answers.push(undefined); // the modal was closed
    assert.deepEqual(await confirmToolCall(params), { approved: false });
  });

  it('offers Always allow (session | workspace) when the server suggests rules, and says which', async () => {
    const params = {
      sessionId: 's',
      tool: 'run_command',
      title: 'Run: npm test && git status',
      detail: '$ npm test && git status',
      rule: { kind: 'command' as const, pattern: 'npm test' },
      rules: [
        { kind: 'command' as const, pattern: 'npm test' },
        { kind: 'command' as const, pattern: 'git status' },
      ],
    };
    stub.answers.push('Always allow (session)');
    assert.deepEqual(await confirmToolCall(params), { approved: true, remember: 'session' });
    const call = stub.calls[0];
    assert.deepEqual(call?.items, ['Allow', 'Always allow (session)', 'Always allow (workspace)', 'Deny']);
    assert.match((call?.options as { detail: string }).detail, /"Always allow" keeps exactly: command "npm test", command "git status"/);
    stub.answers.push('Always allow (workspace)');
    assert.deepEqual(await confirmToolCall(params), { approved: true, remember: 'workspace' });
    stub.answers.push('Allow');
    assert.deepEqual(await confirmToolCall(params), { approved: true });
    stub.answers.push('Deny');
    assert.deepEqual(await confirmToolCall(params), { approved: false });
  });

  it('offers the wider rule as a choice of its own, naming what each keeps', async () => {
    const params = {
      sessionId: 's',
      tool: 'run_command',
      title: 'Run: git log -5',
      detail: '$ git log -5',
      rules: [{ kind: 'command' as const, pattern: 'git log -5' }],
      prefixRules: [{ kind: 'command' as const, pattern: 'git log *' }],
    };
    stub.answers.push('Always allow this prefix (session)');
    assert.deepEqual(await confirmToolCall(params), { approved: true, remember: 'session', prefix: true });
    const call = stub.calls[0];
    assert.deepEqual(call?.items, [
      'Allow',
      'Always allow (session)',
      'Always allow (workspace)',
      'Always allow this prefix (session)',
      'Always allow this prefix (workspace)',
      'Deny',
    ]);
    const detail = (call?.options as { detail: string }).detail;
    assert.match(detail, /"Always allow" keeps exactly: command "git log -5"/);
    assert.match(detail, /"Always allow this prefix" keeps: commands starting with "git log"/);
    stub.answers.push('Always allow this prefix (workspace)');
    assert.deepEqual(await confirmToolCall(params), { approved: true, remember: 'workspace', prefix: true });
    stub.answers.push('Always allow (session)');
    assert.deepEqual(await confirmToolCall(params), { approved: true, remember: 'session' });
  });

  it('offers no Always allow when the suggested rules are not rules', async () => {
    stub.answers.push('Allow');
    const params = { sessionId: 's', tool: 'run_command', title: 'Run', detail: 'x', rules: [{ kind: 'shell', pattern: 'x' }, null] };
    assert.deepEqual(await confirmToolCall(params as never), { approved: true });
    assert.deepEqual(stub.calls[0]?.items, ['Allow', 'Deny']);
  });

  it('asks the question in an input box and answers null when dismissed', async () => {
    stub.answers.push('use pathlib');
    assert.deepEqual(await askUser({ sessionId: 's', question: 'Which API?' }), { answer: 'use pathlib' });
    assert.equal(stub.calls[0]?.message, 'Which API?');
    stub.answers.push(undefined);
    assert.deepEqual(await askUser({ sessionId: 's', question: 'Which API?' }), { answer: null });
  });

  it('hides a password, asks once and answers a remembered input from SecretStorage', async () => {
    const kept = new Map<string, string>();
    const secrets = {
      get: (key: string) => Promise.resolve(kept.get(key)),
      store: (key: string, value: string) => {
        kept.set(key, value);
        return Promise.resolve();
      },
    };
    const params = { question: 'GitHub token', title: 'MCP server github', password: true, remember: 'mcp-input:token' };
    stub.answers.push('ghp-secret-value');
    assert.deepEqual(await askUser(params, secrets), { answer: 'ghp-secret-value' });
    assert.equal(stub.calls.length, 1);
    const options = stub.calls[0]?.options as { password: boolean; title: string };
    assert.equal(options.password, true);
    assert.equal(options.title, 'MCP server github');
    // Kept per workspace and key; the next ask is answered without a box.
    assert.deepEqual([...kept.entries()], [['rein.askUser:file:///work/project:mcp-input:token', 'ghp-secret-value']]);
    assert.equal(rememberedAnswerKey('mcp-input:token'), 'rein.askUser:file:///work/project:mcp-input:token');
    assert.deepEqual(await askUser(params, secrets), { answer: 'ghp-secret-value' });
    assert.equal(stub.calls.length, 1);
    // Another key is asked; a dismissed box stores nothing.
    stub.answers.push(undefined);
    assert.deepEqual(await askUser({ ...params, remember: 'mcp-input:other' }, secrets), { answer: null });
    assert.equal(stub.calls.length, 2);
    assert.equal(kept.size, 1);
    // Without remember, nothing is read or kept, and the text is not hidden.
    stub.answers.push('plain');
    assert.deepEqual(await askUser({ question: 'Which?' }, secrets), { answer: 'plain' });
    assert.equal((stub.calls[2]?.options as { password: boolean }).password, false);
    assert.equal(kept.size, 1);
  });

  it('offers the options of a pickString input as a pick list', async () => {
    stub.answers.push('eu');
    assert.deepEqual(await askUser({ question: 'Region', options: ['eu', 'us'] }), { answer: 'eu' });
    assert.equal(stub.calls[0]?.kind, 'pick');
    assert.deepEqual(stub.calls[0]?.items, ['eu', 'us']);
    assert.equal(stub.calls[0]?.message, 'Region');
  });
});

describe('Rein: Ask', () => {
  it('sends the selection with its range and the file as context', () => {
    const document = {
      uri: Uri.parse(CALC),
      languageId: 'python',
      getText: (range: Range) => `text of ${range.start.line}-${range.end.line}`,
    };
    const selection = new Range(12, 4, 12, 20);
    assert.deepEqual(selectionContext({ document, selection } as never), {
      uri: CALC,
      languageId: 'python',
      range: { start: { line: 12, character: 4 }, end: { line: 12, character: 20 } },
      selection: 'text of 12-12',
    });
    const empty = new Range(3, 0, 3, 0);
    assert.deepEqual(selectionContext({ document, selection: empty } as never), { uri: CALC, languageId: 'python' });
    assert.equal(selectionContext(undefined), undefined);
  });
});

describe('rein/saveDocuments', () => {
  it('saves the dirty open documents Rein changed and reports them', async () => {
    const dirty = stubDocument(CALC, true);
    const clean = stubDocument('file:///work/project/util.py', false);
    workspace.textDocuments = [dirty, clean];
    const result = await saveDocuments({ uris: [CALC, 'file:///work/project/util.py', 'file:///work/project/closed.py'] });
    assert.deepEqual(result, { saved: [CALC, 'file:///work/project/util.py'] });
    assert.equal(dirty.saves, 1);
    assert.equal(clean.saves, 0);
    assert.equal(dirty.isDirty, false);
  });
});
