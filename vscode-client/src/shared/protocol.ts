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

import { EVENT_TYPES, type AssistantMessage, type Blocker, type ReinEvent, type ToolResultMessage, type UserMessage } from './events.generated';

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

export const Methods = {
  prompt: 'rein/prompt',
  steer: 'rein/steer',
  followUp: 'rein/followUp',
  abort: 'rein/abort',
  sessions: 'rein/sessions',
  session: 'rein/session',
  preview: 'rein/preview',
  event: 'rein/event',
  diagnostics: 'rein/diagnostics',
  diagnosticsChanged: 'rein/diagnosticsChanged',
  confirm: 'rein/confirm',
  askUser: 'rein/askUser',
  saveDocuments: 'rein/saveDocuments',
} as const;

/** `rein/saveDocuments` (server -> client): save what Rein just changed. */
export interface SaveDocumentsParams {
  uris: string[];
}

export interface SaveDocumentsResult {
  saved: string[];
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

export interface PromptParams {
  text: string;
  sessionId?: string;
  mode?: PromptMode;
  context?: PromptContext;
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
  /** Why a start or restart failed, or that the preview was busy. */
  error?: string;
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
}

export interface ConfirmParams {
  sessionId: string;
  tool: string;
  title: string;
  detail: string;
}

export interface ConfirmResult {
  approved: boolean;
}

export interface AskUserParams {
  sessionId: string;
  question: string;
}

export interface AskUserResult {
  answer: string | null;
}

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
