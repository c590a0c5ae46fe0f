/**
 * Review in the editor: on each pending hunk of an open file a CodeLens
 * "Keep | Undo" (`rein/reviewDecide` for that hunk) and a decoration on the
 * lines the agent changed. Both follow the review the panel loaded, so a
 * decided hunk loses them when the review is loaded again.
 */

import * as vscode from 'vscode';
import type { ReviewDecision, ReviewHunk } from '../shared/protocol';
import type { CheckpointService } from './checkpointService';

/** The command the lenses run: (runId, path, hunk index, decision). */
export const REVIEW_HUNK_COMMAND = 'rein.reviewHunk';

/**
 * The 0-based lines of a hunk in the current file: its added lines, or, for a
 * hunk that only removed lines, the line where they were (an empty range).
 */
export function hunkLines(hunk: Pick<ReviewHunk, 'newStart' | 'newLines'>, lineCount: number): { first: number; last: number; empty: boolean } {
  const last = Math.max(0, lineCount - 1);
  if (hunk.newLines <= 0) {
    // "@@ -a,b +c,0 @@": the removed lines were after line c (1-based).
    const at = Math.min(Math.max(0, hunk.newStart), last);
    return { first: at, last: at, empty: true };
  }
  const first = Math.min(Math.max(0, hunk.newStart - 1), last);
  return { first, last: Math.min(first + hunk.newLines - 1, last), empty: false };
}

/** Whether `lines` from `at` are `block`. */
function blockAt(lines: readonly string[], block: readonly string[], at: number): boolean {
  return at >= 0 && at + block.length <= lines.length && block.every((line, i) => lines[at + i] === line);
}

/**
 * Where a hunk is in the file now. Its `newStart` counts in the agent's
 * version; each hunk before it that was undone moved it by the lines it put
 * back, and the person may have added or removed lines above it since. So:
 * the agent's lines of the hunk at the shifted place, else the nearest place
 * that has them, else the shifted place.
 */
export function locateHunk(
  hunk: ReviewHunk,
  siblings: readonly ReviewHunk[],
  lines: readonly string[],
): { first: number; last: number; empty: boolean } {
  const shift = siblings
    .filter((other) => other.index < hunk.index && other.status === 'undone')
    .reduce((sum, other) => sum + other.oldLines - other.newLines, 0);
  const shifted = hunkLines({ newStart: hunk.newStart + shift, newLines: hunk.newLines }, lines.length);
  const added = hunk.lines.filter((line) => line.startsWith('+')).map((line) => line.slice(1));
  if (added.length === 0 || blockAt(lines, added, shifted.first)) {
    return shifted;
  }
  for (let distance = 1; distance < lines.length; distance++) {
    for (const at of [shifted.first - distance, shifted.first + distance]) {
      if (blockAt(lines, added, at)) {
        return { first: at, last: at + added.length - 1, empty: false };
      }
    }
  }
  return shifted;
}

function documentLines(document: vscode.TextDocument): string[] {
  return document.getText().split(/\r?\n/);
}

function relative(uri: vscode.Uri): string {
  return vscode.workspace.asRelativePath(uri, false);
}

export class ReviewLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changeEmitter.event;
  private readonly decoration: vscode.TextEditorDecorationType;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly service: CheckpointService) {
    this.decoration = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    });
    let version = service.model.version;
    this.subscriptions = [
      service.onDidChange(() => {
        if (service.model.version !== version) {
          version = service.model.version;
          this.changeEmitter.fire();
          this.decorateAll();
        }
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorateAll()),
      // Typing moves the hunks: draw their lines again (the lenses are asked for again by VS Code).
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (vscode.window.visibleTextEditors.some((editor) => editor.document === event.document)) {
          this.decorateAll();
        }
      }),
    ];
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.changeEmitter.dispose();
    this.decoration.dispose();
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const path = relative(document.uri);
    const lenses: vscode.CodeLens[] = [];
    const text = documentLines(document);
    for (const { runId, hunk, siblings } of this.service.model.pendingHunks(path)) {
      const lines = locateHunk(hunk, siblings, text);
      const range = new vscode.Range(lines.first, 0, lines.first, 0);
      const what = !lines.empty ? hunk.header : hunk.oldLines === 1 ? vscode.l10n.t('1 removed line') : vscode.l10n.t('{0} removed lines', hunk.oldLines);
      const lens = (decision: ReviewDecision, title: string, tooltip: string): vscode.CodeLens =>
        new vscode.CodeLens(range, { title, tooltip, command: REVIEW_HUNK_COMMAND, arguments: [runId, path, hunk.index, decision] });
      lenses.push(
        lens('keep', `$(check) ${vscode.l10n.t('Keep')}`, vscode.l10n.t("Keep this change of Rein's ({0})", what)),
        lens('undo', `$(discard) ${vscode.l10n.t('Undo')}`, vscode.l10n.t("Undo this change of Rein's ({0}); refused if you changed these lines since", what)),
      );
    }
    return lenses;
  }

  /** The changed lines of pending hunks in every visible editor. */
  decorateAll(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const document = editor.document;
      const text = documentLines(document);
      const ranges = this.service.model
        .pendingHunks(relative(document.uri))
        .map(({ hunk, siblings }) => locateHunk(hunk, siblings, text))
        .filter((lines) => !lines.empty)
        .map((lines) => new vscode.Range(lines.first, 0, lines.last, 0));
      editor.setDecorations(this.decoration, ranges);
    }
  }
}

/** The lenses for `file` documents, their command, the decorations. */
export function registerReviewLens(context: vscode.ExtensionContext, service: CheckpointService): ReviewLens {
  const lens = new ReviewLens(service);
  context.subscriptions.push(
    lens,
    vscode.languages.registerCodeLensProvider({ scheme: 'file' }, lens),
    vscode.commands.registerCommand(REVIEW_HUNK_COMMAND, (runId: string, path: string, hunk: number, decision: ReviewDecision) =>
      service.decide(runId, decision, path, hunk),
    ),
  );
  return lens;
}
