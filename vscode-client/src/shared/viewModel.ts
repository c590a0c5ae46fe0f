/**
 * The chat panel's view model: what the webview draws. The extension host
 * builds it from the `rein/event` stream (src/panel/reducer.ts) and sends the
 * items that changed (by `rev`) to the webview.
 *
 * Shared by the extension host and the webview: no imports but types and
 * `@vscode/l10n` (its words: src/shared/l10n.ts).
 */

import * as l10n from '@vscode/l10n';

import type {
  Blocker,
  CheckpointRunInfo,
  FileEntry,
  PlanStep,
  PreviewAction,
  PreviewState,
  ReviewFile,
  RunStatus,
  ToolDisplay,
  Usage,
} from './protocol';

interface ItemBase {
  /** Stable for the item's life; the webview keys its DOM nodes by it. */
  id: string;
  /** Bumped on every change; the host sends an item again when it grows. */
  rev: number;
  runId?: string | undefined;
}

export type UserOrigin = 'prompt' | 'steer' | 'follow_up';

export interface UserItem extends ItemBase {
  kind: 'user';
  text: string;
  origin: UserOrigin;
  /** Steering only: the run took it in (`steering_applied`). */
  applied?: boolean;
  /** Steering only: the subagent (its `task` description) that took it in. */
  subagent?: string | undefined;
  /** Sent by this client as steering or follow-up, not yet taken in by the run. */
  pending?: boolean;
}

export interface AssistantItem extends ItemBase {
  kind: 'assistant';
  text: string;
  thinking: string;
  streaming: boolean;
  stopReason?: string | undefined;
}

export type ToolStatus = 'pending' | 'running' | 'ok' | 'error';

export interface EditInfo {
  path: string;
  generation?: number | undefined;
  hasDiff: boolean;
  created?: boolean | undefined;
}

export interface ToolItem extends ItemBase {
  kind: 'tool';
  toolCallId: string;
  name: string;
  /** One line: the path, command or pattern the call works on. */
  summary: string;
  args: Record<string, unknown>;
  status: ToolStatus;
  durationMs?: number | undefined;
  /** Streamed output (`tool_call_update` kind "output"), tail kept. */
  output: string;
  /** The last heartbeat or status line. */
  statusText?: string | undefined;
  /** The result the model got. */
  content?: string | undefined;
  /** How the result is shown (`tool_call_end.display`); undefined: text. */
  display?: ToolDisplay | undefined;
  edit?: EditInfo | undefined;
  denied?: boolean | undefined;
  /** An MCP tool: the server it belongs to (`details.mcpServer`). */
  mcpServer?: string | undefined;
}

/** `unverified`: the gate could not look (no analyzer, a stale answer); never shown as passed. */
export type GateStatus = 'running' | 'passed' | 'failed' | 'unverified';

export interface GateItem extends ItemBase {
  kind: 'gate';
  gate: string;
  generation?: number | undefined;
  status: GateStatus;
  blockers: Blocker[];
  durationMs?: number | undefined;
  stale: boolean;
  detail?: string | undefined;
}

export interface RepairItem extends ItemBase {
  kind: 'repair';
  attempt: number;
  maxAttempts: number;
  blockers: Blocker[];
}

export interface SubagentItem extends ItemBase {
  kind: 'subagent';
  childId: string;
  name: string;
  status: 'running' | RunStatus;
  turn: number;
  toolCalls: number;
  /** The tool running now, or the last one, as "name summary". */
  currentTool?: string | undefined;
  /** The tail of the child's streamed text. */
  text: string;
  usage: Usage;
  reason?: string | undefined;
  /** The child's model request waits to be retried (its `model_retry`), until its reply starts. */
  retry?: string | undefined;
}

export interface PlanItem extends ItemBase {
  kind: 'plan';
  /** The plan's steps, each with its status (pending when the server left it out). */
  steps: (PlanStep & { status: NonNullable<PlanStep['status']> })[];
  state?: string | undefined;
}

/** The start of a plan step (plan mode): where its work begins in the timeline. */
export interface StepItem extends ItemBase {
  kind: 'step';
  /** 1-based. */
  index: number;
  total: number;
  stepId: string;
  description: string;
}

export interface RunEndItem extends ItemBase {
  kind: 'run_end';
  status: RunStatus;
  reason?: string | undefined;
  /** The run failed on the model's credentials: the row offers Set API Key. */
  keyProblem?: boolean | undefined;
  turns: number;
  repairs: number;
  usage: Usage;
}

export type NoticeLevel = 'info' | 'warning' | 'error';

