/**
 * The approval rules section's state: the rules the person kept with
 * "Always allow" (the workspace's, stored by the server, and the shown
 * session's), from `rein/approvals`, each revocable. One per panel, like the
 * MCP servers. Pure.
 */

import type { ApprovalsResult } from '../shared/protocol';
import type { ApprovalRuleView, ApprovalsView } from '../shared/viewModel';

const SCOPE_ORDER: Record<ApprovalRuleView['scope'], number> = { workspace: 0, session: 1 };

export class ApprovalsModel {
  private value: ApprovalsView = { rev: 0, rules: [] };

  get rev(): number {
    return this.value.rev;
  }

  /** A copy for the view model: the workspace's rules first, then by kind and pattern. */
  view(): ApprovalsView {
    const rules = [...this.value.rules].sort(
      (a, b) => SCOPE_ORDER[a.scope] - SCOPE_ORDER[b.scope] || a.kind.localeCompare(b.kind) || a.pattern.localeCompare(b.pattern),
    );
    return { rev: this.value.rev, rules };
  }

  /** The whole list from `rein/approvals` (entries that are not rules are left out). */
  setSnapshot(result: Partial<ApprovalsResult> | null | undefined): void {
    const rules: ApprovalRuleView[] = [];
    const given: unknown[] = Array.isArray(result?.rules) ? result.rules : [];
    for (const value of given) {
      const rule = value as Partial<ApprovalRuleView> | null;
      if (
        typeof rule === 'object' && rule !== null && typeof rule.id === 'string' && typeof rule.pattern === 'string' &&
        (rule.scope === 'session' || rule.scope === 'workspace') &&
        (rule.kind === 'command' || rule.kind === 'write' || rule.kind === 'mcp')
      ) {
        rules.push({ id: rule.id, scope: rule.scope, kind: rule.kind, pattern: rule.pattern });
      }
    }
    const same = JSON.stringify(rules) === JSON.stringify(this.value.rules);
    this.value = { rev: same ? this.value.rev : this.value.rev + 1, rules };
  }

  /** A revoked rule leaves the list at once (the refresh that follows confirms it). */
  remove(id: string): void {
    const rules = this.value.rules.filter((rule) => rule.id !== id);
    if (rules.length !== this.value.rules.length) {
      this.value = { rev: this.value.rev + 1, rules };
    }
  }
}
