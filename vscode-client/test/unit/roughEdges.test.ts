/** Issue 21, item 7: the rough edges met in the real VS Code run. */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { confirmToolCall } from '../../src/bridge/dialogs';
import { editedUris, PersonEdits, saveDocuments } from '../../src/bridge/save';
import { registerRunContext, RUN_ACTIVE_KEY } from '../../src/commands';
import { ignoredServerPath } from '../../src/serverPath';
import { argsText } from '../../src/shared/args';
import { sessionLabel } from '../../src/shared/sessionLabel';
import { plain } from '../../src/panel/text';
import { runLogLine } from '../../src/log';
import { ChatController } from '../../src/panel/controller';
import { isKeyProblem, PanelState } from '../../src/panel/reducer';
import { envelope, FakeConnection } from '../fakes';
import { ROOT } from '../helpers';
import { stub, stubDocument, workspace } from '../stub/vscode';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  contributes: {
    commands: { command: string; enablement?: string }[];
    menus: Record<string, { command: string; when?: string }[]>;
  };
};

afterEach(() => stub.reset());

describe('the view title', () => {
  it('enables Abort only while a run is active', async () => {
    const abort = pkg.contributes.commands.find((c) => c.command === 'rein.abortRun');
    assert.equal(abort?.enablement, RUN_ACTIVE_KEY);
    const connection = new FakeConnection();
    connection.responders.set('rein/sessions', () => ({ sessions: [] }));
    connection.responders.set('rein/checkpoints', () => ({ runs: [] }));
    connection.responders.set('rein/review', () => ({ runs: [] }));
    const controller = new ChatController(connection, undefined);
    const context = { subscriptions: [] as { dispose(): void }[] };
    registerRunContext(context as never, controller);
    connection.emit(envelope(1, { type: 'agent_start' }));
    connection.emit(envelope(2, { type: 'run_start', run_id: 'r1', prompt: 'go' }));
    connection.emit(envelope(3, { type: 'turn_start', turn: 1 }));
    connection.emit(envelope(4, { type: 'run_end', run_id: 'r1', status: 'completed' }));
    connection.emit(envelope(5, { type: 'agent_end', status: 'completed' }));
    await Promise.resolve();
    const contexts = stub.commands.filter((c) => c.command === 'setContext').map((c) => c.args);
    assert.deepEqual(contexts, [
      [RUN_ACTIVE_KEY, false],
      [RUN_ACTIVE_KEY, true],
      [RUN_ACTIVE_KEY, false],
    ]);
    controller.dispose();
  });

  it('has one New Session button: the panel toolbar has it, the view title does not', () => {
    const title = pkg.contributes.menus['view/title'] ?? [];
    assert.ok(!title.some((item) => item.command === 'rein.newSession'));
    const page = fs.readFileSync(path.join(ROOT, 'webview', 'main.ts'), 'utf8');
    assert.equal(page.match(/'aria-label': l10n.t\('New session'\)/g)?.length, 1);
  });
});

describe('notifications', () => {
  it('show code in quotes, never raw backticks', async () => {
    assert.equal(plain('Undefined name `nmae` in `calc.py`'), "Undefined name 'nmae' in 'calc.py'");
    assert.equal(plain('a stray ` tick'), "a stray ' tick");
    stub.answers.push('Allow');
    await confirmToolCall({ tool: 'run_command', title: 'Run `rm -rf build`?', detail: 'in `build/`' });
    const call = stub.calls[0];
    assert.equal(call?.message, "Rein: Run 'rm -rf build'?");
    assert.deepEqual(call?.options, { modal: true, detail: "in 'build/'\n\nTool: run_command" });
    assert.ok(!JSON.stringify(stub.calls).includes('`'));
  });
});

describe('a missing or rejected API key', () => {
  const REASON =
    'openai rejected the credentials (HTTP 401): Incorrect API key provided; the API key was read from the environment variable OPENAI_API_KEY (is not set)';

  it('is said once, on the run row, with Set API Key, and reaches the output channel once', () => {
    const state = new PanelState('s1');
    const events = [
      { type: 'agent_start' },
      { type: 'run_start', run_id: 'r1', prompt: 'go' },
      { type: 'turn_start', turn: 1 },
      { type: 'error', message: REASON, where: 'run', fatal: true },
      { type: 'run_end', run_id: 'r1', status: 'failed', reason: REASON, turns: 1 },
      { type: 'agent_end', status: 'failed' },
    ];
    for (const event of events) {
      state.apply(event);
    }
    const items = state.view().items;
    assert.deepEqual(items.filter((i) => i.kind === 'notice'), []);
    const end = items.find((i) => i.kind === 'run_end');
    assert.ok(end?.kind === 'run_end' && end.keyProblem === true && end.reason === REASON);
    const logged = events.map((event, seq) => runLogLine(envelope(seq + 1, event))).filter((line) => line?.level === 'error');
    assert.deepEqual(logged, [{ level: 'error', text: `Run r1 failed after 1 turn (session s1): ${REASON}` }]);
  });

  it('is told from other failures', () => {
    assert.equal(isKeyProblem(REASON), true);
    assert.equal(isKeyProblem('anthropic denied access (HTTP 403): forbidden'), true);
    assert.equal(isKeyProblem('budget: 120000 tokens used of 100000'), false);
  });
});

