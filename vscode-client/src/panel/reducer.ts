/**
 * Turns the `rein/event` stream (and stored transcripts) into the panel's
 * view model. Pure: no vscode, no I/O. Its own words (notices, status
 * lines) are in the panel's language (src/shared/l10n.ts); what the server
 * sends (reasons, messages, paths) goes into them as it came. The state is mutated in place for
 * speed (text deltas arrive many times a second); every changed item gets a
 * new `rev`, which is what the host uses to send only what changed.
 */

import * as l10n from '@vscode/l10n';
import type { ContextShare } from '../shared/events.generated';
import type { Message, ReinEvent, RunStatus, ToolDetails, Usage } from '../shared/protocol';
import { stateName } from '../shared/l10n';
import { isKnownEvent } from '../shared/protocol';
import {
  addUsage,
  summarizeArgs,
  type AssistantItem,
  type GateItem,
  type Header,
  type Item,
  type NoticeItem,
  type NoticeLevel,
  type PlanItem,
  type RepairItem,
  type RunEndItem,
  type StepItem,
  type SubagentItem,
  type ToolItem,
  type UserItem,
  type UserOrigin,
  type ViewModel,
  usageFromResult,
} from '../shared/viewModel';
import { costLine, isBudgetStop } from './cost';
import { autoRepairNotice, compactionText, hookNotice } from './notices';
import { PLAN_TOOLS, planPrompt } from './planFlow';
import { McpModel, mcpServerOf } from './mcp';
import { PreviewModel } from './preview';
import { applySubagentEvent, newSubagent } from './subagents';
import { assistantParts, tail } from './text';

const MAX_TOOL_OUTPUT = 20_000;
const SHOWN_ORIGINS: ReadonlySet<string> = new Set(['prompt', 'steer', 'follow_up']);
const PLAN_ENDS: ReadonlySet<string> = new Set(['completed', 'failed', 'waiting', 'idle']);

type RunEndEvent = Extract<ReinEvent, { type: 'run_end' }>;

/** A plan-mode task in progress: its runs end as one. */
interface PlanFlow {
  /** Resumed from waiting: the next prompt is the person's answer. */
  expectReply: boolean;
  turns: number;
  repairs: number;
  usage: Usage;
  /** The last of its runs that ended. */
  last?: RunEndEvent | undefined;
}

/** A provider's credentials error (rein.providers: HTTP 401/403 naming the key's variable). */
export function isKeyProblem(reason: string): boolean {
  return /rejected the credentials|denied access|API key/i.test(reason);
}

export class PanelState {
  private items: Item[] = [];
  private readonly byId = new Map<string, Item>();
  private readonly toolByCallId = new Map<string, ToolItem>();
  private readonly subagents = new Map<string, SubagentItem>();
  private clock = 0;
  private nextId = 0;
  private runId: string | undefined;
  private currentAssistant: AssistantItem | undefined;
  private pendingFollowUp: string | undefined;
  private runPrompt: string | undefined;
  private runUserShown = false;
  private repairsThisRun = 0;
  private finishedUsage: Usage = {};
  /** The run's turns so far (the sum of their `turn_end.usage`). */
  private turnsUsage: Usage = {};
  /** Subagent turns ended since the parent's last turn_end: shown live, then part of that turn's usage. */
  private childUsage: Usage = {};
  /** The run's cost so far (null: a price is unknown) and the context's fill, from turn_end / run_end. */
  private runCost: number | null | undefined;
  private context: ContextShare | null | undefined;
  private plan: PlanItem | undefined;
  /** plan_state before the plan box exists. */
  private planState: string | undefined;
  private planFlow: PlanFlow | undefined;

  readonly header: Header = {
    sessionId: null,
    status: 'idle',
    turn: 0,
    runUsage: {},
    sessionUsage: {},
  };

  /** `preview` and `mcp` are the workspace's, shared by the states of every session the panel shows. */
  constructor(
    sessionId: string | null = null,
    readonly preview: PreviewModel = new PreviewModel(),
    readonly mcp: McpModel = new McpModel(),
  ) {
    this.header.sessionId = sessionId;
  }

  /** The current view model (items in display order). */
  view(): ViewModel {
    return { header: { ...this.header }, items: this.items, preview: this.preview.view(), mcp: this.mcp.view() };
  }

