/**
 * The server's events, generated from docs/events.schema.json by
 * `npm run gen:events` (scripts/eventTypes.ts). Do not edit: change the
 * event models in server/rein/harness/events.py, run
 * `rein schema events --write-docs docs`, then `npm run gen:events`.
 * test/unit/eventTypes.test.ts fails when this file and the schema differ.
 */

/** The agent is idle again: no run active, no follow-up queued. */
export interface AgentEnd {
  status: 'completed' | 'failed' | 'aborted' | 'waiting';
  type: 'agent_end';
}

/** The agent left idle: a prompt (or continue) started processing. */
export interface AgentStart {
  type: 'agent_start';
}

export interface AssistantMessage {
  content?: (TextPart | ThinkingPart | ToolCall)[];
  model?: string | null;
  role: 'assistant';
  stop_reason?: 'stop' | 'tool_use' | 'length' | 'aborted' | 'error';
  usage?: Usage;
}

/** Diagnostics-driven auto-repair: a start and an outcome per attempt. */
export interface AutoRepair {
  phase: 'started' | 'finished' | 'cancelled' | 'skipped';
  reason?: string | null;
  status?: 'completed' | 'failed' | 'aborted' | 'waiting' | null;
  type: 'auto_repair';
  uri: string;
}

/** One problem a gate found that the model must fix. */
export interface Blocker {
  also?: string[];
  character?: number | null;
  code?: string | null;
  context?: string | null;
  gate: string;
  line?: number | null;
  message: string;
  path?: string | null;
  severity?: number | null;
  source?: string | null;
}

/**
 * The run spent more than ``harness.maxTokensPerRun`` or ``harness.maxCostPerRun`` allow: it ends
 * before its next turn (status "failed", reason "budget: ..."); a client may offer to continue.
 */
export interface BudgetExceeded {
  allowed: number;
  limit: 'tokens' | 'cost';
  spent: number;
  type: 'budget_exceeded';
}

/**
 * The run starts with changes an earlier run of the session left unvalidated (its repair budget
 * ran out, it was aborted): this run validates them before it can complete.
 */
export interface CarriedChanges {
  generations: number[];
  paths: string[];
  type: 'carried_changes';
}

/**
 * The storage limits dropped a checkpoint run's content (the oldest runs of the workspace first):
 * the run stays listed, it can no longer be restored. ``session_id`` is the run's session (the
 * limits are per workspace, so it may be another session's run); ``bytes`` is what its content
 * alone held.
 */
export interface CheckpointDropped {
  bytes: number;
  reason: string;
  run_id: string;
  session_id: string;
  type: 'checkpoint_dropped';
}

/**
 * The context was brought under the window: oldest tool results elided ("elide") or oldest turns
 * summarised ("summarize").
 */
export interface Compaction {
  detail?: string;
  kind: 'elide' | 'summarize';
  messages_affected: number;
  tokens_after: number;
  tokens_before: number;
  type: 'compaction';
}

/**
 * How full the context window is: the tokens of the last model request (as the provider counted
 * them; estimated when it reported none) of the ``window``.
 */
export interface ContextShare {
  share: number;
  used: number;
  window: number;
}

/** Something went wrong that the run survived (a hook raised, ...) or did not. */
export interface ErrorEvent {
  fatal?: boolean;
  message: string;
  type: 'error';
  where?: string;
}

/**
 * A restore (``rein/restore``, ``rein undo``) put files back as they were before a run or a turn.
 * Outside any run: its id is the restore's own checkpoint run (undo it by restoring that id).
 */
export interface FilesRestored {
  conflicts?: string[];
  restore_id: string;
  restored?: string[];
  run_id: string;
  skipped?: string[];
  turn?: number | null;
  type: 'files_restored';
}

export interface FollowUpStarted {
  text: string;
  type: 'follow_up_started';
}

/**
 * One gate's verdict on a generation. ``detail`` says what it looked at; an ``unverified``
 * result's detail starts with why it could not look (the tests runner was not found, the analyzers
 * did not answer).
 */
export interface GateResult {
  blockers?: Blocker[];
  detail?: string;
  duration_ms?: number;
  gate: string;
  passed: boolean;
  stale?: boolean;
  status?: 'passed' | 'blocked' | 'unverified';
  type: 'gate_result';
}

export interface GateStart {
  gate: string;
  generation: number;
  type: 'gate_start';
}

/**
 * A gate has waited on something (the analyzers) for more than a second: ``begin`` then, ``end``
 * when the wait is over. Front-ends show it (``rein run`` a line on stderr, the editor a
 * ``$/progress``, ACP a notice), so that no wait is silent.
 */
