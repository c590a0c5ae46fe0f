/**
 * The chat's state machine on the host side: which session the panel shows,
 * the event stream into the view model (with `seq` checking), the preview
 * (one per workspace, kept across sessions), and the requests the panel and
 * the commands make (prompt, steer, follow-up, abort, sessions, preview). No
 * UI here: the view and the status bar listen to it.
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../connection';
import {
  CHECKPOINT_EVENT_TYPES,
  isKnownEvent,
  isPreviewEvent,
  Methods,
  type AbortResult,
  type ApprovalsResult,
  type EventEnvelope,
  type PreviewAction,
  type PreviewParams,
  type PreviewResult,
  type Attachment,
  type PromptContext,
  type PromptMode,
  type PromptParams,
  type PromptResult,
  type QueuedResult,
  type SessionResult,
  type SessionSummary,
  type SessionsResult,
} from '../shared/protocol';
import { stateName } from '../shared/l10n';
import type { SendMode } from '../shared/messages';
import type { Header, ViewModel } from '../shared/viewModel';
import type { CheckpointDocuments } from './checkpointDiff';
import { panelView } from './checkpoints';
import { CheckpointService } from './checkpointService';
import type { EditCapture } from './edits';
import { ApprovalsModel } from './approvals';
import { McpModel, type McpServersResult } from './mcp';
import { PreviewModel } from './preview';
import { PanelState } from './reducer';
import { plain } from './text';

/** A `rein/event` notification as the contract defines it (anything else is dropped). */
export function isEnvelope(value: unknown): value is EventEnvelope {
  if (value === null || typeof value !== 'object') {
    return false;
  }
  const candidate = value as Record<string, unknown>;
  const event = candidate.event as Record<string, unknown> | null | undefined;
  return (
    (typeof candidate.sessionId === 'string' || candidate.sessionId === null) &&
    typeof candidate.seq === 'number' &&
    event !== null &&
    typeof event === 'object' &&
    typeof event.type === 'string'
  );
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class ChatController implements vscode.Disposable {
  /** The workspace's preview: every PanelState of this controller shares it. */
  readonly preview = new PreviewModel();
  /** The workspace's MCP servers: shared like the preview. */
  readonly mcp = new McpModel();
  /** The approval rules section (the workspace's rules and the shown session's). */
  readonly approvals = new ApprovalsModel();
  private stateValue = new PanelState(null, this.preview, this.mcp);
  private sessionIdValue: string | null = null;
  private lastSeq: number | undefined;
  private reloading = false;
  private promptCancel: vscode.CancellationTokenSource | undefined;
  private sessionsValue: SessionSummary[] = [];
  /** Sessions that run on their own (isolated runs): their events never pull the panel to them. */
  private readonly background = new Set<string>();
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  private readonly resetEmitter = new vscode.EventEmitter<void>();
  private readonly sessionsEmitter = new vscode.EventEmitter<SessionSummary[]>();
  private readonly envelopeEmitter = new vscode.EventEmitter<EventEnvelope>();
  /** Every `rein/event` the server sent (the output channel logs runs from them). */
  readonly onDidReceiveEvent = this.envelopeEmitter.event;
  /** Fires after every change of the view model (many times a second while streaming). */
  readonly onDidChange = this.changeEmitter.event;
  /** Fires when the whole view model was replaced (another session, a reload). */
  readonly onDidReset = this.resetEmitter.event;
  readonly onDidChangeSessions = this.sessionsEmitter.event;
  private readonly subscriptions: vscode.Disposable[];
  /** The shown session's checkpoints and review (the timeline's checkpoint rows, the CodeLens). */
  readonly checkpoints: CheckpointService;

  constructor(
    private readonly connection: ReinConnection,
    private readonly edits?: EditCapture,
    documents?: CheckpointDocuments,
  ) {
    this.checkpoints = new CheckpointService(connection, () => this.sessionIdValue, documents, (text) => {
      this.stateValue.notice('warning', text);
      this.changed();
    });
    this.subscriptions = [
      new vscode.Disposable(() => this.checkpoints.dispose()),
      this.checkpoints.onDidChange(() => this.changed()),
      connection.onNotification(Methods.event, (params: unknown) => {
        if (isEnvelope(params)) {
          this.handleEnvelope(params);
          this.envelopeEmitter.fire(params);
        }
      }),
      connection.onDidChangeState((info) => {
        if (info.state === 'running') {
          // A (re)started server numbers its events from 1 again: the last
          // seq seen belongs to the server that went, and kept it would drop
          // the new one's first events as duplicates.
          this.lastSeq = undefined;
          void this.refreshSessions();
          void this.refreshPreview();
          void this.refreshMcp();
          void this.refreshApprovals();
          void this.checkpoints.refresh();
          return;
        }
        if (info.state !== 'starting') {
          this.preview.serverStopped(); // the server stops its preview when it goes
          if (this.stateValue.header.status === 'running') {
            this.stateValue.setRunning(false);
            this.stateValue.notice('error', vscode.l10n.t('The Rein server stopped during the run.'));
          }
          this.changed();
        }
      }),
    ];
  }

  dispose(): void {
    this.promptCancel?.cancel();
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.changeEmitter.dispose();
    this.resetEmitter.dispose();
    this.sessionsEmitter.dispose();
    this.envelopeEmitter.dispose();
  }

  get state(): PanelState {
    return this.stateValue;
  }

  get sessionId(): string | null {
    return this.sessionIdValue;
  }

  get header(): Header {
    return this.stateValue.header;
  }

  /** What the panel draws: the session's timeline with its checkpoint rows in place. */
  view(): ViewModel {
    return { ...panelView(this.stateValue, this.checkpoints.model), approvals: this.approvals.view() };
  }

  get sessions(): SessionSummary[] {
    return this.sessionsValue;
  }

  get running(): boolean {
    return this.stateValue.header.status === 'running';
  }

  private changed(): void {
    this.changeEmitter.fire();
  }

  private replaceState(state: PanelState, sessionId: string | null): void {
    this.stateValue = state;
    this.sessionIdValue = sessionId;
    this.lastSeq = undefined;
    void this.checkpoints.sessionChanged();
    void this.refreshApprovals();
    this.resetEmitter.fire();
    this.changed();
  }

  // ------------------------------------------------------------ events

  /** The preview and the MCP servers are the workspace's: their events count whichever session's stream they came on. */
  private applyPreview(event: EventEnvelope['event']): void {
    if (isPreviewEvent(event)) {
      this.preview.apply(event);
      this.changed();
    } else if (isKnownEvent(event) && event.type === 'mcp_server_state') {
      this.mcp.apply(event);
      this.changed();
    }
  }

  handleEnvelope(envelope: EventEnvelope): void {
    if (envelope.sessionId === null) {
      // Not part of a session (the preview started by request, a skipped
      // auto-repair): seq is 0, there is nothing to check.
      if (this.stateValue.apply(envelope.event)) {
        this.changed();
      }
      return;
    }
    if (envelope.sessionId !== this.sessionIdValue) {
      if ((this.sessionIdValue !== null && this.running) || this.background.has(envelope.sessionId)) {
        this.applyPreview(envelope.event);
        return; // another session's run while ours is busy: not shown here
      }
      // Nothing running here: follow the session that is active (a new
      // session's first run, or a run a code action started).
      const adopted = this.sessionIdValue === null && this.stateValue.view().items.length === 0;
      this.replaceState(adopted ? this.reuse(envelope.sessionId) : new PanelState(envelope.sessionId, this.preview, this.mcp), envelope.sessionId);
      void this.refreshSessions();
    }
    if (this.reloading) {
      this.applyPreview(envelope.event);
      return; // the transcript being loaded already has these
    }
    if (this.lastSeq !== undefined) {
      if (envelope.seq <= this.lastSeq) {
        return; // a duplicate
      }
      if (envelope.seq !== this.lastSeq + 1) {
        const missed = envelope.seq - this.lastSeq - 1;
        this.applyPreview(envelope.event);
        const first = this.lastSeq + 1;
        const last = envelope.seq - 1;
        void this.reload(
          missed === 1
            ? vscode.l10n.t('Missed 1 event (seq {0}–{1})', first, last)
            : vscode.l10n.t('Missed {0} events (seq {1}–{2})', missed, first, last),
        );
        return;
      }
    }
    this.lastSeq = envelope.seq;
    const event = envelope.event;
    if (CHECKPOINT_EVENT_TYPES.includes(event.type)) {
      void this.checkpoints.refresh(); // what the runs changed, restored or left pending
    }
    if (!this.stateValue.apply(event)) {
      return; // an event type this client does not know
    }
    if (event.type === 'tool_call_end' && this.edits) {
      const end = event as Extract<typeof event, { type: 'tool_call_end' }>;
      if (end.details && this.stateValue.findTool(end.tool_call_id)?.edit) {
        void this.edits.capture(end.tool_call_id, end.details);
      }
    }
    if (event.type === 'run_end') {
      void this.refreshSessions();
      void this.refreshApprovals(); // rules "Always allow" kept during the run
    }
    this.changed();
  }

  /** The empty state of a new session keeps the header's "running" mark. */
  private reuse(sessionId: string): PanelState {
    const state = new PanelState(sessionId, this.preview, this.mcp);
    state.setRunning(this.running);
    return state;
  }

  /** Loads the shown session again after `gap` (what was missed), saying so in a notice. */
  private async reload(gap: string): Promise<void> {
    const sessionId = this.sessionIdValue;
    if (!sessionId || this.reloading) {
      return;
    }
    this.reloading = true;
    try {
      const session = await this.connection.sendRequest<Partial<SessionResult> | null>(Methods.session, { sessionId });
      if (this.sessionIdValue !== sessionId) {
        return;
      }
      const state = PanelState.fromTranscript(sessionId, session?.messages ?? [], this.preview, session?.usage, this.mcp);
      state.setRunning(session?.status === 'running' || this.running);
      state.notice('warning', vscode.l10n.t('{0}; the session was reloaded.', gap));
      this.replaceState(state, sessionId);
      void this.refreshPreview(); // preview output missed in the gap
    } catch (error) {
      this.stateValue.notice('error', vscode.l10n.t('{0}; reloading failed: {1}', gap, message(error)));
      this.changed();
    } finally {
      this.reloading = false;
      this.lastSeq = undefined;
    }
  }

  // ---------------------------------------------------------- requests

  /**
   * Enter in the prompt box: a new run when idle; while a run is active,
   * steering ("auto") or a queued follow-up ("followUp").
   */
  async send(
    text: string,
    mode: SendMode = 'auto',
    context?: PromptContext,
    runMode: PromptMode = 'agent',
    attachments: Attachment[] = [],
  ): Promise<void> {
    const trimmed = text.trim();
    if (!trimmed) {
      return;
    }
    if (this.running && this.sessionIdValue) {
      if (attachments.length) {
        // rein/steer and rein/followUp carry text only (the panel keeps its chips while a run is active).
        this.stateValue.notice('warning', vscode.l10n.t('Attachments go with a new prompt: this message was sent without them.'));
      }
      const origin = mode === 'followUp' ? 'follow_up' : 'steer';
      const method = mode === 'followUp' ? Methods.followUp : Methods.steer;
      try {
        const result = await this.connection.sendRequest<Partial<QueuedResult> | null>(method, {
          sessionId: this.sessionIdValue,
          text: trimmed,
        });
        if (result?.queued) {
          this.stateValue.queueUser(origin, trimmed);
          this.changed();
          return;
        }
      } catch (error) {
        this.stateValue.notice('error', vscode.l10n.t('Could not queue the message: {0}', message(error)));
        this.changed();
        return;
      }
      // The run ended meanwhile: send it as a new prompt.
    }
    await this.prompt(trimmed, context, runMode, attachments);
  }

  private async prompt(
    text: string,
    context: PromptContext | undefined,
    runMode: PromptMode,
    attachments: Attachment[],
  ): Promise<void> {
    const params: PromptParams = { text, mode: runMode };
    if (attachments.length) {
      params.attachments = attachments;
    }
    if (this.sessionIdValue) {
      params.sessionId = this.sessionIdValue;
    }
    if (context) {
      params.context = context;
    }
    this.promptCancel?.dispose();
    const cancel = new vscode.CancellationTokenSource();
    this.promptCancel = cancel;
    // A background session's run goes on when the panel shows another: its answer is then not this state's.
    const shown = this.stateValue;
    shown.setRunning(true);
    this.changed();
    try {
      const result = await this.connection.sendRequest<PromptResult>(Methods.prompt, params, cancel.token);
      if (this.stateValue === shown && (this.sessionIdValue === null || this.sessionIdValue === result.sessionId)) {
        if (this.sessionIdValue === null) {
          this.sessionIdValue = result.sessionId;
          this.stateValue.header.sessionId = result.sessionId;
          void this.checkpoints.refresh();
        }
        if (!this.stateValue.hasRunEnd(result.runId)) {
          // The events did not show the end (or never came): say how it went.
          const level = result.status === 'completed' ? 'info' : result.status === 'waiting' ? 'warning' : 'error';
          const status = stateName(result.status);
          this.stateValue.notice(
            level,
            result.error
              ? vscode.l10n.t('Run {0}: {1} ({2} turns, {3} repairs)', status, result.error, result.turns, result.repairAttempts)
              : vscode.l10n.t('Run {0} ({1} turns, {2} repairs)', status, result.turns, result.repairAttempts),
          );
        }
        // "waiting": the run ended waiting for an answer (ask_user); the next prompt resumes it.
        this.stateValue.setRunning(false);
      }
    } catch (error) {
      shown.setRunning(false);
      if (!cancel.token.isCancellationRequested) {
        shown.notice('error', vscode.l10n.t('The prompt failed: {0}', message(error)));
      } else {
        shown.notice('warning', vscode.l10n.t('The run was aborted.'));
      }
    } finally {
      if (this.promptCancel === cancel) {
        this.promptCancel = undefined;
      }
      cancel.dispose();
      this.changed();
      void this.refreshSessions();
    }
  }

  async abort(): Promise<void> {
    if (!this.running) {
      return;
    }
    if (this.sessionIdValue) {
      try {
        const result = await this.connection.sendRequest<Partial<AbortResult> | null>(Methods.abort, { sessionId: this.sessionIdValue });
        if (result?.aborted) {
          return;
        }
      } catch (error) {
        this.stateValue.notice('warning', vscode.l10n.t('Abort request failed ({0}); cancelling the prompt.', message(error)));
        this.changed();
      }
    }
    this.promptCancel?.cancel(); // $/cancelRequest aborts the run too
  }

  /** Aborts `sessionId`'s run (the shown one's as Stop does); a failure is said in the timeline. */
  async abortSession(sessionId: string): Promise<void> {
    if (sessionId === this.sessionIdValue) {
      return this.abort();
    }
    try {
      await this.connection.sendRequest(Methods.abort, { sessionId });
    } catch (error) {
      this.stateValue.notice('warning', vscode.l10n.t('Could not abort the run of {0}: {1}', sessionId, message(error)));
      this.changed();
    }
  }

  newSession(): void {
    if (!this.mayLeave()) {
      void vscode.window.showWarningMessage(vscode.l10n.t('Rein: a run is active. Abort it before starting a new session.'));
      return;
    }
    this.replaceState(new PanelState(null, this.preview, this.mcp), null);
    this.sessionsEmitter.fire(this.sessionsValue);
  }

  /** `sessionId` runs on its own (an isolated run): the panel shows it only when asked to. */
  runsInBackground(sessionId: string): void {
    this.background.add(sessionId);
  }

  /** Another session may be shown: nothing runs here, or what runs is a background session (it goes on). */
  mayLeave(): boolean {
    return !this.running || (this.sessionIdValue !== null && this.background.has(this.sessionIdValue));
  }

  /** Shows `sessionId`, a session the server just made (`rein/newSession`): empty, its next prompt runs in it. */
  openNew(sessionId: string): void {
    if (!this.mayLeave()) {
      void vscode.window.showWarningMessage(vscode.l10n.t('Rein: a run is active. Abort it before starting a new session.'));
      return;
    }
    this.replaceState(new PanelState(sessionId, this.preview, this.mcp), sessionId);
    this.sessionsEmitter.fire(this.sessionsValue);
  }

  async selectSession(sessionId: string): Promise<void> {
    if (sessionId === this.sessionIdValue) {
      return;
    }
    if (!this.mayLeave()) {
      void vscode.window.showWarningMessage(vscode.l10n.t('Rein: a run is active. Abort it before switching sessions.'));
      this.sessionsEmitter.fire(this.sessionsValue);
      return;
    }
    try {
      const session = await this.connection.sendRequest<Partial<SessionResult> | null>(Methods.session, { sessionId });
      const state = PanelState.fromTranscript(sessionId, session?.messages ?? [], this.preview, session?.usage, this.mcp);
      state.setRunning(session?.status === 'running');
      this.replaceState(state, sessionId);
    } catch (error) {
      void vscode.window.showErrorMessage(plain(vscode.l10n.t('Rein: could not open the session: {0}', message(error))));
    }
    this.sessionsEmitter.fire(this.sessionsValue);
  }

  /**
   * `rein/preview` with `action`; the section shows the answer. Resolves with
   * the answer, rejects when the request failed (the section says so too).
   */
  async previewRequest(action: PreviewAction): Promise<PreviewResult> {
    if (action !== 'status') {
      this.preview.setPending(action);
      this.changed();
    }
    try {
      const params: PreviewParams = { action };
      const result = await this.connection.sendRequest<PreviewResult>(Methods.preview, params);
      this.preview.setPending(undefined);
      this.preview.applyStatus(result);
      return result;
    } catch (error) {
      this.preview.requestFailed(action, message(error));
      throw error;
    } finally {
      this.changed();
    }
  }

  /** The preview's state for the section (the panel loaded, the server started); quiet when it fails. */
  async refreshPreview(): Promise<void> {
    if (this.connection.info.state !== 'running') {
      return; // asked again when the server runs
    }
    try {
      await this.previewRequest('status');
    } catch {
      // an older server without rein/preview, or not connected after all
    }
  }

  /** The MCP servers section from `rein/mcpServers` (what events before the panel opened said). */
  async refreshMcp(): Promise<void> {
    if (this.connection.info.state !== 'running') {
      return; // asked again when the server runs
    }
    try {
      const result = await this.connection.sendRequest<McpServersResult | null>(Methods.mcpServers, {});
      if (result) {
        this.mcp.setSnapshot(result);
        this.changed();
      }
    } catch {
      // an older server without rein/mcpServers: the events fill the section
    }
  }

  /** The approval rules section from `rein/approvals`: the workspace's rules and the shown session's. */
  async refreshApprovals(): Promise<void> {
    if (this.connection.info.state !== 'running') {
      return; // asked again when the server runs
    }
    try {
      const params = this.sessionIdValue ? { sessionId: this.sessionIdValue } : {};
      const result = await this.connection.sendRequest<Partial<ApprovalsResult> | null>(Methods.approvals, params);
      const before = this.approvals.rev;
      this.approvals.setSnapshot(result);
      if (this.approvals.rev !== before) {
        this.changed();
      }
    } catch {
      // an older server without rein/approvals: the section stays empty
    }
  }

  /** Revoke a rule (the section's Revoke button); a failure is said in the timeline. */
  async revokeApproval(id: string): Promise<void> {
    try {
      await this.connection.sendRequest(Methods.revokeApproval, { id });
      this.approvals.remove(id);
      this.changed();
    } catch (error) {
      this.stateValue.notice('error', vscode.l10n.t('Revoking the approval rule failed: {0}', message(error)));
      this.changed();
    }
    await this.refreshApprovals();
  }

  async refreshSessions(): Promise<SessionSummary[]> {
    try {
      const result = await this.connection.sendRequest<Partial<SessionsResult> | null>(Methods.sessions, {});
      this.sessionsValue = result?.sessions ?? [];
    } catch {
      // not connected (yet): keep the last list
    }
    this.sessionsEmitter.fire(this.sessionsValue);
    return this.sessionsValue;
  }
}
