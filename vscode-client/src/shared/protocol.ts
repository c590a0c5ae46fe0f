/**
 * The Rein LSP contract as the client sees it (docs: /docs/protocol.md).
 *
 * Method names are fixed by the design. The events (and the messages and
 * blockers they carry) are generated from the server's schema into
 * events.generated.ts, so the panel can only handle events the server sends;
 * unknown event types are ignored.
 *
 * This module is shared by the extension host and the webview: it imports
 * only the generated types.
 */

import { EVENT_TYPES, type AssistantMessage, type Blocker, type ReinEvent, type ToolCallEnd, type ToolResultMessage, type UserMessage } from './events.generated';

export type {
  AgentEnd,
  AssistantMessage,
  AutoRepair,
  Blocker,
  Compaction,
  GateResult,
  MessageDelta,
  PlanStep,
  ReinEvent,
  ReinEventType,
  RunEnd,
  TextPart,
  ThinkingPart,
  ToolCall as ToolCallPart,
  ToolCallEnd,
  ToolResultMessage,
  Usage,
  UserMessage,
} from './events.generated';

/** How the panel shows a tool's result: the kind its tool declared (`tool_call_end.display`). */
export type ToolDisplay = NonNullable<ToolCallEnd['display']>;

export const Methods = {
  prompt: 'rein/prompt',
  steer: 'rein/steer',
  followUp: 'rein/followUp',
  abort: 'rein/abort',
  sessions: 'rein/sessions',
  session: 'rein/session',
  preview: 'rein/preview',
  mcpServers: 'rein/mcpServers',
  event: 'rein/event',
  diagnostics: 'rein/diagnostics',
  diagnosticsChanged: 'rein/diagnosticsChanged',
  confirm: 'rein/confirm',
  askUser: 'rein/askUser',
  saveDocuments: 'rein/saveDocuments',
  navigate: 'rein/navigate',
  checkpoints: 'rein/checkpoints',
  restore: 'rein/restore',
  checkpointContent: 'rein/checkpointContent',
  review: 'rein/review',
  reviewDecide: 'rein/reviewDecide',
  approvals: 'rein/approvals',
  revokeApproval: 'rein/approvals/revoke',
  commands: 'rein/commands',
  newSession: 'rein/newSession',
  applyIsolated: 'rein/applyIsolated',
  isolatedSessions: 'rein/isolatedSessions',
  isolatedHunks: 'rein/isolatedHunks',
  setup: 'rein/setup',
} as const;

/** One of the person's slash commands (a prompt file), as `rein/commands` lists it. */
export interface SlashCommand {
  name: string;
  description: string;
  argumentHint: string | null;
  /** Where it was found (`.claude/commands/review/file.md`, `~/...`). */
  source: string;
}

/** `rein/commands`: the workspace's and the user's slash commands. */
export interface CommandsResult {
  commands: SlashCommand[];
}

/** One isolated copy of the folder, as `rein/isolatedSessions` lists it. */
export interface IsolatedSession {
  sessionId: string;
  /** The record's: `running` while a process (this server) owns the copy. */
  status: 'running' | 'finished';
  /** The stored verdict of a finished `rein run --isolated` (empty for a live one). */
  verdict: string;
  worktree: string;
  kind: 'git' | 'copy';
  created: number;
  /** This server's own: `rein/applyIsolated` takes its id. */
  live: boolean;
  /** A live one's title and its run's state (`idle`, `running`, or the last run's status). */
  title?: string;
  runStatus?: string;
  /** The folder's files the run created, changed or deleted. */
  changed?: string[];
  changedError?: string;
  /** A live one's analyzers (its gates are Rein's own in the copy) and what they do not cover. */
  analyzers?: string;
}

export interface IsolatedSessionsResult {
  sessions: IsolatedSession[];
}

export type IsolatedAction = 'keep' | 'discard' | 'branch';

/** A place the run and the folder both changed (never applied): the base, the folder's text (ours) and the run's (theirs). */
export interface IsolatedConflict {
  /** The hunk's id (null: a note on the whole file, such as a mode the run changed). */
  id?: string | null;
  path: string;
  base?: string;
  ours?: string;
  theirs?: string;
  reason?: string;
}

/** One hunk of an isolated run against the folder now (`rein/isolatedHunks`): the review's hunk shape, with an id. */
export interface IsolatedHunk {
  /** `path#index`: what `rein/applyIsolated`'s `hunks` takes. */
  id: string;
  index: number;
  header: string;
  /** The hunk as a unified diff shows it (`-`/`+` lines, no endings). */
  lines: string[];
  status: 'clean' | 'conflict';
  conflict?: IsolatedConflict;
}