  // ------------------------------------------------------------ items

  private touch<T extends Item>(item: T): T {
    item.rev = ++this.clock;
    return item;
  }

  private add<T extends Item>(item: Omit<T, 'id' | 'rev' | 'runId'> & { id?: string }): T {
    const full = {
      ...item,
      id: item.id ?? `i${++this.nextId}`,
      rev: ++this.clock,
      runId: this.runId,
    } as unknown as T;
    this.items.push(full);
    this.byId.set(full.id, full);
    return full;
  }

  private remove(item: Item): void {
    this.items = this.items.filter((other) => other !== item);
    this.byId.delete(item.id);
    this.clock++;
  }

  private bumpHeader(): void {
    this.clock++;
  }

  find(id: string): Item | undefined {
    return this.byId.get(id);
  }

  findTool(toolCallId: string): ToolItem | undefined {
    return this.toolByCallId.get(toolCallId);
  }

  /** A notice of the client's own (a seq gap, a failed request, ...). */
  notice(level: NoticeLevel, text: string): void {
    this.add<NoticeItem>({ kind: 'notice', level, text });
  }

  /** Marks the agent busy (a prompt was sent) or idle before events say so. */
  setRunning(running: boolean): void {
    this.header.status = running ? 'running' : 'idle';
    this.bumpHeader();
  }

  /** Steering or a follow-up the person sent: shown at once, marked pending. */
  queueUser(origin: 'steer' | 'follow_up', text: string): void {
    this.add<UserItem>({ kind: 'user', text, origin, pending: true });
  }

  /** Whether the run's end was already shown (from events). */
  hasRunEnd(runId: string): boolean {
    return this.items.some((item) => item.kind === 'run_end' && item.runId === runId);
  }

  /** Moves a pending item of ours to the end: the run took it in just now. */
  private takePending(origin: UserOrigin, text: string): UserItem | undefined {
    const item = this.items.find(
      (other): other is UserItem =>
        other.kind === 'user' && other.pending === true && other.origin === origin && other.text.trim() === text.trim(),
    );
    if (!item) {
      return undefined;
    }
    this.items = this.items.filter((other) => other !== item);
    this.items.push(item);
    item.pending = false;
    item.runId = this.runId;
    return this.touch(item);
  }

  // ------------------------------------------------------------ events

  /** Applies one event. Unknown event types are ignored (returns false). */
  apply(event: { type: string }): boolean {
    if (!isKnownEvent(event)) {
      return false;
    }
    this.applyKnown(event);
    return true;
  }

