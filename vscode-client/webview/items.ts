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
import * as l10n from '@vscode/l10n';
import { renderCheckpoint } from './checkpoints';
import { h, icon, inline, markdown, pre, severityName, usageText } from './dom';
import type { IconName } from './icons';
import { stateName } from './locale';
import { toolResult } from './toolResult';

function blockerCount(count: number): string {
  return count === 1 ? l10n.t('1 blocker') : l10n.t('{0} blockers', count);
}

function renderUser(item: UserItem): HTMLElement {
  const label =
    item.origin === 'steer' ? l10n.t('Steering') : item.origin === 'follow_up' ? l10n.t('Follow-up') : l10n.t('You');
  const applied = item.subagent ? l10n.t('applied · to {0}', item.subagent) : l10n.t('applied');
  const state = item.pending ? l10n.t('queued') : item.origin === 'steer' && item.applied ? applied : '';
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
        h('summary', {}, icon('chevron', 'chevron'), l10n.t('Thinking')),
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
    el.append(h('div', { class: 'stop-reason' }, l10n.t('stopped: {0}', stateName(item.stopReason))));
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
    item.mcpServer ? h('span', { class: 'badge tool-server', title: l10n.t('MCP server {0}', item.mcpServer) }, item.mcpServer) : null,
    h('span', { class: 'tool-summary', title: item.summary }, item.summary),
  );
  if (item.edit) {
    const label = item.edit.created ? l10n.t('new file') : l10n.t('diff');
    summary.append(
      h(
        'a',
        { class: 'diff-link', 'data-diff': item.id, title: l10n.t('Open the diff of this change to {0}', item.edit.path) },
        icon('diff'),
        label,
      ),
    );
  }
  if (item.denied) {
    summary.append(h('span', { class: 'badge denied' }, l10n.t('denied')));
  }
  const time =
    item.durationMs !== undefined
      ? formatDuration(item.durationMs)
      : item.status === 'running'
        ? item.statusText ?? l10n.t('running')
        : item.status === 'pending'
          ? l10n.t('preparing')
          : '';
  summary.append(h('span', { class: 'tool-time' }, time));

  const body = h('div', { class: 'tool-body' });
  if (Object.keys(item.args).length) {
    body.append(h('div', { class: 'label' }, l10n.t('Arguments')), pre(argsText(item.args), 'args'));
  }
  if (item.output) {
    body.append(h('div', { class: 'label' }, l10n.t('Output')), pre(item.output, 'output'));
  }
  if (item.content !== undefined) {
    body.append(h('div', { class: 'label' }, item.status === 'error' ? l10n.t('Error') : l10n.t('Result')), toolResult(item, item.content));
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
    list.append(h('li', { class: 'more' }, l10n.t('… and {0} more', blockers.length - 50)));
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
      ? l10n.t('checking…')
      : item.status === 'passed'
        ? l10n.t('passed')
        : item.status === 'unverified'
          ? l10n.t('unverified')
          : blockerCount(item.blockers.length);
  const head = h(
    'div',
    { class: 'gate-head' },
    icon(gateIcon(item.status), item.status === 'running' ? 'spin' : ''),
    h('span', { class: 'gate-title' }, l10n.t('Gate'), ' ', h('strong', {}, item.gate)),
    h('span', { class: `gate-result ${item.status}` }, result),
    item.stale ? h('span', { class: 'badge stale', title: l10n.t('The diagnostics may be older than this generation') }, l10n.t('stale')) : null,
    item.durationMs !== undefined ? h('span', { class: 'muted right nowrap' }, formatDuration(item.durationMs)) : null,
  );
  const about = [item.generation !== undefined ? l10n.t('generation {0}', item.generation) : '', item.detail ?? ''].filter(Boolean).join(' · ');
  return h(
    'div',
    { class: `item gate ${item.status}` },
    head,
    about ? h('div', { class: 'gate-detail' }, about) : null,
    item.blockers.length ? renderBlockers(item.blockers) : null,
  );
}

function renderRepair(item: RepairItem): HTMLElement {
  const dots = h('span', { class: 'attempts', title: l10n.t('attempt {0} of {1}', item.attempt, item.maxAttempts) });
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
      h('span', { class: 'repair-title' }, l10n.t('Repair attempt {0} of {1}', item.attempt, item.maxAttempts)),
      dots,
      h('span', { class: 'muted right', title: l10n.t('sent back to the model to fix') }, blockerCount(count)),
    ),
  );
}

function renderSubagent(item: SubagentItem): HTMLElement {
  const running = item.status === 'running';
  const meta = [
    item.turn ? l10n.t('turn {0}', item.turn) : '',
    item.toolCalls === 1 ? l10n.t('1 tool call') : l10n.t('{0} tool calls', item.toolCalls),
    totalTokens(item.usage) ? l10n.t('{0} tokens', formatTokens(totalTokens(item.usage))) : '',
  ].filter(Boolean);
  return h(
    'div',
    { class: `item subagent ${item.status}` },
    h(
      'div',
      { class: 'sub-head' },
      icon(running ? 'spinner' : item.status === 'completed' ? 'pass' : 'fail', running ? 'spin' : ''),
      h('span', { class: 'sub-title' }, l10n.t('Subagent'), ' ', h('strong', {}, item.name)),
      h('span', { class: `badge status-${item.status} right` }, stateName(item.status)),
    ),
    h('div', { class: 'sub-meta' }, meta.join(' · ')),
    item.currentTool ? h('div', { class: 'sub-tool' }, icon('tool'), h('span', {}, item.currentTool)) : null,
    item.text ? h('div', { class: 'sub-text' }, item.text) : null,
    item.retry ? h('div', { class: 'sub-retry', role: 'status' }, item.retry) : null,
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
      h('span', { class: 'plan-title' }, l10n.t('Plan')),
      item.state ? h('span', { class: 'badge' }, stateName(item.state)) : null,
      h('span', { class: 'muted right' }, l10n.t('{0} of {1} done', done, item.steps.length)),
    ),
    list,
  );
}

/** Where a plan step's work starts (plan mode). */
function renderStep(item: StepItem): HTMLElement {
  return h(
    'div',
    { class: 'item step-start', role: 'separator', 'aria-label': l10n.t('Step {0} of {1}', item.index, item.total) },
    h('span', { class: 'step-label' }, l10n.t('Step {0} of {1}', item.index, item.total)),
    h('span', { class: 'step-description', title: item.description }, item.description),
  );
}

function renderRunEnd(item: RunEndItem): HTMLElement {
  const parts = [item.turns === 1 ? l10n.t('1 turn') : l10n.t('{0} turns', item.turns)];
  if (item.repairs) {
    parts.push(item.repairs === 1 ? l10n.t('1 repair') : l10n.t('{0} repairs', item.repairs));
  }
  parts.push(usageText(item.usage));
  return h(
    'div',
    { class: `item run-end ${item.status}` },
    h(
      'div',
      { class: 'run-head' },
      icon(item.status === 'completed' ? 'pass' : item.status === 'waiting' ? 'dots' : 'fail'),
      h('span', { class: 'run-title' }, l10n.t('Run {0}', stateName(item.status))),
    ),
    h('div', { class: 'run-meta' }, parts.join(' · ')),
    item.reason ? h('div', { class: 'run-reason' }, item.reason) : null,
    item.keyProblem ? h('button', { class: 'link-button', 'data-command': 'setApiKey' }, l10n.t('Set API Key')) : null,
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
