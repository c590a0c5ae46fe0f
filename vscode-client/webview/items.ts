/** One DOM element per view-model item (src/shared/viewModel.ts). */

import { argsText } from '../src/shared/args';
import { blockLabel, splitAttachments } from '../src/shared/attachmentBlocks';
import type { Blocker } from '../src/shared/protocol';
import {
  blockerLocation,
  formatDuration,
  formatTokens,
  totalTokens,
  type AssistantItem,
  type GateItem,
  type Item,
  type NoticeItem,
  type PlanItem,
  type RepairItem,
  type RunEndItem,
  type StepItem,
  type SubagentItem,
  type ToolItem,
  type UserItem,
} from '../src/shared/viewModel';
import { renderCheckpoint } from './checkpoints';
import { diffPre, h, icon, inline, markdown, pre, severityName, usageText } from './dom';
import type { IconName } from './icons';

function renderUser(item: UserItem): HTMLElement {
  const label =
    item.origin === 'steer' ? 'Steering' : item.origin === 'follow_up' ? 'Follow-up' : 'You';
  const applied = item.subagent ? `applied · to ${item.subagent}` : 'applied';
  const state = item.pending ? 'queued' : item.origin === 'steer' && item.applied ? applied : '';
  return h(
    'div',
    { class: `item user origin-${item.origin}${item.pending ? ' pending' : ''}` },
    h('div', { class: 'who' }, label, state && h('span', { class: 'badge' }, state)),
    ...userBody(item.text),
  );
}

/** The prompt text, then each attachment folded under its name (`@src/calc.py`). */
function userBody(content: string): HTMLElement[] {
  const { text, blocks } = splitAttachments(content);
  return [
    h('div', { class: 'user-text' }, text),
    ...blocks.map((block, index) =>
      h(
        'details',
        { class: 'user-attachment', 'data-key': `attachment-${index}` },
        h('summary', {}, icon('chevron', 'chevron'), `@${blockLabel(block)}`),
        pre(block.body, 'attachment-body'),
      ),
    ),
  ];
}

function renderAssistant(item: AssistantItem): HTMLElement {
  const el = h('div', { class: `item assistant${item.streaming ? ' streaming' : ''}` });
  if (item.thinking.trim()) {
    el.append(
      h(
        'details',
        { class: 'thinking', 'data-key': 'thinking' },
        h('summary', {}, icon('chevron', 'chevron'), 'Thinking'),
        h('div', { class: 'thinking-text' }, item.thinking),
      ),
    );
  }
  if (item.text) {
    el.append(markdown(item.text));
  } else if (item.streaming) {
    el.append(h('div', { class: 'md typing' }, icon('spinner', 'spin')));
  }
  if (item.stopReason === 'aborted' || item.stopReason === 'length' || item.stopReason === 'error') {
    el.append(h('div', { class: 'stop-reason' }, `stopped: ${item.stopReason}`));
  }
  return el;
}

const TOOL_ICON: Record<ToolItem['status'], IconName> = {
  pending: 'dots',
  running: 'spinner',
  ok: 'check',
  error: 'error',
};

function renderTool(item: ToolItem): HTMLElement {
  const summary = h(
    'summary',
    {},
    icon('chevron', 'chevron'),
    icon(TOOL_ICON[item.status], item.status === 'running' ? 'spin status' : 'status'),
    h('span', { class: 'tool-name' }, item.name),
    item.mcpServer ? h('span', { class: 'badge tool-server', title: `MCP server ${item.mcpServer}` }, item.mcpServer) : null,
    h('span', { class: 'tool-summary', title: item.summary }, item.summary),
  );
  if (item.edit) {
    const label = item.edit.created ? 'new file' : 'diff';
    summary.append(
      h(
        'a',
        { class: 'diff-link', 'data-diff': item.id, title: `Open the diff of this change to ${item.edit.path}` },
        icon('diff'),
        label,
      ),
    );
  }
  if (item.denied) {
    summary.append(h('span', { class: 'badge denied' }, 'denied'));
  }
  const time =
    item.durationMs !== undefined
      ? formatDuration(item.durationMs)
      : item.status === 'running'
        ? item.statusText ?? 'running'
        : item.status === 'pending'
          ? 'preparing'
          : '';
  summary.append(h('span', { class: 'tool-time' }, time));

  const body = h('div', { class: 'tool-body' });
  if (Object.keys(item.args).length) {
    body.append(h('div', { class: 'label' }, 'Arguments'), pre(argsText(item.args), 'args'));
  }
  if (item.output) {
    body.append(h('div', { class: 'label' }, 'Output'), pre(item.output, 'output'));
  }
  if (item.content !== undefined) {
    const result = /^@@ .* @@/m.test(item.content) ? diffPre(item.content, 'result') : pre(item.content, 'result');
    body.append(h('div', { class: 'label' }, item.status === 'error' ? 'Error' : 'Result'), result);
  }
  return h(
    'details',
    { class: `item tool status-${item.status}`, 'data-key': 'tool' },
    summary,
    body,
  );
}