  private applyKnown(event: ReinEvent): void {
    switch (event.type) {
      case 'agent_start':
        this.header.status = 'running';
        this.bumpHeader();
        break;
      case 'agent_end':
        if (this.planFlow) {
          break; // between the runs of a plan: still busy
        }
        this.header.status = 'idle';
        this.header.lastRunStatus = event.status;
        this.bumpHeader();
        break;
      case 'run_start':
        this.onRunStart(event.run_id, event.prompt ?? undefined);
        break;
      case 'run_end':
        this.onRunEnd(event);
        break;
      case 'turn_start':
        this.ensureRunUser();
        this.header.turn = event.turn;
        this.bumpHeader();
        break;
      case 'turn_end':
        this.clearRetry(); // a steer ended the wait: the turn ends with no reply
        // `usage` is this turn's alone, its subagents' tokens included: the
        // counter adds it (never `run_usage`, the run so far), and drops the
        // children's turns it showed live meanwhile.
        this.turnsUsage = addUsage(this.turnsUsage, event.usage);
        this.childUsage = {};
        this.runCost = event.run_cost;
        this.context = event.context ?? this.context;
        this.showRunUsage();
        break;
      case 'message_start':
        if (event.role === 'assistant') {
          this.clearRetry();
          this.currentAssistant = this.add<AssistantItem>({
            kind: 'assistant',
            text: '',
            thinking: '',
            streaming: true,
          });
        }
        break;
      case 'message_delta':
        this.onDelta(event);
        break;
      case 'message_end':
        this.onMessageEnd(event.message);
        break;
      case 'tool_call_start': {
        if (PLAN_TOOLS.has(event.name)) {
          break;
        }
        const tool = this.ensureTool(event.tool_call_id, event.name);
        tool.mcpServer = mcpServerOf(event.name, event.details);
        tool.args = event.arguments ?? {};
        tool.summary = summarizeArgs(event.name, tool.args);
        tool.status = 'running';
        this.touch(tool);
        break;
      }
      case 'tool_call_update': {
        if (PLAN_TOOLS.has(event.name)) {
          break;
        }
        const tool = this.ensureTool(event.tool_call_id, event.name);
        if (event.kind === 'output') {
          tool.output = tail(tool.output + (event.text ?? ''), MAX_TOOL_OUTPUT);
        } else {
          tool.statusText = event.text;
        }
        this.touch(tool);
        break;
      }
      case 'tool_retry': {
        // A transient failure: the call runs again (its one end comes later).
        const tool = this.ensureTool(event.tool_call_id, event.name);
        tool.statusText = l10n.t('retry {0} of {1}: {2}', event.attempt, event.max_attempts, event.reason);
        this.touch(tool);
        break;
      }
      case 'model_retry':
        // The request failed before any reply and waits: a status line until the reply starts.
        this.header.retry = l10n.t(
          'Model retry {0} of {1} in {2} s: {3}',
          event.attempt,
          event.max_attempts,
          Number(event.wait_s.toPrecision(3)),
          event.reason,
        );
        this.bumpHeader();
        break;
      case 'tool_call_end':
        if (!PLAN_TOOLS.has(event.name) || event.is_error) {
          this.onToolEnd(event); // a plan tool shows only when it failed
        }
        break;
      case 'steering_applied':
        for (const item of this.items) {
          if (item.kind === 'user' && item.origin === 'steer' && !item.applied) {
            item.applied = true;
            this.touch(item);
          }
        }
        break;
      case 'follow_up_started':
        this.pendingFollowUp = event.text;
        break;
      case 'compaction':
        this.notice('info', compactionText(event));
        break;
      case 'error':
        if (event.where === 'run' && event.fatal) {
          break; // the reason a run failed: its run_end row says it, once
        }
        this.notice(
          event.fatal ? 'error' : 'warning',
          event.where ? `${event.where}: ${event.message}` : event.message,
        );
        break;
      case 'gate_start':
        this.add<GateItem>({
          kind: 'gate',
          gate: event.gate,
          generation: event.generation,
          status: 'running',
          blockers: [],
          stale: false,
        });
        break;
      case 'gate_result':
        this.onGateResult(event);
        break;
      case 'gate_waiting':
        // The language server shows the wait as a $/progress of its own.
        break;
      case 'repair_attempt':
        this.repairsThisRun = Math.max(this.repairsThisRun, event.attempt);
        this.add<RepairItem>({
          kind: 'repair',
          attempt: event.attempt,
          maxAttempts: event.max_attempts,
          blockers: event.blockers ?? [],
        });
        break;
      case 'subagent_activity':
        if (typeof event.event.type === 'string') {
          this.onSubagent(event.child_id, event.name, { ...event.event, type: event.event.type });
          if (event.event.type === 'turn_end') {
            // Live while the child runs; the parent's turn_end will hold it.
            this.childUsage = addUsage(this.childUsage, (event.event as { usage?: Usage }).usage);
            this.showRunUsage();
          }
        }
        break;
      case 'plan_updated': {
        const plan = this.ensurePlan(event.reason === 'planned');
        plan.steps = event.steps.map((step) => ({ ...step, status: step.status ?? 'pending' }));
        this.touch(plan);
        break;
      }
      case 'plan_state':
        this.onPlanState(event.state, event.previous);
        break;
      case 'preview_started':
      case 'preview_reloaded':
      case 'preview_output':
      case 'preview_error':
      case 'preview_stopped':
        this.preview.apply(event);
        break;
      case 'mcp_server_state':
        this.mcp.apply(event);
        break;
      case 'carried_changes':
        this.notice(
          'info',
          event.paths.length === 1
            ? l10n.t('Validating 1 file an earlier run changed and did not validate: {0}', event.paths.join(', '))
            : l10n.t('Validating {0} files an earlier run changed and did not validate: {1}', event.paths.length, event.paths.join(', ')),
        );
        break;
      case 'checkpoint_dropped':
        // The storage limits dropped an older run's content (checkpoints.maxMb / maxAgeDays).
        this.notice('info', l10n.t("An older run's checkpoint was dropped ({0}): it can no longer be undone.", event.reason));
        break;
      case 'model_request':
        // A wire dump (the host turned Agent.wire_dump on): diagnostics, not shown.
        break;
      case 'review_pending':
      case 'review_decided':
        // The checkpoint rows show these (the controller loads rein/checkpoints and rein/review again).
        break;
      case 'watchdog_paused':
      case 'watchdog_resumed':
        // Bookkeeping of the idle watchdog (gate, install and compaction time is activity).
        break;
      case 'auto_repair': {
        const notice = autoRepairNotice(event);
        this.notice(notice.level, notice.text);
        break;
      }
      case 'files_restored': {
        const count = (event.restored ?? []).length;
        const kept = event.conflicts ?? [];
        const skipped = event.skipped ?? [];
        // Each clause wraps the sentence so far ({0}): a translation may order them as its language needs.
        let text =
          event.turn != null
            ? l10n.t('Restored {0} file(s) to before turn {1} of run {2}', count, event.turn, event.run_id)
            : l10n.t('Restored {0} file(s) to before run {1}', count, event.run_id);
        if (kept.length) {
          text = l10n.t('{0}; kept your changes to {1}', text, kept.join(', '));
        }
        if (skipped.length) {
          text = l10n.t('{0}; skipped {1}', text, skipped.join(', '));
        }
        this.notice(kept.length || skipped.length ? 'warning' : 'info', text);
        break;
      }
      case 'mcp_budget_warning':
        this.notice(
          'warning',
          l10n.t(
            "The MCP tools' definitions take {0} tokens ({1}% of the {2}-token window): {3} of {4} tools are offered (rein.mcp.maxToolShare; set includeTools or rein.mcp.lazyTools).",
            event.tokens,
            Math.round(event.share * 100),
            event.window,
            event.offered,
            event.total,
          ),
        );
        break;
      case 'hook': {
        const notice = hookNotice(event);
        this.notice(notice.level, notice.text);
        break;
      }
      case 'budget_exceeded':
        // The run_end that follows fails with the reason; the header offers Continue.
        break;
      default:
        // A new event in the server's schema fails to compile here until it is handled.
        event satisfies never;
    }
  }

