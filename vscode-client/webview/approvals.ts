/**
 * The approval rules section under the MCP servers: one line per rule the
 * person kept with "Always allow" (the workspace's, then the shown
 * session's), with its scope, what it allows and a Revoke button. Hidden
 * while no rule is kept. Updated in place.
 */

import * as l10n from '@vscode/l10n';
import type { ApprovalRuleView, ApprovalsView } from '../src/shared/viewModel';
import { h, icon } from './dom';
import { stateName } from './locale';

function kindName(kind: ApprovalRuleView['kind']): string {
  switch (kind) {
    case 'command':
      return l10n.t('command');
    case 'write':
      return l10n.t('writes');
    case 'mcp':
      return l10n.t('MCP');
  }
}

export interface ApprovalsSection {
  el: HTMLDetailsElement;
  /** Draws `view` (undefined: keep the last one). */
  render(view: ApprovalsView | undefined): void;
}

function row(rule: ApprovalRuleView, onRevoke: (id: string) => void): HTMLElement {
  const revoke = h('button', { class: 'link-button approval-revoke', title: l10n.t('Ask again before {0} {1}', kindName(rule.kind), rule.pattern) }, l10n.t('Revoke'));
  revoke.addEventListener('click', () => {
    revoke.setAttribute('disabled', '');
    onRevoke(rule.id);
  });
  return h(
    'li',
    { class: `approval-rule scope-${rule.scope}`, 'data-rule': rule.id },
    h('span', { class: `badge approval-scope ${rule.scope}` }, stateName(rule.scope)),
    h('span', { class: 'approval-kind muted' }, kindName(rule.kind)),
    h('span', { class: 'approval-pattern', title: rule.pattern }, rule.pattern),
    revoke,
  );
}

export function approvalsSection(open: boolean, onToggle: (open: boolean) => void, onRevoke: (id: string) => void): ApprovalsSection {
  const count = h('span', { class: 'approval-count muted' });
  const list = h('ul', { class: 'approval-rules' });
  const el = h(
    'details',
    { class: 'approvals-section hidden' },
    h(
      'summary',
      { title: l10n.t('Calls you chose to "Always allow": Rein runs them without asking') },
      icon('chevron', 'chevron'),
      icon('check', 'approvals-title-icon'),
      h('span', { class: 'approvals-title' }, l10n.t('Always allowed')),
      count,
    ),
    list,
  );
  el.open = open;
  el.addEventListener('toggle', () => onToggle(el.open));

  function render(view: ApprovalsView | undefined): void {
    if (!view) {
      return;
    }
    el.classList.toggle('hidden', view.rules.length === 0);
    count.textContent = view.rules.length === 1 ? l10n.t('1 rule') : l10n.t('{0} rules', view.rules.length);
    list.replaceChildren(...view.rules.map((rule) => row(rule, onRevoke)));
  }

  return { el, render };
}
