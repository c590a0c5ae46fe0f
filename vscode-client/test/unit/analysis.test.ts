/**
 * Which text the editor's diagnostics are of (src/bridge/analysis.ts): VS Code
 * delivers a diagnostics change 50 ms or more after it was made, so a change
 * made for the text before Rein's edit can arrive after the edit. The bridge
 * must not tell the server it is the edited text's, nor answer for a document
 * whose current text has not been analysed yet without saying `pending`.
 */

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { AnalysisTracker } from '../../src/bridge/analysis';
import { registerDiagnosticsBridge } from '../../src/bridge/diagnostics';
import type { DiagnosticsResult } from '../../src/shared/protocol';
import { FakeConnection } from '../fakes';
import { Diagnostic, DiagnosticSeverity, Range, stub, stubDocument, Uri, workspace, type StubDocument } from '../stub/vscode';

const SHAPES = 'file:///work/project/shapes.py';
const NOTES = 'file:///work/project/notes.md';

function unusedImport(): Diagnostic {
  return new Diagnostic(new Range(2, 7, 2, 11), '`math` imported but unused', DiagnosticSeverity.Error);
}

describe('the bridge says which text diagnostics are of', () => {
  let connection: FakeConnection;
  let context: { subscriptions: { dispose(): unknown }[] };
  let shapes: StubDocument & { version: number };

  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout'] });
    connection = new FakeConnection();
    context = { subscriptions: [] };
    registerDiagnosticsBridge(context as never, connection);
    shapes = { ...stubDocument(SHAPES, false), version: 1 };
    workspace.textDocuments = [shapes];
    stub.fireTextDocumentOpened(shapes);
  });
  afterEach(() => {
    for (const disposable of context.subscriptions) {
      disposable.dispose();
    }
    mock.timers.reset();
    stub.reset();
  });

  /** The language server sets the document's diagnostics (new objects, as each publish). */
  function publish(...diagnostics: Diagnostic[]): void {
    stub.diagnostics.set(SHAPES, diagnostics);
  }

  /** The extension host delivers the diagnostics changes made since its last delivery. */
  function deliver(...uris: string[]): void {
    stub.fireDiagnosticsChanged(uris.map((uri) => Uri.parse(uri)));
  }

  function edit(document: StubDocument & { version: number }): void {
    document.version += 1;
    stub.fireTextDocumentChanged(document);
  }

  async function pending(uris: string[] | null): Promise<boolean> {
    const answer = (await connection.call('rein/diagnostics', { uris })) as DiagnosticsResult;
    return answer.pending === true;
  }

  /** The versions the last rein/diagnosticsChanged carried. */
  function sentVersions(): unknown {
    mock.timers.tick(50);
    const last = connection.notifications.at(-1) as { params: { versions: unknown } } | undefined;
    return last?.params.versions;
  }

  it("labels the old text's diagnostics, delivered after Rein's next edit, with the old version, and is pending until the new text's come", async () => {
    assert.equal(await pending([SHAPES]), true, 'an open document not analysed yet is pending');
    assert.equal(await pending(null), true, 'and so is the whole-workspace answer');
    publish();
    deliver(SHAPES);
    assert.deepEqual(sentVersions(), { [SHAPES]: 1 });
    assert.equal(await pending([SHAPES]), false);

    // Rein's first edit (version 2) adds an import the second uses; the language
    // server publishes the unused import for version 2, and the second edit
    // (version 3) arrives before the extension host delivers that change.
    edit(shapes);
    assert.equal(await pending([SHAPES]), true, 'the edited text is not analysed yet');
    publish(unusedImport());
    edit(shapes);
    deliver(SHAPES);
    assert.deepEqual(sentVersions(), { [SHAPES]: 2 }, 'the diagnostics of version 2, not of the document now');
    assert.equal(await pending([SHAPES]), true, 'version 3 is still owed its diagnostics');

    publish();
    deliver(SHAPES);
    assert.deepEqual(sentVersions(), { [SHAPES]: 3 });
    assert.equal(await pending([SHAPES]), false);
    assert.equal(await pending(null), false);
  });

  it('tells the old text\'s diagnostics apart also for a document no language server had published for since it was told of', async () => {
    // Open before the bridge (or already analysed and closed in no editor): the
    // first diagnostics it sees of the document are those of Rein's first edit.
    const calc = { ...stubDocument('file:///work/project/calc.py', false), version: 7 };
    workspace.textDocuments = [shapes, calc];
    edit(calc); // version 8
    stub.diagnostics.set(calc.uri.toString(), [unusedImport()]);
    edit(calc); // version 9, before the delivery
    deliver(calc.uri.toString());
    assert.deepEqual(sentVersions(), { [calc.uri.toString()]: 8 });
    assert.equal(await pending([calc.uri.toString()]), true, 'published for since: its version 9 is owed');
  });

  it('takes a change made after the edit as fresh: new diagnostics, or any delivered after a later delivery', async () => {
    publish(unusedImport());
    deliver(SHAPES);
    edit(shapes); // version 2
    publish(unusedImport()); // the same words, made again for the new text: other objects
    deliver(SHAPES);
    assert.deepEqual(sentVersions(), { [SHAPES]: 2 });

    edit(shapes); // version 3, then a delivery of another file's change: the edit is older than what follows
    deliver('file:///work/project/calc.py');
    const same = stub.diagnostics.get(SHAPES) ?? [];
    stub.diagnostics.set(SHAPES, [...same]); // set again with the very objects it had
    deliver(SHAPES);
    assert.deepEqual(sentVersions(), { [SHAPES]: 3 });
    assert.equal(await pending([SHAPES]), false);
  });

  it('owes nothing for a change of a document no language server analyses, nor for a change of its dirty state', async () => {
    const notes = { ...stubDocument(NOTES, false), version: 1 };
    workspace.textDocuments = [shapes, notes];
    publish();
    deliver(SHAPES);
    edit(notes);
    assert.equal(await pending([NOTES]), false);
    stub.fireTextDocumentChanged(shapes, 0); // saved: no new text
    assert.equal(await pending([SHAPES]), false);
    stub.fireTextDocumentClosed(shapes);
    edit(shapes);
    assert.equal(await pending([SHAPES]), false, 'closed: not analysed any more');
  });
});

describe('AnalysisTracker', () => {
  it('stops owing after waitMs: a file nobody analyses never gets diagnostics', () => {
    let now = 1000;
    const tracker = new AnalysisTracker(() => [], () => now, 3000);
    tracker.opened(SHAPES, 1);
    assert.equal(tracker.owed(SHAPES), true);
    assert.equal(tracker.anyOwed(), true);
    now += 3000;
    assert.equal(tracker.owed(SHAPES), false);
    assert.equal(tracker.anyOwed(), false);
  });

  it('takes an empty list before and after as fresh (it cannot be told from a late one)', () => {
    const tracker = new AnalysisTracker(() => [], () => 0, 3000);
    tracker.opened(SHAPES, 1);
    tracker.delivered([SHAPES], () => 1);
    tracker.changed(SHAPES, 1);
    assert.deepEqual([...tracker.delivered([SHAPES], () => 2)], [[SHAPES, 2]]);
    assert.equal(tracker.owed(SHAPES), false);
  });
});