export interface GateWaiting {
  files?: number | null;
  gate: string;
  message: string;
  phase: 'begin' | 'end';
  type: 'gate_waiting';
}

/**
 * A hook of the person's setup (Claude Code's protocol, ``.claude/settings.json`` and the like)
 * did something the person should see: ``blocked`` a tool call or a prompt, added ``context``,
 * kept the run going (``continued``), asked for approval (``asked``), ``failed`` (a non-blocking
 * error, a time-out, an exit code other than 0 and 2, an invalid entry) or was ``skipped`` (the
 * workspace's hooks were not allowed).
 */
export interface HookActivity {
  command: string;
  event: string;
  message?: string;
  outcome: 'blocked' | 'context' | 'continued' | 'asked' | 'failed' | 'skipped';
  source: string;
  tool?: string | null;
  type: 'hook';
}

/**
 * An image the model sees: from a tool result (an MCP tool's screenshot) or the person. ``data``
 * is base64; providers that take no images get a placeholder naming it instead.
 */
export interface ImagePart {
  data: string;
  mime_type: string;
  type: 'image';
}

/**
 * The MCP tools' definitions together take more than ``rein.mcp.maxToolShare`` of the model's
 * window (once per session): only ``offered`` of the ``total`` tools are offered.
 */
export interface McpBudgetWarning {
  offered: number;
  share: number;
  tokens: number;
  total: number;
  type: 'mcp_budget_warning';
  window: number;
}

/**
 * An MCP server of the workspace changed state: "starting", "running" (with its tool count),
 * "failed" (with the error: a failed start, a crash, a restart that failed, or giving up),
 * "stopped" or "skipped" (not started: disabled, not trusted, invalid; ``error`` says why).
 */
export interface McpServerState {
  error?: string | null;
  server: string;
  source: string;
  state: 'starting' | 'running' | 'failed' | 'stopped' | 'skipped';
  tools?: number;
  type: 'mcp_server_state';
}

/** A streamed piece of the assistant message being produced. */
export interface MessageDelta {
  delta: string;
  kind: 'text' | 'thinking' | 'tool_call';
  tool_call_id?: string | null;
  tool_name?: string | null;
  type: 'message_delta';
}

export interface MessageEnd {
  message: UserMessage | AssistantMessage | ToolResultMessage;
  type: 'message_end';
}

export interface MessageStart {
  role: 'user' | 'assistant' | 'tool';
  type: 'message_start';
}

/**
 * The outbound payload of the model request that follows (only with ``Agent(wire_dump=True)``; off
 * by default). Redacted: no API keys, no Authorization header. ``format`` is the wire format
 * ("openai", "anthropic") when the provider serialised it, "neutral" for Rein's own request shape.
 * Hosts do not store it unless they choose to.
 */
export interface ModelRequestEvent {
  format?: string;
  model: string;
  payload?: Record<string, unknown>;
  turn: number;
  type: 'model_request';
}

/**
 * The model's request failed before any reply (a 429, a 5xx, a refused connection, a stall) and is
 * sent again after ``wait_s`` seconds: sent as the wait begins. Show it until the reply starts
 * (``message_start``; for compaction's summary, its ``compaction`` event) or the next
 * ``model_retry``; at most ``rein.model.maxRetries`` per request.
 */
export interface ModelRetry {
  attempt: number;
  max_attempts: number;
  provider: string;
  purpose?: 'turn' | 'compaction';
  reason: string;
  type: 'model_retry';
  wait_s: number;
}

/** A transition of the plan-act state machine. */
export interface PlanState {
  previous: 'idle' | 'planning' | 'executing' | 'updating' | 'summarizing' | 'completed' | 'failed' | 'waiting';
  state: 'idle' | 'planning' | 'executing' | 'updating' | 'summarizing' | 'completed' | 'failed' | 'waiting';
  type: 'plan_state';
}

export interface PlanStep {
  description: string;
  id: string;
  status?: 'pending' | 'running' | 'done' | 'failed';
  summary?: string | null;
}

/** The plan as it stands: after planning, after each step, after a revision. */
export interface PlanUpdated {
  reason?: 'planned' | 'step_done' | 'step_failed' | 'revised' | 'step_started';
  steps: PlanStep[];
  type: 'plan_updated';
}

/**
 * A runtime error: the preview failed to start or reload, exited with an error, or printed error
 * output while Rein watched it.
 */
export interface PreviewError {
  exit_code?: number | null;
  lines?: string[];
  message: string;
  state?: 'off' | 'stopped' | 'starting' | 'running' | 'reloading' | 'exited' | 'failed';
  type: 'preview_error';
}

