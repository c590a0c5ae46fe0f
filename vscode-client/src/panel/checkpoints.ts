/**
 * The checkpoints of the session the panel shows: the runs that changed
 * files (`rein/checkpoints`), their files under review (`rein/review`), and
 * what the person's last restore or decision on each run gave. Pure: the
 * host-side service (checkpointService.ts) fills it, the view merges its
 * items into the timeline (`placeCheckpoints`), the CodeLens reads the
 * pending hunks.
 */

import * as l10n from '@vscode/l10n';
import type {
  CheckpointRunInfo,
  FileEntry,
  RestoreResult,
  ReviewFile,
  ReviewHunk,
  ReviewResult,
} from '../shared/protocol';
import type { CheckpointItem, Item, RestoreOutcome, ViewModel } from '../shared/viewModel';
import type { PanelState } from './reducer';

/** What the person did on a run's row and what came of it (kept across refreshes). */
interface RowState {
  busy?: string | undefined;
  outcome?: RestoreOutcome | undefined;
  refused?: CheckpointItem['refused'];
  error?: string | undefined;
}

export interface PendingHunk {
  runId: string;
  path: string;
  hunk: ReviewHunk;
  /** Every hunk of the file (an undone one before it moved it). */
  siblings: readonly ReviewHunk[];
}

function startedAtMs(run: CheckpointRunInfo): number {
  const value = run.startedAt;
  if (typeof value === 'number') {
    return value < 1e12 ? value * 1000 : value;
  }
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? 0 : parsed;
}

/** The paths an entry touches: a rename restores its old path too. */
function entryPaths(entry: FileEntry): string[] {
  return entry.renamedFrom ? [entry.path, entry.renamedFrom] : [entry.path];
}

/** A file still has hunks to decide ("mixed": some kept, some undone, none pending). */
export function isUnderReview(status: string | undefined): boolean {
  return status === 'pending';
}

export class CheckpointModel {
  /** Oldest first. */
  private runs: CheckpointRunInfo[] = [];
  private readonly reviews = new Map<string, ReviewFile[]>();
  private readonly rows = new Map<string, RowState>();
  private readonly cache = new Map<string, { key: string; item: CheckpointItem }>();
  private clock = 0;
  private built: { version: number; items: CheckpointItem[] } | undefined;
  /** Bumped on every change (the CodeLens and the view listen to the service's event). */
  version = 0;

  clear(): void {
    this.runs = [];
    this.reviews.clear();
    this.rows.clear();
    this.version++;
  }

  setRuns(runs: readonly CheckpointRunInfo[]): void {
    this.runs = runs
      .map((run, index) => ({ run, index }))
      .sort((a, b) => startedAtMs(a.run) - startedAtMs(b.run) || a.index - b.index)
      .map(({ run }) => run);
    this.version++;
  }

  setReview(result: ReviewResult): void {
    this.reviews.clear();
    for (const run of result.runs) {
      this.reviews.set(run.runId, run.files);
    }
    this.version++;
  }

  run(runId: string): CheckpointRunInfo | undefined {
    return this.runs.find((run) => run.runId === runId);
  }

  get runIds(): string[] {
    return this.runs.map((run) => run.runId);
  }

  private row(runId: string): RowState {
    let row = this.rows.get(runId);
    if (!row) {
      row = {};
      this.rows.set(runId, row);
    }
    return row;
  }

  setBusy(runId: string, busy: string | undefined): void {
    this.row(runId).busy = busy;
    this.version++;
  }

  setError(runId: string, error: string | undefined): void {
    this.row(runId).error = error;
    this.version++;
  }

  /** What Keep / Undo refused, each hunk with its "@@" header (the review as loaded). */
  setRefused(runId: string, refused: readonly { path: string; hunk?: number | undefined; reason: string }[]): void {
    const files = this.reviews.get(runId) ?? [];
    const shown = refused.map(({ path, hunk, reason }) => ({
      path,
      hunk,
      header: hunk === undefined ? undefined : files.find((f) => f.path === path)?.hunks.find((h) => h.index === hunk)?.header,
      reason,
    })).map((entry) => (entry.header && entry.reason.includes(entry.header) ? { ...entry, header: undefined } : entry));
    this.row(runId).refused = shown.length > 0 ? shown : undefined;
    this.version++;
  }

  /** Where a refusal was: "calc.py", or "calc.py (@@ -3,1 +3,2 @@)". */
  static where(refused: { path: string; hunk?: number | undefined; header?: string | undefined }): string {
    if (refused.hunk === undefined) {
      return refused.path;
    }
    return l10n.t('{0} ({1})', refused.path, refused.header ?? l10n.t('hunk {0}', refused.hunk));
  }

  setOutcome(runId: string, scope: string, result: RestoreResult): void {
    const row = this.row(runId);
    row.outcome = {
      scope,
      restoreId: result.restoreId,
      restored: result.restored.length,
      alreadyRestored: result.alreadyRestored.length,
      skipped: result.skipped.map(({ path, reason }) => ({ path, reason })),
      conflicts: result.conflicts.map(({ path, reason }) => ({ path, reason })),
    };
    row.error = undefined;
    this.version++;
  }