export interface NoticeItem extends ItemBase {
  kind: 'notice';
  level: NoticeLevel;
  text: string;
}

/** The outcome of the last restore the person started from this run's row. */
export interface RestoreOutcome {
  /** What was asked: the whole run, a turn, or one file. */
  scope: string;
  restoreId: string;
  restored: number;
  alreadyRestored: number;
  skipped: { path: string; reason: string }[];
  /** Not overwritten: the person changed them; "Compare" opens each. */
  conflicts: { path: string; reason: string }[];
}

/**
 * A run that changed files (`rein/checkpoints`), shown in the timeline after
 * the run's last row (or at the end when the timeline has none of its rows:
 * a loaded session, a restore), with its review when it has pending files.
 */
export interface CheckpointItem extends ItemBase {
  kind: 'checkpoint';
  run: CheckpointRunInfo;
  /** The files "Undo this run" restores: this run's and every later run's (they are undone too). */
  undoCount: number;
  /** Per turn: the files "Restore to here" restores. */
  turnCounts: Record<number, number>;
  /** The title of the run a restore restored (kind "restore"). */
  restoredTitle?: string | undefined;
  /** Whether that run was itself a restore (this one undid it). */
  restoredKind?: 'run' | 'restore' | undefined;
  /** A request of this row is in flight ("Undoing…"). */
  busy?: string | undefined;
  outcome?: RestoreOutcome | undefined;
  /** The run's files under review (`rein/review`), when any. */
  review?: ReviewFile[] | undefined;
  /** What the last Keep / Undo refused, and why. */
  refused?: { path: string; hunk?: number | undefined; header?: string | undefined; reason: string }[] | undefined;
  /** The last request of this row that failed. */
  error?: string | undefined;
}

export type { FileEntry };

export type Item =
  | UserItem
  | AssistantItem
  | ToolItem
  | GateItem
  | RepairItem
  | SubagentItem
  | PlanItem
  | StepItem
  | RunEndItem
  | NoticeItem
  | CheckpointItem;

export type AgentStatus = 'idle' | 'running';

export interface Header {
  sessionId: string | null;
  status: AgentStatus;
  /** The last run's outcome, for the header when idle. */
  lastRunStatus?: RunStatus | undefined;
  turn: number;
  /** The active run's usage (sum of its turns so far). */
  runUsage: Usage;
  /** All finished runs of the session plus the active one. */
  sessionUsage: Usage;
  /** The run's tokens, context share and cost (src/panel/cost.ts); '' or absent: nothing yet. */
  costLine?: string | undefined;
  /** The last run ended on its budget: the reason (the panel offers Continue). */
  budgetStop?: string | undefined;
  /** The model's request waits to be retried (a `model_retry`): a short status line, cleared when the reply starts. */
  retry?: string | undefined;
}

export interface PreviewError {
  message: string;
  /** The matching lines with their traceback, or the output tail. */
  lines: string[];
}

/**
 * The preview section: the person's program that Rein starts, reloads with
 * validated changes and watches. One per workspace, not per session.
 */
export interface PreviewView {
  /** Bumped on every change. */
  rev: number;
  /** "unknown" until the first `rein/preview` status or preview event. */
  state: PreviewState | 'unknown';
  command?: string | undefined;
  pid?: number | undefined;
  /** The mutation generation it runs. */
  generation?: number | undefined;
  reloads: number;
  /** The last output lines (bounded). */
  lines: string[];
  /** The last runtime error, until the next start or reload. */
  error?: PreviewError | undefined;
  /** Why it stopped, or what the last request said. */
  detail?: string | undefined;
  /** A start, stop or restart this client asked for and waits on. */
  pending?: Exclude<PreviewAction, 'status'> | undefined;
}

/** One MCP server of the workspace, as the MCP servers section shows it. */
export interface McpServerView {
  name: string;
  /** "settings", "vscode" (.vscode/mcp.json) or "mcp.json". */
  source: string;
  state: 'starting' | 'running' | 'failed' | 'stopped' | 'skipped';
  /** Tools offered (while running; the last count otherwise). */
  tools: number;
  /** Failed: the error; skipped: the reason. */
  error?: string | undefined;
}

/** The MCP servers section (one per workspace). */
export interface McpView {
  /** Bumped on every change. */
  rev: number;
  servers: McpServerView[];
}

/** A rule the person kept with "Always allow" (`rein/approvals`). */
export interface ApprovalRuleView {
  id: string;
  scope: 'session' | 'workspace';
  kind: 'command' | 'write' | 'mcp';
  pattern: string;
}

