/**
 * The checkpoint requests of the panel and the editor: loads the session's
 * checkpoints and review (`rein/checkpoints`, `rein/review`) when the session
 * changes and after the events that change them, and carries out what the
 * person asks: undo a run, restore to before a turn, restore one file
 * (`rein/restore`, each after a modal naming the number of files), keep or
 * undo a review's files and hunks (`rein/reviewDecide`), open the diffs.
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../connection';
import {
  Methods,
  type CheckpointsResult,
  type RestoreConflict,
  type RestoreParams,
  type RestoreResult,
  type ReviewDecideParams,
  type ReviewDecideResult,
  type ReviewDecision,
  type ReviewResult,
} from '../shared/protocol';
import type { CheckpointDocuments } from './checkpointDiff';
import { CheckpointModel } from './checkpoints';
import { plain } from './text';

const METHOD_NOT_FOUND = -32601;

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isMethodNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === METHOD_NOT_FOUND;
}

/** The answer of rein/checkpoints has the shape the panel draws (runs with files and turns). */
function isCheckpoints(value: unknown): value is CheckpointsResult {
  const runs = (value as Partial<CheckpointsResult> | null)?.runs;
  return Array.isArray(runs) && runs.every((run) => typeof run.runId === 'string' && Array.isArray(run.files) && Array.isArray(run.turns));
}

export function files(count: number): string {
  return count === 1 ? vscode.l10n.t('1 file') : vscode.l10n.t('{0} files', count);
}

/** What a restore is asked to do, for the modal and the row's outcome. */
export interface RestoreScope {
  runId: string;
  turn?: number | undefined;
  path?: string | undefined;
}

export class CheckpointService implements vscode.Disposable {
  readonly model = new CheckpointModel();
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  /** Fires after every change of the model. */
  readonly onDidChange = this.changeEmitter.event;
  private loading: Promise<void> | undefined;
  private loadAgain = false;
  /** The conflicts of each run's last restore, with their texts (for Compare). */
  private readonly conflicts = new Map<string, RestoreConflict[]>();
  private lastError: string | undefined;

  constructor(
    private readonly connection: ReinConnection,
    private readonly sessionId: () => string | null,
    private readonly documents?: CheckpointDocuments,
    /** Says what the person should see in the timeline (a failed load). */
    private readonly notice: (text: string) => void = () => undefined,
  ) {}

  dispose(): void {
    this.changeEmitter.dispose();
  }

  private changed(): void {
    this.changeEmitter.fire();
  }

  /** Another session is shown: forget this one's and load the new one's. */
  sessionChanged(): Promise<void> {
    this.model.clear();
    this.conflicts.clear();
    this.lastError = undefined;
    this.changed();
    return this.refresh();
  }