  /** The retry's status line ends: the reply started, the turn or the run ended. */
  private clearRetry(): void {
    if (this.header.retry !== undefined) {
      this.header.retry = undefined;
      this.bumpHeader();
    }
  }

  /** The header's counters: the run's turns, its children's turns since, the session's runs. */
  private showRunUsage(): void {
    this.header.runUsage = addUsage(this.turnsUsage, this.childUsage);
    this.header.sessionUsage = addUsage(this.finishedUsage, this.header.runUsage);
    this.header.costLine = costLine(this.header.runUsage, this.context, this.runCost);
    this.bumpHeader();
  }

  private onRunStart(runId: string, prompt: string | undefined): void {
    this.runId = runId;
    this.header.status = 'running';
    this.header.turn = 0;
    this.header.runUsage = {};
    this.turnsUsage = {};
    this.childUsage = {};
    this.runCost = undefined;
    this.header.budgetStop = undefined;
    this.repairsThisRun = 0;
    this.currentAssistant = undefined;
    this.runUserShown = false;
    // The user message comes as message_end (with its origin); run_start's
    // prompt is only a fallback (it is the first user message, which for a
    // new session is the bootstrap context).
    this.runPrompt = prompt;
    this.bumpHeader();
  }

  /** Before the first turn: show run_start's prompt if no user message came. */
  private ensureRunUser(): void {
    if (this.runUserShown || this.runId === undefined) {
      return;
    }
    if (this.planFlow) {
      this.runUserShown = true;
      if (this.runPrompt) {
        this.showPlanPrompt(this.runPrompt);
      }
      return;
    }
    const text = this.pendingFollowUp ?? this.runPrompt;
    const origin: UserOrigin = this.pendingFollowUp !== undefined ? 'follow_up' : 'prompt';
    this.pendingFollowUp = undefined;
    if (text && !text.startsWith('Context for this session')) {
      if (!(origin === 'follow_up' && this.takePending('follow_up', text))) {
        this.add<UserItem>({ kind: 'user', text, origin });
      }
    }
    this.runUserShown = true;
  }