/**
 * What the preview printed since the last such event (stdout and stderr merged; at most one event
 * per ~100 ms; long bursts keep their tail).
 */
export interface PreviewOutput {
  lines_dropped?: number;
  text: string;
  type: 'preview_output';
}

/** Validated changes were loaded into the running preview. */
export interface PreviewReloaded {
  generation: number;
  pid?: number | null;
  state?: 'off' | 'stopped' | 'starting' | 'running' | 'reloading' | 'exited' | 'failed';
  strategy: 'restart' | 'signal' | 'self';
  type: 'preview_reloaded';
}

/** The preview (the person's program, run by Rein) started and is ready. */
export interface PreviewStarted {
  command?: string;
  generation: number;
  pid: number;
  state?: 'off' | 'stopped' | 'starting' | 'running' | 'reloading' | 'exited' | 'failed';
  type: 'preview_started';
}

/**
 * The preview is no longer running: stopped by Rein ("stopped") or it exited without an error
 * ("exited").
 */
export interface PreviewStopped {
  exit_code?: number | null;
  reason: string;
  state?: 'stopped' | 'exited';
  type: 'preview_stopped';
}

export interface RepairAttempt {
  attempt: number;
  blockers?: Blocker[];
  max_attempts: number;
  type: 'repair_attempt';
}

/** The person kept or undid a reviewed file, or one hunk of it (``rein/reviewDecide``). */
export interface ReviewDecided {
  decision: 'keep' | 'undo';
  hunk?: number | null;
  path: string;
  run_id: string;
  session_id: string;
  status: 'pending' | 'kept' | 'undone' | 'mixed';
  type: 'review_decided';
}

/**
 * A run in review mode (``approval.write: "review"``) ended and left changed files for the person
 * to keep or undo (``rein/review``).
 */
export interface ReviewPending {
  paths: string[];
  run_id: string;
  session_id: string;
  type: 'review_pending';
}

export interface RunEnd {
  context?: ContextShare | null;
  cost?: number | null;
  reason?: string | null;
  run_id: string;
  status: 'completed' | 'failed' | 'aborted' | 'waiting';
  turns?: number;
  type: 'run_end';
  unverified?: Unverified[];
  usage?: Usage;
}

export interface RunStart {
  prompt?: string | null;
  run_id: string;
  type: 'run_start';
}

export interface SteeringApplied {
  late?: boolean;
  texts: string[];
  type: 'steering_applied';
}

/** An event of a subagent (the ``task`` tool), forwarded so a client can render one box per child. */
export interface SubagentActivity {
  child_id: string;
  event: Record<string, unknown>;
  name: string;
  tool_call_id: string;
  type: 'subagent_activity';
}

export interface TextPart {
  text: string;
  type: 'text';
}

/** Model reasoning. ``signature`` (Anthropic) must be sent back verbatim. */
export interface ThinkingPart {
  redacted?: boolean;
  signature?: string | null;
  thinking: string;
  type: 'thinking';
}

/**
 * A tool call requested by the model. ``parse_error`` is set by a provider when the arguments the
 * model sent were not valid JSON; the loop answers such a call with an error result.
 */
export interface ToolCall {
  arguments?: Record<string, unknown>;
  id: string;
  name: string;
  parse_error?: string | null;
  type: 'tool_call';
}

/**
 * A tool call ended with ``content``, the text the model reads. ``display`` says how to show it:
 * the tool's display kind ("markdown", "diff", "table": a markdown pipe table, "json",
 * "locations": places in files, a path line then one line per place, two spaces and ``L:C: text``:
 * 1-based line and column, the column in UTF-16 code units as LSP and VS Code count it; a place
 * may be followed by its lines, four spaces and ``N| text`` each (a definition's body), which are
 * not places; as ``rein.harness.calls.display.parse_locations`` reads them), "text" for a failed
 * call or a tool that declares none.
 */
export interface ToolCallEnd {
  content: string;
  details?: Record<string, unknown>;
  display?: 'text' | 'markdown' | 'diff' | 'table' | 'json' | 'locations';
  duration_ms?: number;
  is_error: boolean;
  name: string;
  tool_call_id: string;
  type: 'tool_call_end';
}

/**
 * A tool call starts. ``details`` says more about the tool: an MCP server's tool carries
 * ``{"mcpServer": ..., "mcpTool": <its own name>}``.
 */
export interface ToolCallStart {
  arguments?: Record<string, unknown>;
  details?: Record<string, unknown>;
  name: string;
  tool_call_id: string;
  type: 'tool_call_start';
}

