/**
 * The panel's *Your setup* section, asked when it opens: `rein/setup` (what
 * `rein doctor` lists) and what the editor's diagnostics were seen to cover
 * (the analyzer gate's source in this window).
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../connection';
import { editorCoverage, setupView, type EditorCoverage, type SetupView } from '../shared/setupView';
import { Methods, type SetupResult } from '../shared/protocol';

/** Whether `uri` is a file of the workspace (not an untitled buffer, not a file outside it). */
function inWorkspace(uri: vscode.Uri): boolean {
  return uri.scheme === 'file' && vscode.workspace.asRelativePath(uri, false) !== uri.fsPath;
}

/** What the editor's diagnostics were seen to cover (the analyzer gate's source in this window). */
export function seenCoverage(): EditorCoverage {
  const diagnostics = vscode.languages
    .getDiagnostics()
    .filter(([uri]) => inWorkspace(uri))
    .map(([uri, list]) => ({ path: uri.path, sources: list.map((d) => d.source ?? '').filter((s) => s) }));
  const open = vscode.workspace.textDocuments.filter((d) => inWorkspace(d.uri)).map((d) => d.uri.path);
  return editorCoverage(diagnostics, open);
}

/** The setup view from `rein/setup`, with what the editor's diagnostics cover; the reason when the server cannot say. */
export async function loadSetup(connection: ReinConnection): Promise<SetupView> {
  const coverage = seenCoverage();
  try {
    const result = await connection.sendRequest<Partial<SetupResult> | null>(Methods.setup, {});
    return { ...setupView(result?.items ?? [], result?.mcpLoaded === true), coverage };
  } catch (error) {
    return { ...setupView([], false), error: error instanceof Error ? error.message : String(error), coverage };
  }
}