  private onRunEnd(event: RunEndEvent): void {
    this.clearRetry();
    for (const item of event.unverified ?? []) {
      this.notice('warning', l10n.t('Not verified: generation {0} ({1}: {2})', item.generation, item.gate, item.reason));
    }
    const usage = event.usage ?? this.header.runUsage;
    this.turnsUsage = {};
    this.childUsage = {};
    this.finishedUsage = addUsage(this.finishedUsage, usage);
    this.header.runUsage = usage;
    this.header.sessionUsage = { ...this.finishedUsage };
    this.runCost = event.cost;
    this.context = event.context ?? this.context;
    this.header.costLine = costLine(usage, this.context, this.runCost);
    this.header.budgetStop = isBudgetStop(event.status, event.reason) ? (event.reason ?? undefined) : undefined;
    if (!this.planFlow) {
      this.header.lastRunStatus = event.status;
      this.header.status = 'idle';
    }
    if (this.currentAssistant?.streaming) {
      this.currentAssistant.streaming = false;
      this.touch(this.currentAssistant);
    }
    for (const tool of this.toolByCallId.values()) {
      if (tool.status === 'running' || tool.status === 'pending') {
        tool.status = 'error';
        tool.statusText = l10n.t('ended with the run ({0})', stateName(event.status));
        this.touch(tool);
      }
    }
    const turns = event.turns ?? this.header.turn;
    const flow = this.planFlow;
    if (flow) {
      // One of the plan's runs (planner, a step, the summary): the plan ends them all.
      flow.turns += turns;
      flow.repairs += this.repairsThisRun;
      flow.usage = addUsage(flow.usage, usage);
      flow.last = event;
      if (event.status === 'aborted') {
        this.endPlanFlow('aborted');
      }
    } else {
      this.add<RunEndItem>({
        kind: 'run_end',
        status: event.status,
        reason: event.reason ?? undefined,
        keyProblem: event.status === 'failed' && isKeyProblem(event.reason ?? ''),
        turns,
        repairs: this.repairsThisRun,
        usage,
      });
    }
    this.runId = undefined;
  }

  private onPlanState(state: string, previous: string | undefined): void {
    if (state === 'planning') {
      this.plan = undefined; // a new task: its plan gets a box of its own
      this.planFlow ??= { expectReply: false, turns: 0, repairs: 0, usage: {} };
    } else if (state === 'executing' && previous === 'waiting') {
      this.planFlow ??= { expectReply: true, turns: 0, repairs: 0, usage: {} };
    }
    this.planState = state;
    if (this.plan) {
      this.plan.state = state;
      this.touch(this.plan);
    }
    if (PLAN_ENDS.has(state)) {
      this.endPlanFlow(state);
    }
  }

  /** The plan ended (or its run was aborted): one end item for all its runs. */
  private endPlanFlow(state: string): void {
    const flow = this.planFlow;
    this.planFlow = undefined;
    const last = flow?.last;
    if (!flow || !last) {
      return;
    }
    const status: RunStatus = state === 'completed' || state === 'failed' || state === 'waiting' || state === 'aborted' ? state : last.status;
    const end = this.add<RunEndItem>({
      kind: 'run_end',
      status,
      reason: status === 'completed' ? undefined : (last.reason ?? undefined),
      turns: flow.turns,
      repairs: flow.repairs,
      usage: flow.usage,
    });
    end.runId = last.run_id;
    this.header.status = 'idle';
    this.header.lastRunStatus = status;
    this.header.runUsage = flow.usage;
    this.bumpHeader();
  }

  /** A user message of the plan-act flow: the task, a step's start, an answer, or nothing to show. */
  private showPlanPrompt(content: string): void {
    const prompt = planPrompt(content);
    const flow = this.planFlow;
    if (prompt.kind === 'step') {
      this.add<StepItem>({
        kind: 'step',
        index: prompt.index,
        total: prompt.total,
        stepId: prompt.stepId,
        description: prompt.description,
      });
      return;
    }
    const shown = prompt.kind === 'task' || prompt.kind === 'reply' || flow?.expectReply === true;
    if (flow) {
      flow.expectReply = false;
    }
    if (shown && prompt.text.trim()) {
      this.add<UserItem>({ kind: 'user', text: prompt.text, origin: 'prompt' });
    }
  }