  /**
   * Loads the checkpoints and the review again. Calls while a load runs are
   * folded into one more load after it (events come in bursts).
   */
  refresh(): Promise<void> {
    if (this.loading) {
      this.loadAgain = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.loadAgain = false;
        await this.load();
      } while (this.again());
    })().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /** Whether a refresh was asked for while the last load ran. */
  private again(): boolean {
    return this.loadAgain;
  }

  private async load(): Promise<void> {
    const sessionId = this.sessionId();
    if (sessionId === null || this.connection.info.state !== 'running') {
      return;
    }
    let checkpoints: CheckpointsResult;
    try {
      checkpoints = await this.connection.sendRequest<CheckpointsResult>(Methods.checkpoints, { sessionId });
    } catch (error) {
      if (!isMethodNotFound(error)) {
        this.failed(vscode.l10n.t('Could not load the checkpoints: {0}', message(error)));
      }
      return; // a server without checkpoints: nothing to show
    }
    let review: ReviewResult | undefined;
    try {
      review = await this.connection.sendRequest<ReviewResult>(Methods.review, { sessionId });
    } catch (error) {
      if (!isMethodNotFound(error)) {
        this.failed(vscode.l10n.t('Could not load the review: {0}', message(error)));
      }
    }
    if (this.sessionId() !== sessionId) {
      return; // switched meanwhile: the next load is the new session's
    }
    if (!isCheckpoints(checkpoints)) {
      this.failed(vscode.l10n.t('Could not load the checkpoints: the server answered without a list of runs.'));
      return;
    }
    this.lastError = undefined;
    this.model.setRuns(checkpoints.runs);
    if (review && Array.isArray((review as Partial<ReviewResult> | null)?.runs)) {
      this.model.setReview(review);
    }
    this.changed();
  }

  private failed(text: string): void {
    if (text !== this.lastError) {
      this.lastError = text;
      this.notice(text);
    }
  }

  // ------------------------------------------------------------ restore

  /** The modal's question for `scope` (undefined: the run is unknown or cannot be restored). */
  question(scope: RestoreScope): { text: string; detail: string; button: string; count: number } | undefined {
    const run = this.model.run(scope.runId);
    if (!run) {
      return undefined;
    }
    const count = scope.path !== undefined ? 1 : this.model.restorePaths(scope.runId, scope.turn).length;
    const restore = run.kind === 'restore';
    const title = `"${run.title}"`;
    const detail = vscode.l10n.t(
      'Files you changed since are not overwritten: they are listed as conflicts to compare. The restore is itself a checkpoint you can undo.',
    );
    if (scope.path !== undefined) {
      const text = restore
        ? vscode.l10n.t('Restore {0} (1 file) to how it was before this restore?', scope.path)
        : vscode.l10n.t('Restore {0} (1 file) to how it was before {1}?', scope.path, title);
      return { text, detail, button: vscode.l10n.t('Restore'), count };
    }
    const later = this.model.runIds.indexOf(scope.runId) < this.model.runIds.length - 1;
    const fullDetail = later ? vscode.l10n.t('{0} Changes of later runs to these files are undone too.', detail) : detail;
    if (scope.turn !== undefined) {
      return {
        text: restore
          ? vscode.l10n.t('Restore {0} to how they were before turn {1} of this restore?', files(count), scope.turn)
          : vscode.l10n.t('Restore {0} to how they were before turn {1} of {2}?', files(count), scope.turn, title),
        detail: fullDetail,
        button: vscode.l10n.t('Restore'),
        count,
      };
    }
    return {
      text: restore
        ? vscode.l10n.t('Undo this restore? {0} will be put back to how they were before it.', files(count))
        : vscode.l10n.t('Undo {0}? {1} will be put back to how they were before it.', title, files(count)),
      detail: fullDetail,
      button: restore ? vscode.l10n.t('Undo Restore') : vscode.l10n.t('Undo Run'),
      count,
    };
  }

  /** Undo a run / restore to before a turn / restore one file, after the person confirms. */
  async restore(scope: RestoreScope): Promise<RestoreResult | undefined> {
    const sessionId = this.sessionId();
    const run = this.model.run(scope.runId);
    const question = this.question(scope);
    if (!sessionId || !run || !question) {
      return undefined;
    }
    if (run.pruned) {
      void vscode.window.showWarningMessage(plain(vscode.l10n.t('Rein: this run cannot be restored: {0}.', run.prunedReason ?? vscode.l10n.t('its checkpoint was pruned'))));
      return undefined;
    }
    const answer = await vscode.window.showWarningMessage(question.text, { modal: true, detail: question.detail }, question.button);
    if (answer !== question.button) {
      return undefined;
    }
    const params: RestoreParams = { sessionId, runId: scope.runId };
    if (scope.turn !== undefined) {
      params.turn = scope.turn;
    }
    if (scope.path !== undefined) {
      params.paths = [scope.path];
    }
    const label =
      scope.path !== undefined ? scope.path : scope.turn !== undefined ? vscode.l10n.t('to before turn {0}', scope.turn) : vscode.l10n.t('the whole run');
    const busy =
      scope.path !== undefined
        ? vscode.l10n.t('Restoring {0}…', scope.path)
        : run.kind === 'restore'
          ? vscode.l10n.t('Undoing the restore…')
          : scope.turn !== undefined
            ? vscode.l10n.t('Restoring to before turn {0}…', scope.turn)
            : vscode.l10n.t('Undoing the run…');
    this.model.setBusy(scope.runId, busy);
    this.changed();
    try {
      const result = await this.connection.sendRequest<RestoreResult>(Methods.restore, params);
      this.model.setOutcome(scope.runId, label, result);
      this.conflicts.set(scope.runId, result.conflicts);
      // The row says what the restore did (no popup: the person is looking at the panel).
      return result;
    } catch (error) {
      this.model.setError(scope.runId, message(error));
      void vscode.window.showErrorMessage(plain(vscode.l10n.t('Rein: the restore failed: {0}', message(error))));
      return undefined;
    } finally {
      this.model.setBusy(scope.runId, undefined);
      this.changed();
      void this.refresh();
    }
  }

  /** Compare: the checkpoint's text against the person's, for a conflict of the run's last restore. */
  async compare(runId: string, path: string): Promise<void> {
    const conflict = this.conflicts.get(runId)?.find((c) => c.path === path);
    if (!conflict) {
      void vscode.window.showWarningMessage(plain(vscode.l10n.t('Rein: the conflict of {0} is no longer known; restore it again to compare.', path)));
      return;
    }
    await this.documents?.openConflict(conflict);
  }

  /** The diff of `path`: before the run (or its turn) against the file now. */
  async openDiff(runId: string, path: string, turn?: number): Promise<void> {
    const sessionId = this.sessionId();
    const run = this.model.run(runId);
    if (!sessionId || !run) {
      return;
    }
    await this.documents?.openRunDiff(sessionId, runId, path, `"${run.title}"`, turn);
  }

  // ------------------------------------------------------------- review

  /** Keep or Undo: the whole run (no path), a file (no hunk), or one hunk. */
  async decide(runId: string, decision: ReviewDecision, path?: string, hunk?: number): Promise<ReviewDecideResult | undefined> {
    const sessionId = this.sessionId();
    if (!sessionId) {
      return undefined;
    }
    const params: ReviewDecideParams = { sessionId, runId, decision };
    if (path !== undefined) {
      params.path = path;
      if (hunk !== undefined) {
        params.hunk = hunk;
      }
    }
    try {
      const result = await this.connection.sendRequest<ReviewDecideResult>(Methods.reviewDecide, params);
      this.model.setRefused(runId, result.refused);
      this.model.setError(runId, undefined);
      const first = this.model.items().find((item) => item.runId === runId)?.refused?.[0];
      if (first) {
        const where = CheckpointModel.where(first);
        const more = result.refused.length - 1;
        void vscode.window.showWarningMessage(
          plain(
            more > 0
              ? vscode.l10n.t('Rein: could not undo {0} and {1} more: {2}', where, more, first.reason)
              : vscode.l10n.t('Rein: could not undo {0}: {1}', where, first.reason),
          ),
        );
      }
      return result;
    } catch (error) {
      this.model.setError(runId, message(error));
      void vscode.window.showErrorMessage(plain(vscode.l10n.t('Rein: {0} failed: {1}', decision, message(error))));
      return undefined;
    } finally {
      this.changed();
      void this.refresh();
    }
  }
}
