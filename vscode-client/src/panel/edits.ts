/**
 * The diff behind each edit row's "diff" link. When an edit's
 * `tool_call_end` arrives the change is already in the editor buffer, so the
 * buffer is the "after" text; the "before" text is recovered by reversing the
 * edit's unified diff. Both are kept as read-only virtual documents and shown
 * with `vscode.diff`. When that is not possible (the diff was cut, another
 * change came first) the diff itself is shown.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ToolDetails } from '../shared/protocol';
import { reverseApplyUnifiedDiff } from './patch';

export const SNAPSHOT_SCHEME = 'rein-snapshot';
const MAX_SNAPSHOTS = 200;

interface Snapshot {
  path: string;
  generation?: number | undefined;
  before?: string | undefined;
  after?: string | undefined;
  diff?: string | undefined;
  created?: boolean | undefined;
}

export interface EditCapture {
  capture(toolCallId: string, details: ToolDetails): Promise<void>;
}

export function workspaceFileUri(relative: string): vscode.Uri | undefined {
  if (path.isAbsolute(relative)) {
    return vscode.Uri.file(relative);
  }
  const root = vscode.workspace.workspaceFolders?.[0]?.uri;
  return root ? vscode.Uri.joinPath(root, ...relative.split(/[\\/]/)) : undefined;
}

export class EditSnapshots implements EditCapture, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly snapshots = new Map<string, Snapshot>();
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(SNAPSHOT_SCHEME, this);
  }

  dispose(): void {
    this.registration.dispose();
    this.snapshots.clear();
  }

  async capture(toolCallId: string, details: ToolDetails): Promise<void> {
    if (typeof details.path !== 'string') {
      return;
    }
    const snapshot: Snapshot = {
      path: details.path,
      generation: details.generation,
      diff: typeof details.diff === 'string' && details.diff ? details.diff : undefined,
      created: details.created,
    };
    this.snapshots.set(toolCallId, snapshot);
    if (this.snapshots.size > MAX_SNAPSHOTS) {
      const oldest = this.snapshots.keys().next().value;
      if (oldest !== undefined) {
        this.snapshots.delete(oldest);
      }
    }
    const uri = workspaceFileUri(details.path);
    if (!uri) {
      return;
    }
    try {
      const document = await vscode.workspace.openTextDocument(uri);
      snapshot.after = document.getText();
    } catch {
      return; // deleted or unreadable: the link falls back to the diff text
    }
    if (snapshot.diff) {
      snapshot.before = reverseApplyUnifiedDiff(snapshot.after, snapshot.diff) ?? undefined;
    } else if (snapshot.created) {
      snapshot.before = '';
    }
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const params = new URLSearchParams(uri.query);
    const snapshot = this.snapshots.get(params.get('id') ?? '');
    if (!snapshot) {
      return vscode.l10n.t('(This change is no longer available: it is from an earlier window.)');
    }
    switch (params.get('side')) {
      case 'before':
        return snapshot.before ?? '';
      case 'after':
        return snapshot.after ?? '';
      default:
        return snapshot.diff ?? '';
    }
  }

  /** Opens the diff of one edit (the tool call's id). */
  async open(toolCallId: string): Promise<void> {
    const snapshot = this.snapshots.get(toolCallId);
    if (!snapshot) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Rein: the diff of this change is not available in this window.'));
      return;
    }
    const name = path.basename(snapshot.path);

    const make = (side: string, ext = ''): vscode.Uri =>
      vscode.Uri.from({
        scheme: SNAPSHOT_SCHEME,
        path: `/${snapshot.path}${ext}`,
        query: new URLSearchParams({ id: toolCallId, side }).toString(),
      });
    if (snapshot.before !== undefined && snapshot.after !== undefined) {
      await vscode.commands.executeCommand(
        'vscode.diff',
        make('before'),
        make('after'),
        snapshot.generation === undefined ? vscode.l10n.t('{0} (Rein edit)', name) : vscode.l10n.t('{0} (Rein edit, generation {1})', name, snapshot.generation),
        { preview: true },
      );
      return;
    }
    if (snapshot.diff) {
      const document = await vscode.workspace.openTextDocument(make('patch', '.diff'));
      await vscode.languages.setTextDocumentLanguage(document, 'diff');
      await vscode.window.showTextDocument(document, { preview: true });
      return;
    }
    const file = workspaceFileUri(snapshot.path);
    if (file) {
      await vscode.window.showTextDocument(file, { preview: true });
    }
  }
}
