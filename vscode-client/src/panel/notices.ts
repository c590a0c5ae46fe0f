/** The one-line notices some events become in the panel. Pure. */

import type { AutoRepair, Compaction } from '../shared/protocol';
import type { NoticeLevel } from '../shared/viewModel';
import { basename } from './text';

export interface Notice {
  level: NoticeLevel;
  text: string;
}

export function compactionText(event: Compaction): string {
  const n = (value: number): string => value.toLocaleString('en-US');
  return (
    `Context compacted (${event.kind}): ${n(event.tokens_before)} → ${n(event.tokens_after)} tokens, ` +
    `${event.messages_affected} messages` +
    (event.detail ? ` · ${event.detail}` : '')
  );
}

/** `auto_repair`: phase started / finished / cancelled / skipped. */
export function autoRepairNotice(event: AutoRepair): Notice {
  const file = basename(event.uri);
  const reason = event.reason ? `: ${event.reason}` : '';
  switch (event.phase) {
    case 'started':
      return { level: 'info', text: `Auto-repair started for ${file}${reason}` };
    case 'finished':
      return {
        level: event.status === 'completed' ? 'info' : 'warning',
        text: `Auto-repair of ${file}: ${event.status ?? 'finished'}${reason}`,
      };
    default:
      return { level: 'info', text: `Auto-repair of ${file} ${event.phase}${reason}` };
  }
}
