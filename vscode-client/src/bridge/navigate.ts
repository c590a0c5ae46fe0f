/**
 * `rein/navigate`: the agent's semantic tools (find_definition,
 * find_references, hover, symbols, rename_symbol) ask the editor, which
 * answers with its own language support on its live buffers
 * (`vscode.execute*Provider`), so whatever languages the person's editor
 * understands, the agent understands. The answers go back in LSP's shapes
 * (docs/protocol.md, "request rein/navigate"); nothing is applied here: the
 * server applies a rename's edits itself, each file written as its own
 * mutation generation in the one run, after one approval.
 */

import * as vscode from 'vscode';
import { ResponseError } from 'vscode-jsonrpc';
import type { ReinConnection } from '../connection';
import { Methods } from '../shared/protocol';

export type NavigateKind = 'definition' | 'references' | 'hover' | 'documentSymbols' | 'workspaceSymbols' | 'rename';

export interface NavigateParams {
  kind: NavigateKind;
  uri?: string;
  position?: { line: number; character: number };
  query?: string;
  newName?: string;
  includeDeclaration?: boolean;
}

/** LSP's RequestFailed: the editor could not answer (the message says why). */
const REQUEST_FAILED = -32803;
const INVALID_PARAMS = -32602;

interface LspPosition {
  line: number;
  character: number;
}
interface LspRange {
  start: LspPosition;
  end: LspPosition;
}
interface LspLocation {
  uri: string;
  range: LspRange;
}

type Execute = (command: string, ...args: unknown[]) => Thenable<unknown>;

/** The capability the client declares in `initialize`: it answers rein/navigate. */
export const navigationCapability = { rein: { navigation: true } } as const;

/** Declares the capability (`capabilities.experimental.rein.navigation`); a static feature of the language client. */
export const navigationFeature = {
  fillClientCapabilities(capabilities: { experimental?: unknown }): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    const rein = (experimental.rein ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, rein: { ...rein, ...navigationCapability.rein } };
  },
  initialize(): void {
    // Nothing to start: the request handler is registered with the bridge.
  },
  getState(): { kind: 'static' } {
    return { kind: 'static' };
  },
  clear(): void {
    // Nothing to clear.
  },
};