  private onDelta(event: Extract<ReinEvent, { type: 'message_delta' }>): void {
    if (event.kind === 'tool_call') {
      if (event.tool_call_id && !PLAN_TOOLS.has(event.tool_name ?? '')) {
        this.ensureTool(event.tool_call_id, event.tool_name ?? 'tool');
      }
      return;
    }
    let item = this.currentAssistant;
    if (!item || !item.streaming) {
      item = this.add<AssistantItem>({ kind: 'assistant', text: '', thinking: '', streaming: true });
      this.currentAssistant = item;
    }
    if (event.kind === 'text') {
      item.text += event.delta;
    } else {
      item.thinking += event.delta;
    }
    this.touch(item);
  }

  private onMessageEnd(message: Message): void {
    if (message.role === 'assistant') {
      const { text, thinking } = assistantParts(message);
      const item = this.currentAssistant?.streaming ? this.currentAssistant : undefined;
      this.currentAssistant = undefined;
      if (!text.trim() && !thinking.trim()) {
        if (item) {
          this.remove(item);
        }
      } else if (item) {
        item.text = text;
        item.thinking = thinking;
        item.streaming = false;
        item.stopReason = message.stop_reason;
        this.touch(item);
      } else {
        this.add<AssistantItem>({
          kind: 'assistant',
          text,
          thinking,
          streaming: false,
          stopReason: message.stop_reason,
        });
      }
      for (const part of message.content ?? []) {
        if (part.type === 'tool_call' && !PLAN_TOOLS.has(part.name)) {
          const tool = this.ensureTool(part.id, part.name);
          if (part.arguments && Object.keys(tool.args).length === 0) {
            tool.args = part.arguments;
            tool.summary = summarizeArgs(part.name, part.arguments);
            this.touch(tool);
          }
        }
      }
    } else if (message.role === 'user') {
      const origin = message.origin ?? 'prompt';
      if (!SHOWN_ORIGINS.has(origin)) {
        return;
      }
      if (origin === 'steer') {
        if (!this.takePending('steer', message.content)) {
          this.add<UserItem>({ kind: 'user', text: message.content, origin: 'steer' });
        }
        return;
      }
      if (this.runUserShown) {
        return;
      }
      this.runUserShown = true;
      if (this.planFlow && origin === 'prompt') {
        this.showPlanPrompt(message.content);
        return;
      }
      const kind: UserOrigin = origin === 'follow_up' || this.pendingFollowUp !== undefined ? 'follow_up' : 'prompt';
      this.pendingFollowUp = undefined;
      if (kind === 'follow_up' && this.takePending('follow_up', message.content)) {
        return;
      }
      this.add<UserItem>({ kind: 'user', text: message.content, origin: kind });
    }
    // Tool result messages: tool_call_end already carried the result.
  }

  private ensureTool(toolCallId: string, name: string): ToolItem {
    let tool = this.toolByCallId.get(toolCallId);
    if (!tool) {
      tool = this.add<ToolItem>({
        kind: 'tool',
        toolCallId,
        name,
        summary: '',
        args: {},
        status: 'pending',
        output: '',
      });
      this.toolByCallId.set(toolCallId, tool);
    }
    return tool;
  }

  private onToolEnd(event: Extract<ReinEvent, { type: 'tool_call_end' }>): void {
    const tool = this.ensureTool(event.tool_call_id, event.name);
    tool.status = event.is_error ? 'error' : 'ok';
    tool.durationMs = event.duration_ms;
    tool.content = event.content;
    tool.display = event.display && event.display !== 'text' ? event.display : undefined;
    tool.statusText = undefined;
    const details: ToolDetails = event.details ?? {};
    tool.denied = details.denied === true;
    // A change (edit_file: a diff; write_file: created or not), not a read.
    const changed = typeof details.diff === 'string' || typeof details.created === 'boolean';
    if (!event.is_error && changed && typeof details.path === 'string') {
      tool.edit = {
        path: details.path,
        generation: typeof details.generation === 'number' ? details.generation : undefined,
        hasDiff: typeof details.diff === 'string' && details.diff.length > 0,
        created: typeof details.created === 'boolean' ? details.created : undefined,
      };
    }
    this.touch(tool);
  }