export interface IsolatedHunkFile {
  path: string;
  change: 'created' | 'modified' | 'deleted';
  hunks: IsolatedHunk[];
  /** What is not a hunk (a mode the run changed): never applied. */
  notes: string[];
}

export interface IsolatedHunksResult {
  sessionId: string;
  files: IsolatedHunkFile[];
}

/** What the folder's gates said of an applied isolated run (`gates` of `rein/applyIsolated`). */
export interface ApplyGates {
  status: 'passed' | 'blocked' | 'unverified';
  /** One line per blocker (`path:line: message`). */
  blockers: string[];
  /** Why it is unverified. */
  reason: string;
}

/** `rein/applyIsolated`'s answer (`gates`: the folder's gates on the applied result; null when nothing was applied). */
export interface ApplyIsolatedResult {
  applied: string[];
  hunksApplied?: number;
  conflicts: IsolatedConflict[];
  /** The ids of the hunks not applied: the ones not kept, and the conflicts. */
  leftAside?: string[];
  /** The ids of the hunks the folder has already (nothing to apply). */
  alreadyThere?: string[];
  branch?: string;
  commit?: string;
  discarded?: boolean;
  /** The session and run the apply was recorded as (undo restores that run). */
  sessionId?: string | null;
  runId?: string | null;
  gates?: ApplyGates | null;
}

/** One item of the person's setup (`rein/setup`, as `rein doctor` lists it). */
export interface SetupItem {
  /** hook, skill, agent, command, instructions or mcp. */
  kind: string;
  name: string;
  source: string;
  status: 'used' | 'invalid' | 'not trusted' | 'off';
  detail: string;
}

export interface SetupResult {
  items: SetupItem[];
  unlisted?: string[];
  /** False until a session loaded the workspace's MCP servers. */
  mcpLoaded?: boolean;
}

/** `rein/saveDocuments` (server -> client): save what Rein just changed. */
export interface SaveDocumentsParams {
  uris: string[];
}

export interface SaveDocumentsResult {
  saved: string[];
  /** Left dirty: they held the person's unsaved changes before Rein's edit (the disk is behind the buffer). */
  unsaved?: string[];
}

// ---------------------------------------------------------------- requests

export type RunStatus = 'completed' | 'failed' | 'aborted' | 'waiting';

/** What the client attaches to a prompt: the selection or the problems of a file. */
export interface PromptContext {
  uri: string;
  /** LSP range of the selection, 0-based. */
  range?: LspRange;
  /** The selected text. */
  selection?: string;
  languageId?: string;
  /** The file's current problems (Fix Problems in File). */
  diagnostics?: LspDiagnostic[];
}

/** agent: do the task; plan: a planner makes steps, an executor does them one by one. */
export type PromptMode = 'agent' | 'plan';

/** Context the person attached with `@`; the server renders each as a tagged block. */
export interface Attachment {
  kind: 'file' | 'selection' | 'problems' | 'terminal';
  uri?: string;
  range?: LspRange;
  text?: string;
  diagnostics?: LspDiagnostic[];
}

export interface PromptParams {
  text: string;
  sessionId?: string;
  mode?: PromptMode;
  context?: PromptContext;
  attachments?: Attachment[];
}

export interface PromptResult {
  sessionId: string;
  runId: string;
  status: RunStatus;
  text: string;
  turns: number;
  repairAttempts: number;
  /** The mutation generations the run produced. */
  generations: number[] | number;
  /** camelCase here (inputTokens, outputTokens, ...), unlike the events' Usage. */
  usage: Record<string, number>;
  error?: string | null;
  blockers?: Blocker[];
}

export interface SessionTextParams {
  sessionId: string;
  text: string;
}

export interface QueuedResult {
  queued: boolean;
}

export interface AbortParams {
  sessionId: string;
}

export interface AbortResult {
  aborted: boolean;
}

export interface SessionSummary {
  id: string;
  title: string;
  /** idle, running, completed, failed, aborted, waiting, interrupted */
  status: string;
  /** Seconds since the epoch (the server's clock), or an ISO date. */
  updatedAt: number | string;
}

export interface SessionsResult {
  sessions: SessionSummary[];
}

export interface SessionParams {
  sessionId: string;
}

export interface SessionResult {
  id: string;
  status: string;
  messages: Message[];
  /**
   * The session's tokens over all its runs, subagents and summaries included
   * (camelCase, as in PromptResult). Older servers leave it out.
   */
  usage?: Record<string, number>;
}

export type PreviewAction = 'start' | 'stop' | 'restart' | 'status';

export interface PreviewParams {
  action: PreviewAction;
}

