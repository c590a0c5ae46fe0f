/**
 * The Rein LSP contract as the client sees it (docs: /docs/protocol.md).
 *
 * Method names are fixed by the design. Event payloads mirror the server's
 * event union (`rein schema events`); fields the client does not need are
 * left out, and every field the server may omit is optional here, so that a
 * newer server never breaks rendering. Unknown event types are ignored.
 *
 * This module is shared by the extension host and the webview: no imports.
 */

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

export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
}

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

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ThinkingPart {
  type: 'thinking';
  thinking: string;
  redacted?: boolean;
}

export interface ToolCallPart {
  type: 'tool_call';
  id: string;
  name: string;
  arguments?: Record<string, unknown>;
}

export interface UserMessage {
  role: 'user';
  content: string;
  /** "prompt", "steer", "follow_up", "repair", "bootstrap", "nudge", ... */
  origin?: string;
}

export interface AssistantMessage {
  role: 'assistant';
  content?: (TextPart | ThinkingPart | ToolCallPart)[];
  stop_reason?: string;
  usage?: Usage;
}

export interface ToolResultMessage {
  role: 'tool';
  tool_call_id: string;
  tool_name: string;
  content: string;
  is_error?: boolean;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

// ------------------------------------------------------------------- events

export interface Blocker {
  gate: string;
  message: string;
  path?: string | null;
  /** 0-based, as in LSP. */
  line?: number | null;
  character?: number | null;
  severity?: number | null;
  code?: string | number | null;
  source?: string | null;
  context?: string | null;
}

export interface PlanStep {
  id: string | number;
  description: string;
  status: 'pending' | 'running' | 'done' | 'failed';
  /** What the step did, once done or failed. */
  summary?: string | null;
}

export type PreviewState = 'off' | 'stopped' | 'starting' | 'running' | 'reloading' | 'exited' | 'failed';

export interface ToolDetails {
  generation?: number;
  diff?: string;
  path?: string;
  created?: boolean;
  denied?: boolean;
  [key: string]: unknown;
}

export type ReinEvent =
  | { type: 'agent_start' }
  | { type: 'agent_end'; status: RunStatus }
  | { type: 'run_start'; run_id: string; prompt?: string | null }
  | {
      type: 'run_end';
      run_id: string;
      status: RunStatus;
      reason?: string | null;
      turns?: number;
      usage?: Usage;
    }
  | { type: 'turn_start'; turn: number }
  | { type: 'turn_end'; turn: number; tool_calls?: number; usage?: Usage }
  | { type: 'message_start'; role: string }
  | {
      type: 'message_delta';
      kind: 'text' | 'thinking' | 'tool_call';
      delta: string;
      tool_call_id?: string | null;
      tool_name?: string | null;
    }
  | { type: 'message_end'; message: Message }
  | {
      type: 'tool_call_start';
      tool_call_id: string;
      name: string;
      arguments?: Record<string, unknown>;
    }
  | {
      type: 'tool_call_update';
      tool_call_id: string;
      name: string;
      kind?: 'output' | 'heartbeat' | 'status';
      text?: string;
    }
  | {
      type: 'tool_call_end';
      tool_call_id: string;
      name: string;
      is_error: boolean;
      content: string;
      duration_ms?: number;
      details?: ToolDetails;
    }
  | { type: 'steering_applied'; texts: string[] }
  | { type: 'follow_up_started'; text: string }
  | {
      type: 'compaction';
      kind: string;
      tokens_before: number;
      tokens_after: number;
      messages_affected: number;
      detail?: string;
    }
  | { type: 'error'; message: string; where?: string; fatal?: boolean }
  | { type: 'gate_start'; gate: string; generation: number }
  | {
      type: 'gate_result';
      gate: string;
      passed: boolean;
      blockers?: Blocker[];
      duration_ms?: number;
      stale?: boolean;
      detail?: string;
    }
  | { type: 'repair_attempt'; attempt: number; max_attempts: number; blockers?: Blocker[] }
  | { type: 'subagent_activity'; child_id: string; name: string; tool_call_id?: string; event: ReinEvent }
  | {
      type: 'plan_updated';
      steps: PlanStep[];
      reason?: 'planned' | 'step_done' | 'step_failed' | 'revised' | 'step_started';
    }
  | { type: 'plan_state'; state: string; previous?: string }
  | { type: 'preview_started'; pid: number; generation?: number; command?: string; state?: PreviewState }
  | {
      type: 'preview_reloaded';
      generation?: number;
      strategy?: 'restart' | 'signal' | 'self';
      pid?: number | null;
      state?: PreviewState;
    }
  | { type: 'preview_output'; text: string; lines_dropped?: number }
  | { type: 'preview_error'; message: string; lines?: string[]; state?: PreviewState; exit_code?: number | null }
  | { type: 'preview_stopped'; reason?: string; state?: PreviewState; exit_code?: number | null }
  | {
      type: 'auto_repair';
      phase: 'started' | 'finished' | 'cancelled' | 'skipped';
      uri: string;
      status?: RunStatus | null;
      reason?: string | null;
    }
  | { type: 'auto_repair_started'; uri: string; status?: string }
  | { type: 'auto_repair_finished'; uri: string; status: string };

export type ReinEventType = ReinEvent['type'];

/** Every event type this client renders; anything else is ignored. */
export const KNOWN_EVENT_TYPES: readonly ReinEventType[] = [
  'agent_start',
  'agent_end',
  'run_start',
  'run_end',
  'turn_start',
  'turn_end',
  'message_start',
  'message_delta',
  'message_end',
  'tool_call_start',
  'tool_call_update',
  'tool_call_end',
  'steering_applied',
  'follow_up_started',
  'compaction',
  'error',
  'gate_start',
  'gate_result',
  'repair_attempt',
  'subagent_activity',
  'plan_updated',
  'plan_state',
  'preview_started',
  'preview_reloaded',
  'preview_output',
  'preview_error',
  'preview_stopped',
  'auto_repair',
  'auto_repair_started',
  'auto_repair_finished',
];

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
  return (KNOWN_EVENT_TYPES as readonly string[]).includes(event.type);
}