/**
 * Progress of a running tool: streamed output or a liveness heartbeat; ``terminal``: the command
 * runs in the ACP client's terminal, ``text`` is its id (``rein acp`` shows the terminal in the
 * tool call).
 */
export interface ToolCallUpdate {
  kind?: 'output' | 'heartbeat' | 'status' | 'terminal';
  name: string;
  text?: string;
  tool_call_id: string;
  type: 'tool_call_update';
}

export interface ToolResultMessage {
  content: string;
  images?: ImagePart[];
  is_error?: boolean;
  role: 'tool';
  tool_call_id: string;
  tool_name: string;
}

/**
 * A tool call failed transiently (a ``TransientToolError``; a refused connection; a timeout or
 * network error of a read tool) and runs again: one event before each retry, at most
 * ``harness.toolRetries`` per call.
 */
export interface ToolRetry {
  attempt: number;
  delay_ms?: number;
  max_attempts: number;
  name: string;
  reason: string;
  tool_call_id: string;
  type: 'tool_retry';
}

/**
 * A model turn ended (its tool calls included). ``usage`` is this turn's alone, ``run_usage`` the
 * run's so far: a counter adds ``usage`` or shows ``run_usage``, never adds ``run_usage``. Both
 * count the turn's subagents (a ``task`` call's child run is part of the turn that called it); a
 * relief summary counts in the turn that needed it.
 */
export interface TurnEnd {
  context?: ContextShare | null;
  cost?: number | null;
  run_cost?: number | null;
  run_usage?: Usage;
  tool_calls?: number;
  turn: number;
  type: 'turn_end';
  usage?: Usage;
}

export interface TurnStart {
  turn: number;
  type: 'turn_start';
}

/**
 * A gate that could not look: the generation it was asked about is not validated (no analyzer, a
 * client without diagnostics, a stale answer).
 */
export interface Unverified {
  gate: string;
  generation: number;
  reason: string;
}

export interface Usage {
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  estimated?: boolean;
  input_tokens?: number;
  output_tokens?: number;
}

export interface UserMessage {
  content: string;
  images?: ImagePart[];
  origin?: string;
  role: 'user';
}

/**
 * The run's idle watchdog stops counting: a gate, an install or a compaction is working (that time
 * is activity, not idleness).
 */
export interface WatchdogPaused {
  reason: string;
  type: 'watchdog_paused';
}

export interface WatchdogResumed {
  reason: string;
  type: 'watchdog_resumed';
}

/** Every event the server sends on `rein/event`. */
export type ReinEvent =
  | AgentStart
  | AgentEnd
  | RunStart
  | RunEnd
  | TurnStart
  | TurnEnd
  | MessageStart
  | MessageDelta
  | MessageEnd
  | ModelRequestEvent
  | ModelRetry
  | ToolCallStart
  | ToolCallUpdate
  | ToolRetry
  | ToolCallEnd
  | SteeringApplied
  | FollowUpStarted
  | Compaction
  | GateStart
  | GateResult
  | GateWaiting
  | CarriedChanges
  | WatchdogPaused
  | WatchdogResumed
  | RepairAttempt
  | AutoRepair
  | PlanState
  | PlanUpdated
  | SubagentActivity
  | PreviewStarted
  | PreviewReloaded
  | PreviewOutput
  | PreviewError
  | PreviewStopped
  | ReviewPending
  | ReviewDecided
  | FilesRestored
  | CheckpointDropped
  | McpServerState
  | McpBudgetWarning
  | HookActivity
  | BudgetExceeded
  | ErrorEvent;

export type ReinEventType = ReinEvent['type'];

/** The `type` of every event, in the order of the schema. */
export const EVENT_TYPES: readonly ReinEventType[] = [
  'agent_start',
  'agent_end',
  'run_start',
  'run_end',
  'turn_start',
  'turn_end',
  'message_start',
  'message_delta',
  'message_end',
  'model_request',
  'model_retry',
  'tool_call_start',
  'tool_call_update',
  'tool_retry',
  'tool_call_end',
  'steering_applied',
  'follow_up_started',
  'compaction',
  'gate_start',
  'gate_result',
  'gate_waiting',
  'carried_changes',
  'watchdog_paused',
  'watchdog_resumed',
  'repair_attempt',
  'auto_repair',
  'plan_state',
  'plan_updated',
  'subagent_activity',
  'preview_started',
  'preview_reloaded',
  'preview_output',
  'preview_error',
  'preview_stopped',
  'review_pending',
  'review_decided',
  'files_restored',
  'checkpoint_dropped',
  'mcp_server_state',
  'mcp_budget_warning',
  'hook',
  'budget_exceeded',
  'error',
];