/** The approval rules section: the workspace's and the shown session's rules. */
export interface ApprovalsView {
  /** Bumped on every change. */
  rev: number;
  rules: ApprovalRuleView[];
}

export interface ViewModel {
  header: Header;
  items: Item[];
  preview: PreviewView;
  mcp: McpView;
  /** Absent in a PanelState's own view; the controller adds it. */
  approvals?: ApprovalsView | undefined;
}

export function totalTokens(usage: Usage): number {
  return (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0);
}

export function addUsage(a: Usage, b: Usage | undefined): Usage {
  if (!b) {
    return { ...a };
  }
  return {
    input_tokens: (a.input_tokens ?? 0) + (b.input_tokens ?? 0),
    output_tokens: (a.output_tokens ?? 0) + (b.output_tokens ?? 0),
    cache_read_tokens: (a.cache_read_tokens ?? 0) + (b.cache_read_tokens ?? 0),
    cache_write_tokens: (a.cache_write_tokens ?? 0) + (b.cache_write_tokens ?? 0),
  };
}

/** A usage from a request's result (camelCase: inputTokens, ...) as the events spell it. */
export function usageFromResult(usage: Record<string, number>): Usage {
  return {
    input_tokens: usage.inputTokens ?? 0,
    output_tokens: usage.outputTokens ?? 0,
    cache_read_tokens: usage.cacheReadTokens ?? 0,
    cache_write_tokens: usage.cacheWriteTokens ?? 0,
  };
}

/** 12345 -> "12.3k", 1234567 -> "1.23M". */
export function formatTokens(n: number): string {
  if (n < 1000) {
    return String(n);
  }
  if (n < 1_000_000) {
    return `${(n / 1000).toFixed(n < 10_000 ? 2 : 1).replace(/\.?0+$/, '')}k`;
  }
  return `${(n / 1_000_000).toFixed(2).replace(/\.?0+$/, '')}M`;
}

/** 840 -> "840 ms", 12_300 -> "12.3 s", 125_000 -> "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) {
    return l10n.t('{0} ms', Math.round(ms));
  }
  if (ms < 60_000) {
    return l10n.t('{0} s', (ms / 1000).toFixed(1).replace(/\.0$/, ''));
  }
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return l10n.t('{0} min {1} s', minutes, seconds);
}

/** "calc.py:13:5" for a blocker with a location (1-based for people). */
export function blockerLocation(blocker: Blocker): string {
  if (!blocker.path) {
    return '';
  }
  if (blocker.line === null || blocker.line === undefined) {
    return blocker.path;
  }
  const column = blocker.character === null || blocker.character === undefined ? '' : `:${blocker.character + 1}`;
  return `${blocker.path}:${blocker.line + 1}${column}`;
}

/** One line saying what a tool call works on. */
export function summarizeArgs(name: string, args: Record<string, unknown>): string {
  const pick = (...keys: string[]): string | undefined => {
    for (const key of keys) {
      const value = args[key];
      if (typeof value === 'string' && value) {
        return value;
      }
    }
    return undefined;
  };
  let summary: string | undefined;
  if (name === 'grep' || name === 'glob') {
    const pattern = pick('pattern', 'query');
    const where = pick('path', 'glob', 'include');
    summary = pattern ? (where ? l10n.t('{0}  in {1}', pattern, where) : pattern) : where;
  } else {
    summary = pick('command', 'path', 'file', 'pattern', 'question', 'description', 'prompt', 'task', 'url');
  }
  if (summary === undefined) {
    const first = Object.values(args).find((v) => typeof v === 'string' || typeof v === 'number');
    summary = first === undefined ? '' : String(first);
  }
  const line = summary.split('\n', 1)[0] ?? '';
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** "12.3k in · 1.1k out" (and "· 4k cached"); "≈" before counts the provider did not report (vscode-lm: Rein's estimate). */
export function usageText(usage: { input_tokens?: number; output_tokens?: number; cache_read_tokens?: number; estimated?: boolean }): string {
  const about = usage.estimated ? '≈' : '';
  const tokensIn = `${about}${formatTokens(usage.input_tokens ?? 0)}`;
  const tokensOut = `${about}${formatTokens(usage.output_tokens ?? 0)}`;
  if (usage.cache_read_tokens) {
    return l10n.t('{0} in · {1} out · {2} cached', tokensIn, tokensOut, formatTokens(usage.cache_read_tokens));
  }
  return l10n.t('{0} in · {1} out', tokensIn, tokensOut);
}