function range(r: vscode.Range): LspRange {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

function location(l: vscode.Location): LspLocation {
  return { uri: l.uri.toString(), range: range(l.range) };
}

function isLink(item: vscode.Location | vscode.LocationLink): item is vscode.LocationLink {
  return 'targetUri' in item;
}

function definitions(found: unknown): unknown[] {
  return list<vscode.Location | vscode.LocationLink>(found).map((item) =>
    isLink(item)
      ? {
          targetUri: item.targetUri.toString(),
          targetRange: range(item.targetRange),
          targetSelectionRange: range(item.targetSelectionRange ?? item.targetRange),
          ...(item.originSelectionRange ? { originSelectionRange: range(item.originSelectionRange) } : {}),
        }
      : location(item),
  );
}

function list<T>(found: unknown): T[] {
  if (found === undefined || found === null) {
    return [];
  }
  return (Array.isArray(found) ? found : [found]) as T[];
}

/** A hover's contents as the providers give them: MarkdownStrings, and the older MarkedStrings. */
type HoverContent = string | { value: string; language?: string };

/** A hover's text: every provider's contents, MarkdownStrings and MarkedStrings joined by blank lines. */
export function hoverText(hovers: unknown): string {
  const parts: string[] = [];
  for (const hover of list<{ contents: HoverContent[] }>(hovers)) {
    for (const content of hover.contents) {
      if (typeof content === 'string') {
        parts.push(content);
      } else if (content.language) {
        parts.push('```' + content.language + '\n' + content.value + '\n```');
      } else {
        parts.push(content.value);
      }
    }
  }
  return parts
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .join('\n\n');
}

/** vscode.SymbolKind counts from 0 (File), LSP's SymbolKind from 1. */
function symbolKind(kind: vscode.SymbolKind): number {
  return kind + 1;
}

/** An outline's symbol (children may be missing from a provider written in JavaScript). */
type OutlineSymbol = Omit<vscode.DocumentSymbol, 'children'> & { children?: OutlineSymbol[] };

function documentSymbol(symbol: OutlineSymbol): unknown {
  return {
    name: symbol.name,
    ...(symbol.detail ? { detail: symbol.detail } : {}),
    kind: symbolKind(symbol.kind),
    range: range(symbol.range),
    selectionRange: range(symbol.selectionRange),
    children: (symbol.children ?? []).map(documentSymbol),
  };
}

function symbolInformation(symbol: vscode.SymbolInformation): unknown {
  return {
    name: symbol.name,
    kind: symbolKind(symbol.kind),
    location: location(symbol.location),
    ...(symbol.containerName ? { containerName: symbol.containerName } : {}),
  };
}

function symbols(found: unknown): unknown[] {
  return list<OutlineSymbol | vscode.SymbolInformation>(found).map((symbol) =>
    'selectionRange' in symbol ? documentSymbol(symbol) : symbolInformation(symbol),
  );
}

/** An open document's version (what the edits were computed on), else null (a file on disk). */
function openVersion(uri: vscode.Uri): number | null {
  const key = uri.toString();
  const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
  return typeof document?.version === 'number' ? document.version : null;
}

/**
 * A rename's WorkspaceEdit as LSP `documentChanges`, each open document with
 * its version, so the server refuses edits computed on text that has changed
 * since. VS Code's WorkspaceEdit shows an extension only its text edits
 * (`entries()`; `size` counts the same): file operations or snippet edits a
 * provider adds are not visible here, and only the text edits are answered.
 */
export function workspaceEdit(edit: vscode.WorkspaceEdit | undefined | null): unknown {
  if (!edit) {
    return null;
  }
  return {
    documentChanges: edit.entries().map(([uri, edits]) => ({
      textDocument: { uri: uri.toString(), version: openVersion(uri) },
      edits: edits.map((e) => ({ range: range(e.range), newText: e.newText })),
    })),
  };
}

function same(a: LspLocation, b: LspLocation): boolean {
  return a.uri === b.uri && JSON.stringify(a.range) === JSON.stringify(b.range);
}

/** The LSP location of a definition answer's item (a link's target selection). */
function definitionPlace(item: vscode.Location | vscode.LocationLink): LspLocation {
  return isLink(item) ? { uri: item.targetUri.toString(), range: range(item.targetSelectionRange ?? item.targetRange) } : location(item);
}

export async function navigate(params: Partial<NavigateParams> | null, execute: Execute = vscode.commands.executeCommand): Promise<unknown> {
  const kind = params?.kind;
  const where = (): [vscode.Uri, vscode.Position] => {
    if (typeof params?.uri !== 'string' || typeof params.position?.line !== 'number' || typeof params.position.character !== 'number') {
      throw new ResponseError(INVALID_PARAMS, `rein/navigate ${String(kind)} needs uri and position`);
    }
    return [vscode.Uri.parse(params.uri), new vscode.Position(params.position.line, params.position.character)];
  };
  try {
    switch (kind) {
      case 'definition':
        return definitions(await execute('vscode.executeDefinitionProvider', ...where()));
      case 'references': {
        const [uri, position] = where();
        const found = list<vscode.Location>(await execute('vscode.executeReferenceProvider', uri, position)).map(location);
        if (params?.includeDeclaration !== false) {
          return found;
        }
        // The command always includes the declaration: leave out what the definition provider names.
        const declared = list<vscode.Location | vscode.LocationLink>(await execute('vscode.executeDefinitionProvider', uri, position)).map(definitionPlace);
        return found.filter((ref) => !declared.some((d) => same(d, ref)));
      }
      case 'hover': {
        const text = hoverText(await execute('vscode.executeHoverProvider', ...where()));
        return text ? { contents: text } : null;
      }
      case 'documentSymbols': {
        if (typeof params?.uri !== 'string') {
          throw new ResponseError(INVALID_PARAMS, 'rein/navigate documentSymbols needs uri');
        }
        return symbols(await execute('vscode.executeDocumentSymbolProvider', vscode.Uri.parse(params.uri)));
      }
      case 'workspaceSymbols':
        return symbols(await execute('vscode.executeWorkspaceSymbolProvider', params?.query ?? ''));
      case 'rename': {
        if (typeof params?.newName !== 'string' || !params.newName) {
          throw new ResponseError(INVALID_PARAMS, 'rein/navigate rename needs newName');
        }
        const [uri, position] = where();
        return workspaceEdit((await execute('vscode.executeDocumentRenameProvider', uri, position, params.newName)) as vscode.WorkspaceEdit | undefined);
      }
      default:
        throw new ResponseError(INVALID_PARAMS, `rein/navigate: unknown kind ${JSON.stringify(kind)}`);
    }
  } catch (error) {
    if (error instanceof ResponseError) {
      throw error;
    }
    // A provider's refusal ("You cannot rename this element") is the reason the model reads.
    throw new ResponseError(REQUEST_FAILED, error instanceof Error ? error.message : String(error));
  }
}

export function registerNavigate(context: vscode.ExtensionContext, connection: ReinConnection): void {
  context.subscriptions.push(connection.onRequest(Methods.navigate, (params: Partial<NavigateParams> | null) => navigate(params)));
}