  private onGateResult(event: Extract<ReinEvent, { type: 'gate_result' }>): void {
    let gate: GateItem | undefined;
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item?.kind === 'gate' && item.gate === event.gate && item.status === 'running') {
        gate = item;
        break;
      }
    }
    gate ??= this.add<GateItem>({
      kind: 'gate',
      gate: event.gate,
      status: 'running',
      blockers: [],
      stale: false,
    });
    gate.status = event.status === 'unverified' ? 'unverified' : event.passed ? 'passed' : 'failed';
    gate.blockers = event.blockers ?? [];
    gate.durationMs = event.duration_ms;
    gate.stale = event.stale === true;
    gate.detail = event.detail || undefined;
    this.touch(gate);
  }

  private onSubagent(childId: string, name: string, inner: { type: string } & Record<string, unknown>): void {
    let box = this.subagents.get(childId);
    if (!box) {
      box = this.add<SubagentItem>(newSubagent(childId, name));
      this.subagents.set(childId, box);
    }
    if (applySubagentEvent(box, inner)) {
      this.touch(box);
    }
    if (inner.type === 'steering_applied' && Array.isArray(inner.texts)) {
      // The person's steer went to the running subagent, not the agent.
      for (const text of inner.texts) {
        if (typeof text === 'string') {
          this.steerTakenBy(name, text);
        }
      }
    }
  }

  /** A steer a subagent took in: ours (pending) or another client's. */
  private steerTakenBy(subagent: string, text: string): void {
    const item =
      this.takePending('steer', text) ?? this.add<UserItem>({ kind: 'user', text, origin: 'steer' });
    item.applied = true;
    item.subagent = subagent;
    this.touch(item);
  }

  /** The plan box, updated in place; a fresh plan ("planned") gets a new box. */
  private ensurePlan(fresh = false): PlanItem {
    if (!this.plan || (fresh && this.plan.steps.length > 0)) {
      const state = this.planState && !PLAN_ENDS.has(this.planState) ? this.planState : undefined;
      this.plan = this.add<PlanItem>({ kind: 'plan', steps: [], state });
    }
    return this.plan;
  }

  // -------------------------------------------------------- transcripts

  /**
   * Rebuilds the items of a stored session from its messages. `usage` is the
   * session's total as the server keeps it (`rein/session`): it counts what
   * the transcript cannot show (subagents, summaries); without it the
   * assistant messages' usage is summed.
   */
  static fromTranscript(
    sessionId: string,
    messages: readonly Message[],
    preview?: PreviewModel,
    usage?: Record<string, number>,
    mcp?: McpModel,
  ): PanelState {
    const state = new PanelState(sessionId, preview, mcp);
    for (const message of messages) {
      if (message.role === 'tool') {
        if (PLAN_TOOLS.has(message.tool_name) && !message.is_error) {
          continue;
        }
        const tool = state.ensureTool(message.tool_call_id, message.tool_name);
        tool.mcpServer = mcpServerOf(message.tool_name);
        tool.status = message.is_error ? 'error' : 'ok';
        tool.content = message.content;
        state.touch(tool);
        continue;
      }
      if (message.role === 'user') {
        state.runUserShown = false;
        // A plan-mode session's transcript is its executor's: step prompts, answers.
        const plan = (message.origin ?? 'prompt') === 'prompt' ? planPrompt(message.content).kind : undefined;
        if (plan === 'step' || plan === 'task' || plan === 'reply') {
          state.showPlanPrompt(message.content);
        } else {
          state.onMessageEnd(message);
        }
        continue;
      }
      state.onMessageEnd(message);
      state.header.sessionUsage = addUsage(state.header.sessionUsage, message.usage);
    }
    if (usage) {
      state.header.sessionUsage = usageFromResult(usage);
    }
    state.finishedUsage = { ...state.header.sessionUsage };
    return state;
  }
}
