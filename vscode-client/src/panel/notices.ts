/**
 * The one-line notices some events become in the panel, in its language
 * (the server's words in them, reasons and details, as sent). Pure.
 */

import * as l10n from '@vscode/l10n';
import { stateName } from '../shared/l10n';
import type { HookActivity } from '../shared/events.generated';
import type { AutoRepair, Compaction } from '../shared/protocol';
import type { NoticeLevel } from '../shared/viewModel';
import { basename } from './text';

export interface Notice {
  level: NoticeLevel;
  text: string;
}

export function compactionText(event: Compaction): string {
  const n = (value: number): string => value.toLocaleString('en-US');
  const args = [event.kind, n(event.tokens_before), n(event.tokens_after), event.messages_affected] as const;
  return event.detail
    ? l10n.t('Context compacted ({0}): {1} → {2} tokens, {3} messages · {4}', ...args, event.detail)
    : l10n.t('Context compacted ({0}): {1} → {2} tokens, {3} messages', ...args);
}

/** `auto_repair`: phase started / finished / cancelled / skipped. */
export function autoRepairNotice(event: AutoRepair): Notice {
  const file = basename(event.uri);
  const reason = event.reason ?? '';
  switch (event.phase) {
    case 'started':
      return { level: 'info', text: reason ? l10n.t('Auto-repair started for {0}: {1}', file, reason) : l10n.t('Auto-repair started for {0}', file) };
    case 'finished': {
      const status = stateName(event.status ?? 'finished');
      return {
        level: event.status === 'completed' ? 'info' : 'warning',
        text: reason ? l10n.t('Auto-repair of {0}: {1}: {2}', file, status, reason) : l10n.t('Auto-repair of {0}: {1}', file, status),
      };
    }
    case 'cancelled':
      return { level: 'info', text: reason ? l10n.t('Auto-repair of {0} cancelled: {1}', file, reason) : l10n.t('Auto-repair of {0} cancelled', file) };
    case 'skipped':
      return { level: 'info', text: reason ? l10n.t('Auto-repair of {0} skipped: {1}', file, reason) : l10n.t('Auto-repair of {0} skipped', file) };
  }
}

/**
 * `hook`: one line per thing a hook of the person's setup (Claude Code's
 * format) did: blocked a call or a prompt, added context, kept the run going,
 * asked, failed, or was not run (the workspace's hooks not allowed).
 */
export function hookNotice(event: HookActivity): Notice {
  const where = event.tool ? l10n.t('{0} hook on {1} ({2})', event.event, event.tool, event.source) : l10n.t('{0} hook ({1})', event.event, event.source);
  const message = event.message ?? '';
  switch (event.outcome) {
    case 'blocked':
      return { level: 'warning', text: l10n.t('{0} blocked it: {1}', where, message) };
    case 'context':
      return { level: 'info', text: l10n.t('{0} added context: {1}', where, message) };
    case 'continued':
      return { level: 'info', text: l10n.t('{0} kept the run going: {1}', where, message) };
    case 'asked':
      return { level: 'info', text: l10n.t('{0} asks for your approval: {1}', where, message) };
    case 'failed':
      return { level: 'warning', text: l10n.t('{0} failed: {1}', where, message) };
    case 'skipped':
      return { level: 'warning', text: l10n.t('Hooks of {0} not run: {1}', event.source, message) };
  }
}