  /**
   * The paths a restore to before `runId` (its `turn`, when given) puts back:
   * the run's from that turn on and every later run's, as the server does.
   */
  restorePaths(runId: string, turn?: number): string[] {
    const index = this.runs.findIndex((run) => run.runId === runId);
    if (index < 0) {
      return [];
    }
    const paths = new Set<string>();
    const target = this.runs[index];
    const own = turn === undefined ? (target?.files ?? []) : (target?.turns ?? []).filter((t) => t.turn >= turn).flatMap((t) => t.files);
    for (const entry of own) {
      entryPaths(entry).forEach((path) => paths.add(path));
    }
    for (const later of this.runs.slice(index + 1)) {
      for (const entry of later.files) {
        entryPaths(entry).forEach((path) => paths.add(path));
      }
    }
    return [...paths].sort();
  }

  /** The hunks still pending in `path` (workspace-relative), over all runs. */
  pendingHunks(path: string): PendingHunk[] {
    const found: PendingHunk[] = [];
    for (const [runId, files] of this.reviews) {
      for (const file of files) {
        if (file.path !== path || !isUnderReview(file.status)) {
          continue;
        }
        for (const hunk of file.hunks) {
          if (hunk.status === 'pending') {
            found.push({ runId, path, hunk, siblings: file.hunks });
          }
        }
      }
    }
    return found;
  }

  /** The paths with pending hunks (for the editor's decorations). */
  pendingPaths(): Set<string> {
    const paths = new Set<string>();
    for (const files of this.reviews.values()) {
      for (const file of files) {
        if (isUnderReview(file.status)) {
          paths.add(file.path);
        }
      }
    }
    return paths;
  }

  /**
   * One item per run, oldest first; an item keeps its `rev` until something
   * in it changes. Built again only after a change (the view asks for them on
   * every flush while a run streams).
   */
  items(): CheckpointItem[] {
    if (this.built?.version === this.version) {
      return this.built.items;
    }
    const items = this.build();
    this.built = { version: this.version, items };
    return items;
  }

  private build(): CheckpointItem[] {
    const byId = new Map(this.runs.map((run) => [run.runId, run]));
    const items: CheckpointItem[] = [];
    for (const run of this.runs) {
      const row = this.rows.get(run.runId) ?? {};
      const review = this.reviews.get(run.runId);
      const turnCounts: Record<number, number> = {};
      for (const turn of run.turns) {
        turnCounts[turn.turn] = this.restorePaths(run.runId, turn.turn).length;
      }
      const content: Omit<CheckpointItem, 'rev'> = {
        id: `ckpt-${run.runId}`,
        kind: 'checkpoint',
        runId: run.runId,
        run,
        undoCount: this.restorePaths(run.runId).length,
        turnCounts,
        restoredTitle: run.restoredRun ? byId.get(run.restoredRun)?.title : undefined,
        restoredKind: run.restoredRun ? byId.get(run.restoredRun)?.kind : undefined,
        busy: row.busy,
        outcome: row.outcome,
        review: review && review.length > 0 ? review : undefined,
        refused: row.refused,
        error: row.error,
      };
      const key = JSON.stringify(content);
      const cached = this.cache.get(run.runId);
      if (cached?.key === key) {
        items.push(cached.item);
        continue;
      }
      const item: CheckpointItem = { ...content, rev: ++this.clock };
      this.cache.set(run.runId, { key, item });
      items.push(item);
    }
    return items;
  }
}

/**
 * The timeline with the checkpoint items: each after the last row of its run,
 * or, when the timeline has none (a loaded session, a restore), at the end,
 * oldest first.
 */
export function placeCheckpoints(items: readonly Item[], checkpoints: readonly CheckpointItem[]): Item[] {
  if (checkpoints.length === 0) {
    return [...items];
  }
  const lastRow = new Map<string, number>();
  items.forEach((item, index) => {
    if (item.runId) {
      lastRow.set(item.runId, index);
    }
  });
  const after = new Map<number, CheckpointItem[]>();
  const atEnd: CheckpointItem[] = [];
  for (const checkpoint of checkpoints) {
    const index = lastRow.get(checkpoint.run.runId);
    if (index === undefined) {
      atEnd.push(checkpoint);
    } else {
      after.set(index, [...(after.get(index) ?? []), checkpoint]);
    }
  }
  const placed: Item[] = [];
  items.forEach((item, index) => {
    placed.push(item);
    placed.push(...(after.get(index) ?? []));
  });
  placed.push(...atEnd);
  return placed;
}

/** What the panel draws: the session's timeline with its checkpoint rows in place. */
export function panelView(state: PanelState, checkpoints: CheckpointModel): ViewModel {
  const view = state.view();
  return { ...view, items: placeCheckpoints(view.items, checkpoints.items()) };
}
