/**
 * The panel's isolated runs section as data: what `rein/isolatedSessions`
 * answers, made into the rows the page draws. Shared by the host and the
 * page; pure, no imports but types.
 */

import type { IsolatedHunkFile, IsolatedSession } from './protocol';

/**
 * What a row's button does: show its timeline, abort its run, review its
 * hunks (or close the review), apply the kept hunks, or bring it all back.
 */
export type IsolatedRowAction = 'open' | 'abort' | 'review' | 'applyKept' | 'keep' | 'discard' | 'branch';

/** One hunk under review: clean ones can be kept or undone; a conflict shows both sides and is never applied. */
export interface IsolatedHunkView {
  id: string;
  header: string;
  lines: string[];
  status: 'clean' | 'conflict';
  kept: boolean;
  /** A conflict's sides: the folder's text now and the run's. */
  ours?: string | undefined;
  theirs?: string | undefined;
  reason?: string | undefined;
}

export interface IsolatedReviewView {
  files: { path: string; change: string; notes: string[]; hunks: IsolatedHunkView[] }[];
  kept: number;
  conflicts: number;
}

/** An isolated run's review as the host holds it: its hunks (`rein/isolatedHunks`) and the ids the person keeps. */
export interface IsolatedReview {
  files: IsolatedHunkFile[];
  kept: ReadonlySet<string>;
}

/** The ids of the clean hunks: what a review keeps until the person undoes some. */
export function cleanHunks(files: readonly IsolatedHunkFile[]): string[] {
  return files.flatMap((file) => file.hunks.filter((hunk) => hunk.status === 'clean').map((hunk) => hunk.id));
}

/** A review as the page draws it: each hunk marked kept or not (a conflict never is), with the counts. */
export function reviewView(review: IsolatedReview): IsolatedReviewView {
  let kept = 0;
  let conflicts = 0;
  const files = review.files.map((file) => ({
    path: file.path,
    change: file.change,
    notes: file.notes,
    hunks: file.hunks.map((hunk): IsolatedHunkView => {
      const isKept = hunk.status === 'clean' && review.kept.has(hunk.id);
      kept += isKept ? 1 : 0;
      conflicts += hunk.status === 'conflict' ? 1 : 0;
      return {
        id: hunk.id,
        header: hunk.header,
        lines: hunk.lines,
        status: hunk.status,
        kept: isKept,
        ours: hunk.conflict?.ours,
        theirs: hunk.conflict?.theirs,
        reason: hunk.conflict?.reason,
      };
    }),
  }));
  return { files, kept, conflicts };
}

export interface IsolatedRunView {
  sessionId: string;
  title: string;
  /** running: a run is active; idle: live, no run yet; finished: kept for `rein apply`; else the last run's status. */
  state: string;
  /** The gates' word: the last run's status (live) or the verdict stored when it ended. */
  verdict: string;
  changed: string[];
  /** Why the changed files cannot be listed (the copy is gone, git failed). */
  changedError?: string | undefined;
  /** Its gates' analyzers and what they leave out (`analyzers: ruff 0.x (python); not analysed: .md (1 file)`). */
  analyzers?: string | undefined;
  /** This window's server owns it: it can be opened, steered, aborted and applied here. */
  live: boolean;
  /** The panel shows its timeline now (Enter steers it while it runs). */
  shown: boolean;
  /** The buttons the row offers. */
  actions: IsolatedRowAction[];
  /** Its hunks under review (after "Review"), with what is kept. */
  review?: IsolatedReviewView | undefined;
}

/** The rows of the isolated runs section, oldest first (as listed). */
export function isolatedRows(
  sessions: readonly IsolatedSession[],
  shown: string | null,
  reviews: ReadonlyMap<string, IsolatedReview> = new Map(),
): IsolatedRunView[] {
  return sessions.map((session) => {
    const running = session.live && session.runStatus === 'running';
    const state = session.live ? (session.runStatus ?? 'idle') : session.status;
    const verdict = session.live ? (state === 'idle' || running ? '' : state) : session.verdict;
    const actions: IsolatedRowAction[] = [];
    if (session.live) {
      if (session.sessionId !== shown) {
        actions.push('open');
      }
      if (running) {
        actions.push('abort');
      } else {
        actions.push('review', 'keep', 'discard');
        if (session.kind === 'git') {
          actions.push('branch');
        }
      }
    }
    const review = session.live && !running ? reviews.get(session.sessionId) : undefined;
    if (review) {
      actions.splice(actions.indexOf('review') + 1, 0, 'applyKept');
    }
    return {
      sessionId: session.sessionId,
      title: session.title || session.sessionId,
      state,
      verdict,
      changed: session.changed ?? [],
      changedError: session.changedError,
      analyzers: session.analyzers,
      live: session.live,
      shown: session.sessionId === shown,
      actions,
      review: review ? reviewView(review) : undefined,
    };
  });
}