function renderBlockers(blockers: readonly Blocker[]): HTMLElement {
  const list = h('ul', { class: 'blockers' });
  for (const blocker of blockers.slice(0, 50)) {
    const where = blockerLocation(blocker);
    const location = where
      ? h(
          'a',
          {
            class: 'location',
            'data-path': blocker.path ?? '',
            'data-line': blocker.line === null || blocker.line === undefined ? undefined : String(blocker.line),
            'data-char': blocker.character === null || blocker.character === undefined ? undefined : String(blocker.character),
          },
          where,
        )
      : null;
    const code = blocker.code !== null && blocker.code !== undefined ? h('span', { class: 'code' }, blocker.code) : null;
    const sev = severityName(blocker.severity);
    list.append(
      h(
        'li',
        { class: `blocker sev-${sev}` },
        h('div', { class: 'blocker-line' }, icon(sev === 'warning' ? 'warning' : 'error', 'sev'), location, code, h('span', { class: 'message' }, blocker.message)),
        blocker.context ? pre(blocker.context, 'context') : null,
      ),
    );
  }
  if (blockers.length > 50) {
    list.append(h('li', { class: 'more' }, `… and ${blockers.length - 50} more`));
  }
  return list;
}

function gateIcon(status: GateItem['status']): IconName {
  switch (status) {
    case 'running':
      return 'spinner';
    case 'passed':
      return 'pass';
    case 'unverified':
      return 'warning';
    default:
      return 'fail';
  }
}

function renderGate(item: GateItem): HTMLElement {
  const result =
    item.status === 'running'
      ? 'checking…'
      : item.status === 'passed'
        ? 'passed'
        : item.status === 'unverified'
          ? 'unverified'
          : `${item.blockers.length} blocker${item.blockers.length === 1 ? '' : 's'}`;
  const head = h(
    'div',
    { class: 'gate-head' },
    icon(gateIcon(item.status), item.status === 'running' ? 'spin' : ''),
    h('span', { class: 'gate-title' }, 'Gate ', h('strong', {}, item.gate)),
    h('span', { class: `gate-result ${item.status}` }, result),
    item.stale ? h('span', { class: 'badge stale', title: 'The diagnostics may be older than this generation' }, 'stale') : null,
    item.durationMs !== undefined ? h('span', { class: 'muted right nowrap' }, formatDuration(item.durationMs)) : null,
  );
  const about = [item.generation !== undefined ? `generation ${item.generation}` : '', item.detail ?? ''].filter(Boolean).join(' · ');
  return h(
    'div',
    { class: `item gate ${item.status}` },
    head,
    about ? h('div', { class: 'gate-detail' }, about) : null,
    item.blockers.length ? renderBlockers(item.blockers) : null,
  );
}

function renderRepair(item: RepairItem): HTMLElement {
  const dots = h('span', { class: 'attempts', title: `attempt ${item.attempt} of ${item.maxAttempts}` });
  for (let n = 1; n <= item.maxAttempts; n++) {
    dots.append(h('span', { class: `dot${n <= item.attempt ? ' used' : ''}` }));
  }
  const count = item.blockers.length;
  return h(
    'div',
    { class: 'item repair' },
    h(
      'div',
      { class: 'repair-head' },
      icon('wrench'),
      h('span', { class: 'repair-title' }, `Repair attempt ${item.attempt} of ${item.maxAttempts}`),
      dots,
      h('span', { class: 'muted right', title: 'sent back to the model to fix' }, `${count} blocker${count === 1 ? '' : 's'}`),
    ),
  );
}

