/**
 * One box per subagent (the `task` tool's child), updated in place from the
 * child's own events (`subagent_activity.event`). Pure.
 */

import * as l10n from '@vscode/l10n';
import { isKnownEvent } from '../shared/protocol';
import { addUsage, summarizeArgs, type SubagentItem } from '../shared/viewModel';
import { tail } from './text';

const MAX_SUBAGENT_TEXT = 400;

export function newSubagent(childId: string, name: string): Omit<SubagentItem, 'id' | 'rev' | 'runId'> {
  return { kind: 'subagent', childId, name, status: 'running', turn: 0, toolCalls: 0, text: '', usage: {} };
}

/** Applies one of the child's events to its box; false when nothing changed. */
export function applySubagentEvent(box: SubagentItem, inner: { type: string }): boolean {
  if (!isKnownEvent(inner)) {
    return false;
  }
  switch (inner.type) {
    case 'run_start':
    case 'agent_start':
      box.status = 'running';
      return true;
    case 'turn_start':
      box.turn = inner.turn;
      return true;
    case 'turn_end':
      box.usage = addUsage(box.usage, inner.usage);
      box.retry = undefined; // a steer ended the child's wait
      return true;
    case 'model_retry':
      box.retry = l10n.t(
        'Model retry {0} of {1} in {2} s: {3}',
        inner.attempt,
        inner.max_attempts,
        Number(inner.wait_s.toPrecision(3)),
        inner.reason,
      );
      return true;
    case 'message_start': {
      const retried = inner.role === 'assistant' && box.retry !== undefined;
      if (retried) {
        box.retry = undefined; // the reply started
      }
      if (inner.role === 'assistant' && box.text) {
        box.text = ''; // show the newest message only
        return true;
      }
      return retried;
    }
    case 'message_end': {
      // The whole message: the box shows it even when no delta came (a
      // replayed session, a client that joined late) and ends on its text.
      const message = inner.message;
      if (message.role !== 'assistant') {
        return false;
      }
      const text = (message.content ?? [])
        .map((part) => (part.type === 'text' ? part.text : ''))
        .join('');
      const shown = tail(text, MAX_SUBAGENT_TEXT);
      if (!text || shown === box.text) {
        return false;
      }
      box.text = shown;
      return true;
    }
    case 'message_delta':
      if (inner.kind !== 'text') {
        return false;
      }
      box.text = tail(box.text + inner.delta, MAX_SUBAGENT_TEXT);
      return true;
    case 'tool_call_start':
      box.toolCalls += 1;
      box.currentTool = `${inner.name} ${summarizeArgs(inner.name, inner.arguments ?? {})}`.trim();
      return true;
    case 'run_end':
      box.status = inner.status;
      box.reason = inner.reason ?? undefined;
      box.retry = undefined;
      if (inner.usage) {
        box.usage = inner.usage;
      }
      return true;
    case 'agent_end':
      box.status = inner.status;
      return true;
    case 'error':
      if (!inner.fatal) {
        return false;
      }
      box.reason = inner.message;
      return true;
    default:
      return false;
  }
}
