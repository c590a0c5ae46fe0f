/**
 * VS Code's diff editor for checkpoints: the `rein-checkpoint:` documents
 * hold a file as a checkpoint stored it (`rein/checkpointContent`) or as a
 * restore conflict reported it, read-only; the other side is the file as it
 * is now (the real file, so the person can go on editing it).
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../connection';
import { Methods, type CheckpointContentParams, type CheckpointContentResult, type RestoreConflict } from '../shared/protocol';
import { workspaceFileUri } from './edits';
import { plain } from './text';

export const CHECKPOINT_SCHEME = 'rein-checkpoint';
const MAX_TEXTS = 100;

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The `rein-checkpoint:` URI of one side of a path in a run (the query says which). */
export function checkpointUri(params: CheckpointContentParams): vscode.Uri {
  const query = new URLSearchParams({ session: params.sessionId, run: params.runId, side: params.side });
  if (params.turn !== undefined) {
    query.set('turn', String(params.turn));
  }
  return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: `/${params.path}`, query: query.toString() });
}

/** The params a `rein-checkpoint:` URI stands for, or undefined (a conflict's or an empty side). */
export function contentParams(uri: vscode.Uri): CheckpointContentParams | undefined {
  const query = new URLSearchParams(uri.query);
  const sessionId = query.get('session');
  const runId = query.get('run');
  const side = query.get('side');
  if (!sessionId || !runId || (side !== 'before' && side !== 'after')) {
    return undefined;
  }
  const turn = query.get('turn');
  const params: CheckpointContentParams = { sessionId, runId, path: uri.path.replace(/^\//, ''), side };
  if (turn !== null && /^\d+$/.test(turn)) {
    params.turn = Number(turn);
  }
  return params;
}

/** What a stored version shows as text, or why it cannot be shown. */
export function contentText(result: CheckpointContentResult): { text: string } | { reason: string } {
  if (result.state === 'text') {
    return { text: result.text ?? '' };
  }
  if (result.state === 'absent') {
    return { text: '' };
  }
  return { reason: result.reason ?? vscode.l10n.t('Rein did not store this version') };
}

export class CheckpointDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly registration: vscode.Disposable;
  private nextConflict = 0;

  constructor(private readonly connection: ReinConnection) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, this);
  }

  dispose(): void {
    this.registration.dispose();
    this.texts.clear();
  }

  private remember(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    if (this.texts.size > MAX_TEXTS) {
      const oldest = this.texts.keys().next().value;
      if (oldest !== undefined) {
        this.texts.delete(oldest);
      }
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const known = this.texts.get(uri.toString());
    if (known !== undefined) {
      return known;
    }
    const params = contentParams(uri);
    if (!params) {
      return new URLSearchParams(uri.query).has('empty') ? '' : vscode.l10n.t('(this comparison is no longer available: open it again from the Rein panel)');
    }
    const shown = contentText(await this.fetch(params));
    return 'text' in shown ? shown.text : vscode.l10n.t('(Rein cannot show this version: {0})', shown.reason);
  }

  private fetch(params: CheckpointContentParams): Promise<CheckpointContentResult> {
    return this.connection.sendRequest<CheckpointContentResult>(Methods.checkpointContent, params);
  }

  /** The file as it is now, or an empty read-only side when it does not exist. */
  private async current(path: string): Promise<vscode.Uri> {
    const file = workspaceFileUri(path);
    if (file) {
      try {
        await vscode.workspace.fs.stat(file);
        return file;
      } catch {
        // deleted since: compare with nothing
      }
    }
    return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: `/${path}`, query: 'empty=1' });
  }

  /** The diff editor: `path` before the run (or its turn) against the file now. */
  async openRunDiff(sessionId: string, runId: string, path: string, title: string, turn?: number): Promise<void> {
    const params: CheckpointContentParams = { sessionId, runId, path, side: 'before' };
    if (turn !== undefined) {
      params.turn = turn;
    }
    let shown: { text: string } | { reason: string };
    try {
      shown = contentText(await this.fetch(params));
    } catch (error) {
      void vscode.window.showErrorMessage(plain(vscode.l10n.t('Rein: cannot open the diff of {0}: {1}', path, message(error))));
      return;
    }
    if ('reason' in shown) {
      void vscode.window.showWarningMessage(plain(vscode.l10n.t('Rein: no diff of {0}: {1}', path, shown.reason)));
      return;
    }
    const left = checkpointUri(params);
    this.remember(left, shown.text);
    const label = turn === undefined ? vscode.l10n.t('{0} (before {1} ↔ now)', path, title) : vscode.l10n.t('{0} (before turn {1} of {2} ↔ now)', path, turn, title);
    await vscode.commands.executeCommand('vscode.diff', left, await this.current(path), label);
  }

  /** A restore conflict: the file as Rein left it against the person's text, which stays as it is. */
  async openConflict(conflict: RestoreConflict): Promise<void> {
    const left = vscode.Uri.from({
      scheme: CHECKPOINT_SCHEME,
      path: `/${conflict.path}`,
      query: `conflict=${++this.nextConflict}`,
    });
    this.remember(left, conflict.checkpointText ?? '');
    const right = conflict.currentText === null ? await this.current(conflict.path) : workspaceFileUri(conflict.path);
    await vscode.commands.executeCommand('vscode.diff', left, right ?? left, vscode.l10n.t('{0} (as Rein left it ↔ yours)', conflict.path));
  }
}
