/**
 * The "Rein" LogOutputChannel: the server's own log lines at their level
 * (a Python WARNING is a warning, not an error, whatever stream it came on),
 * and a line per run and per model error from the run's events, so the
 * output tells what happened without the panel.
 */

import type * as vscode from 'vscode';
import type { EventEnvelope } from './shared/protocol';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** `rein serve` logs `2026-12-04 02:57:00,123 WARNING rein.lsp.x: message` (rein.cli). */
const SERVER_LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)? (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;
const LEVELS: Record<string, LogLevel> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error', CRITICAL: 'error' };

/**
 * Reads the server's stderr a line at a time: each log line at its level
 * (without the timestamp: the channel adds its own); a line that is not one
 * (a traceback's) at the level of the log line it follows, info before any.
 */
export class ServerLogReader {
  private level: LogLevel = 'info';

  line(raw: string): { level: LogLevel; text: string } | undefined {
    const text = raw.trimEnd();
    if (!text) {
      return undefined;
    }
    const match = SERVER_LINE.exec(text);
    if (match) {
      this.level = LEVELS[match[1] ?? 'INFO'] ?? 'info';
      return { level: this.level, text: match[2] ?? '' };
    }
    return { level: this.level, text };
  }
}

export function write(output: Pick<vscode.LogOutputChannel, LogLevel>, entry: { level: LogLevel; text: string } | undefined): void {
  if (entry) {
    output[entry.level](entry.text);
  }
}

function clip(text: string, limit = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}\u2026` : flat;
}

/**
 * The output line of a run's event worth logging, or undefined: a run's
 * start and end (a failed run, a model error among them, at error level
 * with its reason) and `error` events.
 */
export function runLogLine(envelope: EventEnvelope): { level: LogLevel; text: string } | undefined {
  const event = envelope.event as { type: string; [key: string]: unknown };
  const where = `session ${envelope.sessionId ?? '-'}`;
  switch (event.type) {
    case 'run_start':
      return { level: 'info', text: `Run ${String(event.run_id)} started (${where}): ${clip(typeof event.prompt === 'string' ? event.prompt : '')}` };
    case 'run_end': {
      const status = String(event.status);
      const reason = typeof event.reason === 'string' && event.reason ? `: ${event.reason}` : '';
      const turns = typeof event.turns === 'number' ? ` after ${event.turns} turn${event.turns === 1 ? '' : 's'}` : '';
      const level: LogLevel = status === 'failed' ? 'error' : status === 'completed' ? 'info' : 'warn';
      return { level, text: `Run ${String(event.run_id)} ${status}${turns} (${where})${reason}` };
    }
    case 'error': {
      if (event.where === 'run' && event.fatal === true) {
        return undefined; // the run_end line says why the run failed, once
      }
      const place = typeof event.where === 'string' && event.where ? ` in ${event.where}` : '';
      return { level: event.fatal === false ? 'warn' : 'error', text: `Error${place} (${where}): ${String(event.message)}` };
    }
    default:
      return undefined;
  }
}

/** Where the run log hears the server's events (the chat controller); tests pass an emitter. */
export interface RunEvents {
  readonly onDidReceiveEvent: vscode.Event<EventEnvelope>;
}

/** Logs each run's start and end and its errors to the output channel. */
export function registerRunLog(
  context: vscode.ExtensionContext,
  controller: RunEvents,
  output: vscode.LogOutputChannel,
): void {
  context.subscriptions.push(controller.onDidReceiveEvent((envelope) => write(output, runLogLine(envelope))));
}