describe("Rein's save after an edit", () => {
  const CALC = 'file:///work/project/calc.py';
  const UTIL = 'file:///work/project/util.py';

  it("never saves the person's unsaved typing: such a document stays dirty and is reported unsaved", async () => {
    const typing = stubDocument(CALC, true); // the person's unsaved changes before Rein's edit
    const clean = stubDocument(UTIL, false);
    workspace.textDocuments = [typing, clean];
    const person = new PersonEdits();
    person.beforeRein(editedUris({ changes: { [CALC]: [] }, documentChanges: [{ textDocument: { uri: UTIL } }, { kind: 'create' }] }));
    clean.isDirty = true; // Rein's edit made it dirty
    const result = await saveDocuments({ uris: [CALC, UTIL] }, person);
    assert.deepEqual(result, { saved: [UTIL], unsaved: [CALC] });
    assert.equal(typing.saves, 0);
    assert.equal(typing.isDirty, true);
    assert.equal(clean.saves, 1);
    // Once the person saved it, Rein's next edit of a clean buffer is saved again.
    person.settled(CALC);
    typing.isDirty = false;
    person.beforeRein([CALC]);
    typing.isDirty = true;
    assert.deepEqual(await saveDocuments({ uris: [CALC] }, person), { saved: [CALC] });
  });
});

describe('tool arguments', () => {
  it('read as key: value lines, a multi-line string as its text indented under its key', () => {
    assert.equal(
      argsText({ path: 'src/calc.py', old_string: 'def a():\n    return 1', replace_all: false, lines: [1, 2], opts: { a: 1 } }),
      'path: src/calc.py\nold_string:\n  def a():\n      return 1\nreplace_all: false\nlines: [1,2]\nopts: {"a":1}',
    );
    assert.equal(argsText({ big: { text: 'x'.repeat(70) } }), `big: {\n  "text": "${'x'.repeat(70)}"\n}`);
  });
});

describe('rein.server.path in a scope where it is ignored', () => {
  it("is reported: a folder's value in a multi-root workspace, the workspace's value while untrusted", () => {
    assert.match(ignoredServerPath({ workspaceFolderValue: '/opt/rein' }, true, true) ?? '', /folder's settings, which Rein does not read/);
    assert.match(ignoredServerPath({ workspaceValue: '/opt/rein' }, false, false) ?? '', /ignored until you trust the workspace/);
    assert.equal(ignoredServerPath({ workspaceValue: '/opt/rein' }, true, false), undefined);
    assert.equal(ignoredServerPath({ workspaceFolderValue: '/opt/rein', workspaceValue: '/opt/rein' }, true, true), undefined);
    assert.equal(ignoredServerPath({ workspaceFolderValue: '/opt/rein' }, true, false), undefined, 'a single folder is the workspace');
    assert.equal(ignoredServerPath(undefined, false, true), undefined);
    assert.equal(ignoredServerPath({ workspaceValue: '  ' }, false, false), undefined);
  });
});

describe('the session picker', () => {
  it('never shows a dangling separator', () => {
    const at = 1796208060;
    const stamp = new Date(at * 1000).toLocaleString('en-US', { dateStyle: 'short', timeStyle: 'short' });
    assert.equal(sessionLabel({ id: 's1', title: 'Fix calc.py', updatedAt: at }, 'en-US'), `Fix calc.py · ${stamp}`);
    assert.equal(sessionLabel({ id: 's1', title: 'Fix calc.py', updatedAt: 'not a date' }, 'en-US'), 'Fix calc.py');
    assert.equal(sessionLabel({ id: 's1', title: '  ', updatedAt: '' }, 'en-US'), 's1');
    assert.equal(sessionLabel({ id: 's1', title: 'Fix the problems ·\n', updatedAt: '' }, 'en-US'), 'Fix the problems');
    assert.equal(sessionLabel({ id: 's1', title: 'Fix\nthe   tests:', updatedAt: '' }, 'en-US'), 'Fix the tests');
    const long = sessionLabel({ id: 's1', title: 'x'.repeat(100), updatedAt: '' }, 'en-US');
    assert.equal(long, `${'x'.repeat(59)}\u2026`);
  });
});
