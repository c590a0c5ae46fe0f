/**
 * The panel's isolated runs (user guide, "Parallel runs in isolation"):
 * "New isolated session" makes one (`rein/newSession` with `isolated:
 * true`) and shows it, so the next prompt runs in its own copy of the
 * folder; the section lists every copy (`rein/isolatedSessions`, asked
 * again when a run of one starts or ends) with its state, its changed files
 * and its verdict; a row opens, aborts, keeps, discards or keeps as a
 * branch (`rein/applyIsolated`). "Review" lists its hunks against the folder
 * now (`rein/isolatedHunks`: clean, or a conflict with both sides); the
 * person keeps or undoes each clean hunk and "Apply kept" applies only
 * those (`hunks`). Keeping goes into the chat's current session
 * (`intoSessionId`: one run of it, undone from its timeline) unless the
 * panel shows no session or the isolated one. Steering is the prompt box's,
 * on the opened session.
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../connection';
import { cleanHunks, isolatedRows, type IsolatedReview, type IsolatedRowAction, type IsolatedRunView } from '../shared/isolatedView';
import {
  Methods,
  type ApplyGates,
  type ApplyIsolatedResult,
  type EventEnvelope,
  type IsolatedAction,
  type IsolatedHunksResult,
  type IsolatedSession,
  type IsolatedSessionsResult,
} from '../shared/protocol';
import { plain } from './text';

/** What the isolated runs need of the chat's controller. */
export interface IsolatedHost {
  readonly sessionId: string | null;
  readonly onDidReceiveEvent: vscode.Event<EventEnvelope>;
  readonly onDidReset: vscode.Event<void>;
  openNew(sessionId: string): void;
  runsInBackground(sessionId: string): void;
  /** Whether the panel may show another session now (what it shows does not run, or runs in the background). */
  mayLeave(): boolean;
  selectSession(sessionId: string): Promise<void>;
  newSession(): void;
  abortSession(sessionId: string): Promise<void>;
  /** The shown session's timeline (an apply into it adds a checkpoint run). */
  readonly checkpoints: { refresh(): Promise<void> };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The one-line outcome of `rein/applyIsolated` (with the folder's gates on the result when they judged it). */
export function appliedText(action: IsolatedAction, result: ApplyIsolatedResult): string {
  let text: string;
  if (action === 'discard') {
    text = vscode.l10n.t('Rein: the isolated run was discarded.');
  } else if (action === 'branch') {
    text = vscode.l10n.t('Rein: the isolated run was kept as branch {0} ({1}).', result.branch ?? '', (result.commit ?? '').slice(0, 12));
  } else if (result.conflicts.length) {
    const conflicts = result.conflicts.map((c) => (c.reason ? `${c.path} (${c.reason})` : c.path)).join(', ');
    text = vscode.l10n.t('Rein: applied {0}; not applied, they conflict with your folder: {1}.', result.applied.join(', ') || vscode.l10n.t('nothing'), conflicts);
  } else {
    text = result.applied.length
      ? vscode.l10n.t('Rein: the isolated run was kept: {0}.', result.applied.join(', '))
      : vscode.l10n.t('Rein: the isolated run changed nothing to keep.');
  }
  const conflicting = new Set(result.conflicts.map((c) => c.id));
  const undone = (result.leftAside ?? []).filter((id) => !conflicting.has(id));
  if (undone.length) {
    // With no conflict left the copy is removed: the hunks not kept go with it.
    text = result.conflicts.length
      ? vscode.l10n.t('{0} Left aside, not kept: {1}.', text, undone.join(', '))
      : vscode.l10n.t('{0} Not kept, discarded with the copy: {1}.', text, undone.join(', '));
  }
  const verdict = verdictText(result.gates);
  return verdict ? vscode.l10n.t('{0} Your folder’s gates: {1}.', text, verdict) : text;
}

/** The folder's gates on the applied result, in a few words (empty when they did not judge it). */
export function verdictText(gates: ApplyGates | null | undefined): string {
  if (!gates) {
    return '';
  }
  if (gates.status === 'blocked') {
    const first = gates.blockers.slice(0, 3).join('; ');
    const more = gates.blockers.length > 3 ? vscode.l10n.t(' and {0} more', gates.blockers.length - 3) : '';
    return vscode.l10n.t('blocked ({0}): {1}{2}', gates.blockers.length, first, more);
  }
  if (gates.status === 'unverified') {
    return gates.reason ? vscode.l10n.t('unverified ({0})', gates.reason) : vscode.l10n.t('unverified');
  }
  return vscode.l10n.t('passed');
}

export class IsolatedRuns implements vscode.Disposable {
  private sessions: IsolatedSession[] = [];
  /** The runs under review: their hunks and the ids kept. */
  private readonly reviews = new Map<string, IsolatedReview>();
  private readonly changeEmitter = new vscode.EventEmitter<IsolatedRunView[]>();
  /** Fires with the section's rows whenever the list or the shown session changed. */
  readonly onDidChange = this.changeEmitter.event;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly connection: ReinConnection,
    private readonly host: IsolatedHost,
  ) {
    this.subscriptions = [
      connection.onDidChangeState((info) => {
        if (info.state === 'running') {
          void this.refresh();
        }
      }),
      host.onDidReceiveEvent((envelope) => {
        const type = envelope.event.type;
        if (type === 'run_start' && envelope.sessionId !== null && this.reviews.delete(envelope.sessionId)) {
          this.changeEmitter.fire(this.rows()); // it runs again: the hunks shown are stale at once
        }
        if ((type === 'run_start' || type === 'run_end') && this.sessions.some((s) => s.live && s.sessionId === envelope.sessionId)) {
          void this.refresh(); // its state, its changed files, its verdict
        }
      }),
      host.onDidReset(() => this.changeEmitter.fire(this.rows())),
    ];
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.changeEmitter.dispose();
  }

  rows(): IsolatedRunView[] {
    return isolatedRows(this.sessions, this.host.sessionId, this.reviews);
  }

  /** The list from `rein/isolatedSessions`; quiet when the server cannot say (not running, an older server). */
  async refresh(): Promise<IsolatedRunView[]> {
    if (this.connection.info.state === 'running') {
      try {
        const result = await this.connection.sendRequest<Partial<IsolatedSessionsResult> | null>(Methods.isolatedSessions, {});
        this.sessions = result?.sessions ?? [];
        for (const sessionId of [...this.reviews.keys()]) {
          if (!this.sessions.some((s) => s.live && s.sessionId === sessionId && s.runStatus !== 'running')) {
            this.reviews.delete(sessionId); // applied, discarded, or running again: its hunks are stale
          }
        }
        for (const session of this.sessions) {
          if (session.live) {
            this.host.runsInBackground(session.sessionId);
          }
        }
      } catch {
        // keep the last list
      }
    }
    const rows = this.rows();
    this.changeEmitter.fire(rows);
    return rows;
  }

  /** "New isolated session": a copy of the folder, shown empty; the next prompt runs there. */
  async start(): Promise<string | undefined> {
    if (!this.host.mayLeave()) {
      void vscode.window.showWarningMessage(vscode.l10n.t('Rein: a run is active. Abort it before starting a new session.'));
      return undefined;
    }
    try {
      const made = await this.connection.sendRequest<{ sessionId: string }>(Methods.newSession, { isolated: true, title: vscode.l10n.t('Isolated session') });
      this.host.runsInBackground(made.sessionId);
      this.host.openNew(made.sessionId);
      await this.refresh();
      return made.sessionId;
    } catch (error) {
      void vscode.window.showErrorMessage(plain(vscode.l10n.t('Rein: could not start an isolated session: {0}', message(error))));
      return undefined;
    }
  }

  /** A row's button. */
  async act(sessionId: string, action: IsolatedRowAction): Promise<void> {
    switch (action) {
      case 'open':
        await this.host.selectSession(sessionId);
        break;
      case 'abort':
        await this.host.abortSession(sessionId);
        break;
      case 'review':
        await this.review(sessionId);
        break;
      case 'applyKept': {
        const review = this.reviews.get(sessionId);
        if (review) {
          await this.apply(sessionId, 'keep', undefined, [...review.kept]);
        }
        break;
      }
      case 'keep':
        await this.apply(sessionId, 'keep');
        break;
      case 'discard': {
        const discard = vscode.l10n.t('Discard');
        const answer = await vscode.window.showWarningMessage(
          vscode.l10n.t('Discard the isolated run\u2019s changes? Its copy of the folder is removed.'),
          { modal: true },
          discard,
        );
        if (answer === discard) {
          await this.apply(sessionId, 'discard');
        }
        break;
      }
      case 'branch': {
        const name = await vscode.window.showInputBox({
          title: vscode.l10n.t('Keep the isolated run as a branch'),
          prompt: vscode.l10n.t('The new branch\u2019s name (nothing is applied to your folder)'),
          validateInput: (value) => (value.trim() ? undefined : vscode.l10n.t('A branch name is needed.')),
        });
        if (name?.trim()) {
          await this.apply(sessionId, 'branch', name.trim());
        }
        break;
      }
    }
  }

  /** "Review": its hunks against the folder now, every clean one kept until undone; again: the review closes. */
  private async review(sessionId: string): Promise<void> {
    if (this.reviews.delete(sessionId)) {
      this.changeEmitter.fire(this.rows());
      return;
    }
    try {
      const result = await this.connection.sendRequest<IsolatedHunksResult>(Methods.isolatedHunks, { sessionId });
      this.reviews.set(sessionId, { files: result.files, kept: new Set(cleanHunks(result.files)) });
    } catch (error) {
      void vscode.window.showErrorMessage(plain(vscode.l10n.t('Rein: could not list the isolated run’s changes: {0}', message(error))));
    }
    this.changeEmitter.fire(this.rows());
  }

  /** Keep or undo one clean hunk under review (a conflict is never kept). */
  decide(sessionId: string, hunk: string, keep: boolean): void {
    const review = this.reviews.get(sessionId);
    if (!review || !cleanHunks(review.files).includes(hunk)) {
      return;
    }
    const kept = new Set(review.kept);
    if (keep) {
      kept.add(hunk);
    } else {
      kept.delete(hunk);
    }
    this.reviews.set(sessionId, { files: review.files, kept });
    this.changeEmitter.fire(this.rows());
  }

  /** The chat's session an apply goes into: the shown one, unless none is shown or it is an isolated run. */
  private into(): string | undefined {
    const shown = this.host.sessionId;
    return shown && !this.sessions.some((s) => s.sessionId === shown) ? shown : undefined;
  }

  private async apply(sessionId: string, action: IsolatedAction, branch?: string, hunks?: string[]): Promise<void> {
    try {
      const into = action === 'keep' ? this.into() : undefined;
      const params = {
        sessionId,
        action,
        ...(branch ? { branch } : {}),
        ...(hunks ? { hunks } : {}),
        ...(into ? { intoSessionId: into } : {}),
      };
      const result = await this.connection.sendRequest<ApplyIsolatedResult>(Methods.applyIsolated, params);
      this.reviews.delete(sessionId);
      if (into && result.applied.length) {
        void this.host.checkpoints.refresh(); // the apply is a run of the shown session now
      }
      const text = plain(appliedText(action, result));
      if (result.conflicts.length) {
        void vscode.window.showWarningMessage(text);
      } else {
        void vscode.window.showInformationMessage(text);
        if (this.host.sessionId === sessionId) {
          this.host.newSession(); // its copy is gone: the next prompt starts a new session
        }
      }
    } catch (error) {
      void vscode.window.showErrorMessage(plain(vscode.l10n.t('Rein: could not bring the isolated run back: {0}', message(error))));
    }
    await this.refresh();
  }

}
