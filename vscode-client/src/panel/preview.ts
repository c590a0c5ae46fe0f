/**
 * The preview box: the person's program, which Rein starts, reloads with
 * validated changes and watches for runtime errors. One box per session,
 * updated in place. Pure.
 */

import type { ReinEvent } from '../shared/protocol';
import type { PreviewItem } from '../shared/viewModel';
import { tail } from './text';

const MAX_OUTPUT = 8_000;
const MAX_ERRORS = 20;

type PreviewEvent = Extract<
  ReinEvent,
  { type: 'preview_started' | 'preview_reloaded' | 'preview_output' | 'preview_error' | 'preview_stopped' }
>;

export function applyPreviewEvent(box: PreviewItem, event: PreviewEvent): PreviewItem {
  switch (event.type) {
    case 'preview_started':
      box.state = event.state ?? 'running';
      box.pid = event.pid;
      box.command = event.command || box.command;
      box.generation = event.generation ?? box.generation;
      box.errors = [];
      box.stopped = undefined;
      break;
    case 'preview_reloaded':
      box.state = event.state ?? 'running';
      box.pid = event.pid ?? box.pid;
      box.generation = event.generation ?? box.generation;
      box.reloads += 1;
      break;
    case 'preview_output': {
      const dropped = event.lines_dropped ? `[${event.lines_dropped} lines left out]\n` : '';
      box.output = tail(box.output + dropped + event.text, MAX_OUTPUT);
      break;
    }
    case 'preview_error':
      box.state = event.state ?? box.state;
      box.errors = [...box.errors, { message: event.message, lines: event.lines ?? [] }].slice(-MAX_ERRORS);
      break;
    case 'preview_stopped': {
      box.state = event.state ?? 'stopped';
      const code = event.exit_code === null || event.exit_code === undefined ? '' : ` (exit code ${event.exit_code})`;
      box.stopped = `${event.reason ?? box.state}${code}`;
      break;
    }
  }
  return box;
}
