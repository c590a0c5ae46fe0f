import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { ChatController } from '../../src/panel/controller';
import {
  fileProblemsChip,
  MAX_PROBLEM_FILES,
  pickMention,
  plainTerminalText,
  selectionChip,
  TERMINAL_OUTPUT_CHARS,
  terminalChip,
  TerminalOutputLog,
  workspaceProblemsChip,
} from '../../src/panel/mentions';
import { blockLabel, splitAttachments } from '../../src/shared/attachmentBlocks';
import { envelope, FakeConnection } from '../fakes';
import { Diagnostic, DiagnosticSeverity, EventEmitter, Position, Range, Selection, stub, Uri, window } from '../stub/vscode';

const CALC = 'file:///work/project/src/calc.py';

async function* chunks(...parts: string[]): AsyncIterable<string> {
  for (const part of parts) {
    yield await Promise.resolve(part);
  }
}

/** An editor showing `lines` with `selection` (what selectionChip reads of one). */
function editorWith(lines: string[], selection: Selection): unknown {
  return {
    selection,
    document: {
      uri: Uri.parse(CALC),
      lineAt: (line: number) => ({ range: new Range(line, 0, line, lines[line]?.length ?? 0) }),
      getText: (range: Range) => {
        if (range.start.line === range.end.line) {
          return (lines[range.start.line] ?? '').slice(range.start.character, range.end.character);
        }
        const middle = lines.slice(range.start.line + 1, range.end.line);
        return [(lines[range.start.line] ?? '').slice(range.start.character), ...middle, (lines[range.end.line] ?? '').slice(0, range.end.character)].join('\n');
      },
    },
  };
}

/** Turns VS Code's shell-integration API on in the stub for one test. */
function withShellIntegration(): () => void {
  const win = window as unknown as Record<string, unknown>;
  win.onDidStartTerminalShellExecution = new EventEmitter<unknown>().event;
  return () => delete win.onDidStartTerminalShellExecution;
}

afterEach(() => stub.reset());

describe('@ mentions: the terminal output', () => {
  it('strips colours and shell-integration marks, and keeps CRLF as lines', () => {
    const raw = '\u001b]633;C\u0007\u001b[31mFAILED\u001b[0m test_calc.py\r\n1 failed\r\n\u001b]633;D;1\u0007';
    assert.equal(plainTerminalText(raw), 'FAILED test_calc.py\n1 failed\n');
  });

  it("keeps the last command and its output's tail", async () => {
    const log = new TerminalOutputLog();
    assert.equal(log.lastOutput(), undefined);
    await log.record('bash', 'ls', chunks('a\n'));
    await log.record('bash', 'pytest -q', chunks('x'.repeat(TERMINAL_OUTPUT_CHARS), '\n1 failed\n'));
    const last = log.lastOutput();
    assert.equal(last?.label, 'Terminal: pytest -q');
    assert.ok(last?.text.startsWith('$ pytest -q\n'));
    assert.ok(last?.text.endsWith('\n1 failed'));
    assert.equal(last?.text.length, '$ pytest -q\n'.length + TERMINAL_OUTPUT_CHARS - 1);
  });

  it('says why there is nothing to attach: no shell-integration API, then no command seen', async () => {
    const log = new TerminalOutputLog();
    assert.match(terminalChip(log) as string, /no shell-integration API/);
    const restore = withShellIntegration();
    try {
      assert.match(terminalChip(log) as string, /No terminal command was seen yet/);
      await log.record('bash', 'make', chunks('ok\n'));
      assert.deepEqual(terminalChip(log), { label: 'Terminal: make', attachments: [{ kind: 'terminal', text: '$ make\nok' }] });
    } finally {
      restore();
    }
  });
});

describe('@ mentions: the selection and Problems', () => {
  it('attaches the selection with its range, the current line when nothing is selected', () => {
    const lines = ['def add(a, b):', '    return a - b', ''];
    const selected = selectionChip(editorWith(lines, new Selection(new Position(0, 4), new Position(1, 16))) as never);
    assert.deepEqual(selected, {
      label: 'src/calc.py:1-2',
      attachments: [
        {
          kind: 'selection',
          uri: CALC,
          range: { start: { line: 0, character: 4 }, end: { line: 1, character: 16 } },
          text: 'add(a, b):\n    return a - b',
        },
      ],
    });
    const caret = selectionChip(editorWith(lines, new Selection(new Position(1, 3), new Position(1, 3))) as never);
    assert.equal(typeof caret === 'string' ? caret : caret.attachments[0]?.text, '    return a - b');
    assert.match(selectionChip(undefined) as string, /No editor is active/);
  });

  it("attaches a file's Problems in LSP form, or says it has none", () => {
    assert.equal(fileProblemsChip(Uri.parse(CALC) as never), 'src/calc.py has no problems.');
    stub.diagnostics.set(CALC, [new Diagnostic(new Range(4, 1, 4, 5), 'Undefined name `nmae`', DiagnosticSeverity.Error)]);
    assert.deepEqual(fileProblemsChip(Uri.parse(CALC) as never), {
      label: 'Problems: src/calc.py',
      attachments: [
        {
          kind: 'problems',
          uri: CALC,
          diagnostics: [{ range: { start: { line: 4, character: 1 }, end: { line: 4, character: 5 } }, severity: 1, message: 'Undefined name `nmae`' }],
        },
      ],
    });
  });

  it("attaches the workspace's Problems one file each, files with errors first, at most MAX_PROBLEM_FILES", () => {
    assert.equal(workspaceProblemsChip(), 'The workspace has no problems.');
    for (let i = 0; i < MAX_PROBLEM_FILES + 2; i++) {
      stub.diagnostics.set(`file:///work/project/w${String(i).padStart(2, '0')}.py`, [
        new Diagnostic(new Range(0, 0, 0, 1), 'style', DiagnosticSeverity.Warning),
      ]);
    }
    stub.diagnostics.set('file:///work/project/z.py', [new Diagnostic(new Range(0, 0, 0, 1), 'broken', DiagnosticSeverity.Error)]);
    const chip = workspaceProblemsChip();
    assert.ok(typeof chip !== 'string');
    assert.equal(chip.label, `Problems: workspace (${MAX_PROBLEM_FILES + 3})`);
    assert.equal(chip.attachments.length, MAX_PROBLEM_FILES);
    assert.equal(chip.attachments[0]?.uri, 'file:///work/project/z.py');
    assert.ok(chip.attachments.every((a) => a.kind === 'problems'));
  });
});