/** The preview after the action (one per server, configured by `gates.preview`). */
export interface PreviewResult {
  state: PreviewState;
  /** Only while a process runs. */
  pid?: number;
  generation?: number | null;
  command?: string | null;
  /** The last output lines (at most 50). */
  lines?: string[];
  /** Why a start or restart failed or is not up (what the observation saw), or that the preview was busy. */
  error?: string;
  /** A start or restart that started the program (watched like the start gate): it came up and no runtime error was seen. */
  up?: boolean;
  /** How the wait for it to come up ended; null when the start failed. */
  readyBy?: 'line' | 'url' | 'line and url' | 'port' | 'quiet' | 'error output' | 'ended' | null;
  /** The output lines that matched the error patterns while it was watched. */
  runtimeErrors?: string[];
  /** Its exit code, when it exited with an error while watched or before it was up. */
  exitCode?: number;
}

export interface DiagnosticsParams {
  uris: string[] | null;
}

export interface DiagnosticsResult {
  items: { uri: string; diagnostics: LspDiagnostic[] }[];
  /** More diagnostics for the asked files are coming (a document just opened, not analysed yet). */
  pending?: boolean;
}

export interface DiagnosticsChangedParams {
  uris: string[];
  /** uri -> the open document's version when its diagnostics changed (open documents only). */
  versions?: Record<string, number>;
}

/** A sticky approval rule: a command prefix, a write glob, an MCP `server` or `server/tool`. */
export interface ApprovalRule {
  kind: 'command' | 'write' | 'mcp';
  pattern: string;
}

export interface ConfirmParams {
  sessionId: string;
  tool: string;
  title: string;
  detail: string;
  /** The rule "always allow" keeps (the first of `rules`); absent: none can be kept. */
  rule?: ApprovalRule;
  /** Every rule "always allow" keeps (a compound command: one per command not yet allowed, each exactly as written). */
  rules?: ApprovalRule[];
  /** The wider choice: the same commands as "program subcommand *" where one has a subcommand (absent: none is wider). */
  prefixRules?: ApprovalRule[];
}

export interface ConfirmResult {
  approved: boolean;
  /** Keep the offered rules for the session or the workspace ("always allow"). */
  remember?: 'session' | 'workspace';
  /** Keep `prefixRules` instead of `rules` (the person chose the wider rule). */
  prefix?: boolean;
}

/** `rein/approvals`: the kept rules (the workspace's, and the session's). */
export interface ApprovalRuleInfo extends ApprovalRule {
  id: string;
  scope: 'session' | 'workspace';
  sessionId?: string;
}

export interface ApprovalsResult {
  rules: ApprovalRuleInfo[];
}

export interface AskUserParams {
  /** Absent when no session asks (an MCP server's input while loading). */
  sessionId?: string;
  question: string;
  /** A short title for the box (default "Rein asks"). */
  title?: string;
  /** Hide what is typed (a password or key). */
  password?: boolean;
  /** Pick one of these instead of typing. */
  options?: string[];
  /** What the box starts with (or the preselected option). */
  default?: string;
  /**
   * Remember the answer under this key (with the workspace) in the
   * extension's SecretStorage and answer from there next time, without asking.
   */
  remember?: string;
}

export interface AskUserResult {
  answer: string | null;
}

// ------------------------------------------------- checkpoints and review

export type FileChangeKind = 'created' | 'modified' | 'deleted' | 'renamed';
export type ReviewStatus = 'pending' | 'kept' | 'undone' | 'mixed';

/** A run's (or a turn's) net change to one path (`rein/checkpoints`). */
export interface FileEntry {
  path: string;
  change: FileChangeKind;
  renamedFrom?: string;
  restorable: boolean;
  /** Why it cannot be restored (not stored, pruned). */
  reason?: string;
  review?: ReviewStatus;
}

export interface CheckpointTurn {
  turn: number;
  files: FileEntry[];
}

/** One run that changed files; a restore is one too (kind "restore"). */
export interface CheckpointRunInfo {
  runId: string;
  kind: 'run' | 'restore';
  title: string;
  /** Seconds since the epoch, or an ISO date. */
  startedAt: number | string;
  bytes: number;
  pruned: boolean;
  prunedReason?: string;
  restoredRun?: string;
  restoredTurn?: number;
  files: FileEntry[];
  turns: CheckpointTurn[];
}

export interface CheckpointsParams {
  sessionId: string;
}

export interface CheckpointsResult {
  sessionId: string;
  bytes: number;
  runs: CheckpointRunInfo[];
}

