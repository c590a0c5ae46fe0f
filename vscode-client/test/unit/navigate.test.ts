import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { ResponseError } from 'vscode-jsonrpc';
import { navigationFeature, registerNavigate } from '../../src/bridge/navigate';
import { FakeConnection } from '../fakes';
import { Location, Position, Range, stub, stubDocument, Uri, workspace } from '../stub/vscode';

const APP = 'file:///work/project/src/app.ts';
const UTIL = 'file:///work/project/src/util.ts';

function lspRange(l1: number, c1: number, l2: number, c2: number): unknown {
  return { start: { line: l1, character: c1 }, end: { line: l2, character: c2 } };
}

/** The bridge as the server meets it: rein/navigate registered on a connection. */
function editor(): FakeConnection {
  const connection = new FakeConnection();
  registerNavigate({ subscriptions: [] } as never, connection);
  return connection;
}

async function navigate(params: unknown): Promise<unknown> {
  return editor().call('rein/navigate', params);
}

afterEach(() => stub.reset());

describe('rein/navigate', () => {
  it('asks the definition provider at the position and answers Locations and LocationLinks', async () => {
    stub.commandAnswers.set('vscode.executeDefinitionProvider', () => [
      new Location(Uri.parse(UTIL), new Range(0, 16, 0, 21)),
      { targetUri: Uri.parse(UTIL), targetRange: new Range(0, 0, 2, 1), targetSelectionRange: new Range(0, 16, 0, 21) },
    ]);
    const answer = await navigate({ kind: 'definition', uri: APP, position: { line: 4, character: 17 } });
    assert.deepEqual(answer, [
      { uri: UTIL, range: lspRange(0, 16, 0, 21) },
      { targetUri: UTIL, targetRange: lspRange(0, 0, 2, 1), targetSelectionRange: lspRange(0, 16, 0, 21) },
    ]);
    const [call] = stub.commands;
    assert.equal(call?.command, 'vscode.executeDefinitionProvider');
    const [uri, position] = call?.args as [Uri, Position];
    assert.equal(uri.toString(), APP);
    assert.deepEqual(position, new Position(4, 17));
  });

  it('answers references, leaving out the declaration when asked to', async () => {
    const declaration = new Location(Uri.parse(UTIL), new Range(0, 16, 0, 21));
    const use = new Location(Uri.parse(APP), new Range(4, 15, 4, 20));
    stub.commandAnswers.set('vscode.executeReferenceProvider', () => [declaration, use]);
    stub.commandAnswers.set('vscode.executeDefinitionProvider', () => [declaration]);
    const position = { line: 4, character: 17 };
    assert.deepEqual(await navigate({ kind: 'references', uri: APP, position, includeDeclaration: true }), [
      { uri: UTIL, range: lspRange(0, 16, 0, 21) },
      { uri: APP, range: lspRange(4, 15, 4, 20) },
    ]);
    assert.deepEqual(await navigate({ kind: 'references', uri: APP, position, includeDeclaration: false }), [
      { uri: APP, range: lspRange(4, 15, 4, 20) },
    ]);
  });

  it('joins every hover into one text, or answers null when there is none', async () => {
    stub.commandAnswers.set('vscode.executeHoverProvider', () => [
      { contents: [{ value: '```typescript\nfunction add(a: number, b: number): number\n```' }, { value: 'Adds.' }] },
      { contents: ['plain', { language: 'ts', value: 'const x: 1' }, { value: '  ' }] },
    ]);
    assert.deepEqual(await navigate({ kind: 'hover', uri: APP, position: { line: 0, character: 0 } }), {
      contents: '```typescript\nfunction add(a: number, b: number): number\n```\n\nAdds.\n\nplain\n\n```ts\nconst x: 1\n```',
    });
    stub.commandAnswers.set('vscode.executeHoverProvider', () => []);
    assert.equal(await navigate({ kind: 'hover', uri: APP, position: { line: 0, character: 0 } }), null);
  });

  it("answers symbols with LSP's 1-based kinds: an outline with children, workspace symbols with locations", async () => {
    stub.commandAnswers.set('vscode.executeDocumentSymbolProvider', () => [
      {
        name: 'Shape',
        detail: '',
        kind: 4, // vscode.SymbolKind.Class
        range: new Range(0, 0, 5, 1),
        selectionRange: new Range(0, 6, 0, 11),
        children: [{ name: 'area', detail: '(): number', kind: 5, range: new Range(1, 2, 3, 3), selectionRange: new Range(1, 2, 1, 6), children: [] }],
      },
    ]);
    stub.commandAnswers.set('vscode.executeWorkspaceSymbolProvider', (query) =>
      query === 'add' ? [{ name: 'add', kind: 11, containerName: '', location: new Location(Uri.parse(UTIL), new Range(0, 16, 0, 19)) }] : [],
    );
    assert.deepEqual(await navigate({ kind: 'documentSymbols', uri: APP }), [
      {
        name: 'Shape',
        kind: 5,
        range: lspRange(0, 0, 5, 1),
        selectionRange: lspRange(0, 6, 0, 11),
        children: [{ name: 'area', detail: '(): number', kind: 6, range: lspRange(1, 2, 3, 3), selectionRange: lspRange(1, 2, 1, 6), children: [] }],
      },
    ]);
    assert.deepEqual(await navigate({ kind: 'workspaceSymbols', query: 'add' }), [
      { name: 'add', kind: 12, location: { uri: UTIL, range: lspRange(0, 16, 0, 19) } },
    ]);
  });

  it('answers a rename as text edits per document with the open ones\' versions, applying nothing', async () => {
    const edits: [Uri, { range: Range; newText: string }[]][] = [
      [Uri.parse(UTIL), [{ range: new Range(0, 16, 0, 19), newText: 'sum' }]],
      [Uri.parse(APP), [{ range: new Range(0, 9, 0, 12), newText: 'sum' }, { range: new Range(4, 15, 4, 18), newText: 'sum' }]],
    ];
    // app.ts is open at version 7 (its edits were computed on that buffer); util.ts is only on disk.
    workspace.textDocuments = [{ ...stubDocument(APP, true), version: 7 }, stubDocument('file:///work/project/README.md', false)];
    stub.commandAnswers.set('vscode.executeDocumentRenameProvider', (_uri, _position, newName) =>
      newName === 'sum' ? { size: 2, entries: () => edits } : undefined,
    );
    assert.deepEqual(await navigate({ kind: 'rename', uri: APP, position: { line: 0, character: 10 }, newName: 'sum' }), {
      documentChanges: [
        { textDocument: { uri: UTIL, version: null }, edits: [{ range: lspRange(0, 16, 0, 19), newText: 'sum' }] },
        {
          textDocument: { uri: APP, version: 7 },
          edits: [
            { range: lspRange(0, 9, 0, 12), newText: 'sum' },
            { range: lspRange(4, 15, 4, 18), newText: 'sum' },
          ],
        },
      ],
    });
    assert.deepEqual(
      stub.commands.map((c) => c.command),
      ['vscode.executeDocumentRenameProvider'],
    );
  });

  it("answers errors the server reads: a provider's refusal, bad params", async () => {
    stub.commandAnswers.set('vscode.executeDocumentRenameProvider', () => {
      throw new Error('You cannot rename this element.');
    });
    const rename = { kind: 'rename', uri: APP, position: { line: 0, character: 0 }, newName: 'x' };
    await assert.rejects(navigate(rename), (error: ResponseError<unknown>) => error.code === -32803 && error.message === 'You cannot rename this element.');
    await assert.rejects(navigate({ kind: 'definition', uri: APP }), (error: ResponseError<unknown>) => error.code === -32602 && /needs uri and position/.test(error.message));
    await assert.rejects(navigate({ kind: 'callers' }), /unknown kind "callers"/);
  });

  it('declares the navigation capability in initialize, keeping other experimental ones', () => {
    const capabilities: { experimental?: unknown } = { experimental: { other: 1, rein: { more: true } } };
    navigationFeature.fillClientCapabilities(capabilities);
    assert.deepEqual(capabilities.experimental, { other: 1, rein: { more: true, navigation: true } });
    const empty: { experimental?: unknown } = {};
    navigationFeature.fillClientCapabilities(empty);
    assert.deepEqual(empty.experimental, { rein: { navigation: true } });
  });
});