describe('@ mentions: the picker', () => {
  it('offers the context entries then the files; a file becomes a file attachment', async () => {
    stub.files.add('/work/project/src/calc.py');
    stub.files.add('/work/project/README.md');
    stub.answers.push('$(file) calc.py');
    const chip = await pickMention(new TerminalOutputLog());
    assert.deepEqual(chip, { label: 'src/calc.py', attachments: [{ kind: 'file', uri: CALC }] });
    const call = stub.calls[0];
    assert.equal(call?.kind, 'pick');
    assert.deepEqual(call?.items, [
      '$(selection) Selection',
      '$(warning) Problems in the workspace',
      "$(terminal) Terminal's last output",
      'Files',
      '$(file) calc.py',
      '$(file) README.md',
    ]);
  });

  it('tells the person when the pick has nothing to attach, and attaches nothing', async () => {
    stub.answers.push('$(warning) Problems in the workspace');
    assert.equal(await pickMention(new TerminalOutputLog()), undefined);
    assert.deepEqual(
      stub.calls.map((c) => [c.kind, c.message]),
      [
        ['pick', 'Attach a file, the selection, Problems or the terminal output'],
        ['info', 'Rein: The workspace has no problems.'],
      ],
    );
  });
});

describe('@ mentions: the prompt', () => {
  function setup(): { connection: FakeConnection; controller: ChatController } {
    const connection = new FakeConnection();
    connection.responders.set('rein/sessions', () => ({ sessions: [] }));
    connection.responders.set('rein/checkpoints', () => ({ runs: [] }));
    connection.responders.set('rein/review', () => ({ runs: [] }));
    return { connection, controller: new ChatController(connection, undefined) };
  }

  it('sends the attachments with a new prompt', async () => {
    const { connection, controller } = setup();
    connection.responders.set('rein/prompt', () => ({ sessionId: 's1', runId: 'r1', status: 'completed', text: '', turns: 1, repairAttempts: 0, generations: 0, usage: {} }));
    await controller.send('explain this', 'auto', undefined, 'agent', [{ kind: 'file', uri: CALC }]);
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/prompt')?.params, {
      text: 'explain this',
      mode: 'agent',
      attachments: [{ kind: 'file', uri: CALC }],
    });
  });

  it('says so when a steering message cannot carry them', async () => {
    const { connection, controller } = setup();
    connection.responders.set('rein/steer', () => ({ queued: true }));
    connection.emit(envelope(1, { type: 'agent_start' }));
    connection.emit(envelope(2, { type: 'run_start', run_id: 'r1', prompt: 'go' }));
    await controller.send('look here', 'auto', undefined, 'agent', [{ kind: 'file', uri: CALC }]);
    assert.deepEqual(connection.requests.find((r) => r.method === 'rein/steer')?.params, { sessionId: 's1', text: 'look here' });
    const notices = controller.state.view().items.filter((item) => item.kind === 'notice');
    assert.ok(notices.some((n) => n.kind === 'notice' && /Attachments go with a new prompt/.test(n.text)));
  });
});

describe('@ mentions: the prompt as the panel shows it', () => {
  const PROMPT =
    'explain this\n\n<attachment kind="file" path="src/calc.py">\ndef add(a, b):\n\n    return a - b\n</attachment>' +
    '\n\n<attachment kind="selection" path="app.py" lines="4-6">\ngreet()\n</attachment>' +
    '\n\n<attachment kind="terminal">\n$ make\nsaid <\\/attachment> once\n</attachment>';

  it('splits the text from the attachments the server appended', () => {
    const { text, blocks } = splitAttachments(PROMPT);
    assert.equal(text, 'explain this');
    assert.deepEqual(blocks, [
      { kind: 'file', path: 'src/calc.py', lines: undefined, body: 'def add(a, b):\n\n    return a - b' },
      { kind: 'selection', path: 'app.py', lines: '4-6', body: 'greet()' },
      { kind: 'terminal', path: undefined, lines: undefined, body: '$ make\nsaid </attachment> once' },
    ]);
    assert.deepEqual(blocks.map(blockLabel), ['src/calc.py', 'app.py:4-6', 'Terminal']);
  });

  it('leaves a message that only looks like one as it is', () => {
    for (const content of ['no blocks here', 'text\n\n<attachment kind="file" path="a.py">\nunclosed', 'text\n\n<attachment kind="file">\nx\n</attachment>\nmore text']) {
      assert.deepEqual(splitAttachments(content), { text: content, blocks: [] });
    }
  });
});