function renderSubagent(item: SubagentItem): HTMLElement {
  const running = item.status === 'running';
  const meta = [
    item.turn ? `turn ${item.turn}` : '',
    `${item.toolCalls} tool call${item.toolCalls === 1 ? '' : 's'}`,
    totalTokens(item.usage) ? `${formatTokens(totalTokens(item.usage))} tokens` : '',
  ].filter(Boolean);
  return h(
    'div',
    { class: `item subagent ${item.status}` },
    h(
      'div',
      { class: 'sub-head' },
      icon(running ? 'spinner' : item.status === 'completed' ? 'pass' : 'fail', running ? 'spin' : ''),
      h('span', { class: 'sub-title' }, 'Subagent ', h('strong', {}, item.name)),
      h('span', { class: `badge status-${item.status} right` }, item.status),
    ),
    h('div', { class: 'sub-meta' }, meta.join(' · ')),
    item.currentTool ? h('div', { class: 'sub-tool' }, icon('tool'), h('span', {}, item.currentTool)) : null,
    item.text ? h('div', { class: 'sub-text' }, item.text) : null,
    item.reason ? h('div', { class: 'sub-reason' }, item.reason) : null,
  );
}

const STEP_ICON: Record<PlanItem['steps'][number]['status'], IconName> = {
  pending: 'circle',
  running: 'spinner',
  done: 'pass',
  failed: 'fail',
};

function renderPlan(item: PlanItem): HTMLElement {
  const done = item.steps.filter((s) => s.status === 'done').length;
  const list = h('ol', { class: 'steps' });
  for (const step of item.steps) {
    list.append(
      h(
        'li',
        { class: `step ${step.status}` },
        icon(STEP_ICON[step.status], step.status === 'running' ? 'spin' : ''),
        h('span', {}, step.description, step.summary ? h('span', { class: 'step-summary' }, ` — ${step.summary}`) : null),
      ),
    );
  }
  return h(
    'div',
    { class: 'item plan' },
    h(
      'div',
      { class: 'plan-head' },
      icon('list'),
      h('span', { class: 'plan-title' }, 'Plan'),
      item.state ? h('span', { class: 'badge' }, item.state) : null,
      h('span', { class: 'muted right' }, `${done} of ${item.steps.length} done`),
    ),
    list,
  );
}

/** Where a plan step's work starts (plan mode). */
function renderStep(item: StepItem): HTMLElement {
  return h(
    'div',
    { class: 'item step-start', role: 'separator', 'aria-label': `Step ${item.index} of ${item.total}` },
    h('span', { class: 'step-label' }, `Step ${item.index} of ${item.total}`),
    h('span', { class: 'step-description', title: item.description }, item.description),
  );
}

function renderRunEnd(item: RunEndItem): HTMLElement {
  const parts = [`${item.turns} turn${item.turns === 1 ? '' : 's'}`];
  if (item.repairs) {
    parts.push(`${item.repairs} repair${item.repairs === 1 ? '' : 's'}`);
  }
  parts.push(usageText(item.usage));
  return h(
    'div',
    { class: `item run-end ${item.status}` },
    h(
      'div',
      { class: 'run-head' },
      icon(item.status === 'completed' ? 'pass' : item.status === 'waiting' ? 'dots' : 'fail'),
      h('span', { class: 'run-title' }, `Run ${item.status}`),
    ),
    h('div', { class: 'run-meta' }, parts.join(' · ')),
    item.reason ? h('div', { class: 'run-reason' }, item.reason) : null,
    item.keyProblem ? h('button', { class: 'link-button', 'data-command': 'setApiKey' }, 'Set API Key') : null,
  );
}

function renderNotice(item: NoticeItem): HTMLElement {
  return h(
    'div',
    { class: `item notice ${item.level}` },
    icon(item.level === 'info' ? 'info' : item.level === 'warning' ? 'warning' : 'error'),
    inline(item.text),
  );
}

export function renderItem(item: Item): HTMLElement {
  switch (item.kind) {
    case 'user':
      return renderUser(item);
    case 'assistant':
      return renderAssistant(item);
    case 'tool':
      return renderTool(item);
    case 'gate':
      return renderGate(item);
    case 'repair':
      return renderRepair(item);
    case 'subagent':
      return renderSubagent(item);
    case 'plan':
      return renderPlan(item);
    case 'step':
      return renderStep(item);
    case 'run_end':
      return renderRunEnd(item);
    case 'notice':
      return renderNotice(item);
    case 'checkpoint':
      return renderCheckpoint(item);
  }
}
