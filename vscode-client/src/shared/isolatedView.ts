/**
 * The panel's isolated runs section as data: what `rein/isolatedSessions`
 * answers, made into the rows the page draws. Shared by the host and the
 * page; pure, no imports but types.
 */

import type { IsolatedSession } from './protocol';

/** What a row's button does: show its timeline, abort its run, or bring it back. */
export type IsolatedRowAction = 'open' | 'abort' | 'keep' | 'discard' | 'branch';

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
}

/** The rows of the isolated runs section, oldest first (as listed). */
export function isolatedRows(sessions: readonly IsolatedSession[], shown: string | null): IsolatedRunView[] {
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
        actions.push('keep', 'discard');
        if (session.kind === 'git') {
          actions.push('branch');
        }
      }
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
    };
  });
}