/** Restore to before `runId` (or its `turn`), all files or `paths`. */
export interface RestoreParams {
  sessionId: string;
  runId: string;
  turn?: number;
  paths?: string[];
}

export interface RestoreConflict {
  path: string;
  reason: string;
  /** Unified: the checkpoint's text against the person's. */
  diff: string;
  checkpointText: string | null;
  currentText: string | null;
}

export interface RestoreResult {
  /** The restore's own checkpoint run: undo it with rein/restore. */
  restoreId: string;
  restored: { path: string; change: 'created' | 'modified' | 'deleted' }[];
  alreadyRestored: string[];
  skipped: { path: string; reason: string }[];
  conflicts: RestoreConflict[];
}

export interface CheckpointContentParams {
  sessionId: string;
  runId: string;
  path: string;
  side: 'before' | 'after';
  turn?: number;
}

export interface CheckpointContentResult {
  path: string;
  state: 'text' | 'absent' | 'unstored';
  text?: string;
  reason?: string;
}

export interface ReviewHunk {
  index: number;
  oldStart: number;
  oldLines: number;
  /** 1-based, as in the "@@" header. */
  newStart: number;
  newLines: number;
  header: string;
  lines: string[];
  status: ReviewStatus;
}

export interface ReviewFile {
  path: string;
  change: FileChangeKind;
  renamedFrom?: string;
  status: ReviewStatus;
  diff: string;
  hunks: ReviewHunk[];
  /** Why it cannot be undone (its earlier content was not stored); it has no hunks then. */
  reason?: string;
}

export interface ReviewParams {
  sessionId: string;
  runId?: string;
}

export interface ReviewResult {
  runs: { runId: string; files: ReviewFile[] }[];
}

export type ReviewDecision = 'keep' | 'undo';

/** No path: the whole run (Keep all / Undo all); a path without hunk: the file. */
export interface ReviewDecideParams {
  sessionId: string;
  runId: string;
  decision: ReviewDecision;
  path?: string;
  hunk?: number;
}

export interface ReviewDecideResult {
  runId: string;
  decided: { path: string; hunk?: number; status: string }[];
  refused: { path: string; hunk?: number; reason: string }[];
}

/** The events after which the panel asks for the checkpoints (and the review) again. */
export const CHECKPOINT_EVENT_TYPES: readonly string[] = [
  'run_end',
  'files_restored',
  'checkpoint_dropped',
  'review_pending',
  'review_decided',
];

// ------------------------------------------------------------ LSP subset

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

export interface LspDiagnostic {
  range: LspRange;
  /** 1 error, 2 warning, 3 information, 4 hint. */
  severity?: 1 | 2 | 3 | 4;
  code?: string | number;
  codeDescription?: { href: string };
  source?: string;
  message: string;
  tags?: number[];
  relatedInformation?: {
    location: { uri: string; range: LspRange };
    message: string;
  }[];
}

// ----------------------------------------------------------------- messages

/** A message of a session's transcript (`rein/session`) or of `message_end`. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

// ------------------------------------------------------------------- events

export type PreviewState = 'off' | 'stopped' | 'starting' | 'running' | 'reloading' | 'exited' | 'failed';

/** What the panel reads from `tool_call_end.details` (the schema says only "an object"). */
export interface ToolDetails {
  generation?: number;
  diff?: string;
  path?: string;
  created?: boolean;
  denied?: boolean;
  [key: string]: unknown;
}

/** Every event type this client renders (all the server sends); anything else is ignored. */
export const KNOWN_EVENT_TYPES: readonly string[] = EVENT_TYPES;

export type PreviewEventType = 'preview_started' | 'preview_reloaded' | 'preview_output' | 'preview_error' | 'preview_stopped';
export type PreviewEvent = Extract<ReinEvent, { type: PreviewEventType }>;

const PREVIEW_EVENT_TYPES: readonly string[] = [
  'preview_started',
  'preview_reloaded',
  'preview_output',
  'preview_error',
  'preview_stopped',
] satisfies PreviewEventType[];

/** The preview's events: one preview per workspace, whichever session (or none) they come with. */
export function isPreviewEvent(event: { type: string }): event is PreviewEvent {
  return PREVIEW_EVENT_TYPES.includes(event.type);
}

/**
 * The params of a `rein/event` notification. sessionId null (and seq 0): no
 * session, e.g. the preview started with `rein/preview` or a skipped auto-repair.
 */
export interface EventEnvelope {
  sessionId: string | null;
  runId?: string | null;
  seq: number;
  event: ReinEvent | { type: string; [key: string]: unknown };
}

export function isKnownEvent(event: { type: string }): event is ReinEvent {
  return KNOWN_EVENT_TYPES.includes(event.type);
}
