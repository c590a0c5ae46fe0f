/**
 * The preview section's state: the person's program, which Rein starts,
 * reloads with validated changes and watches for runtime errors. One per
 * workspace (one per server), so one model outlives the sessions the panel
 * shows; it follows the preview events (of any session, or of none) and the
 * results of `rein/preview`. Pure.
 */

import * as l10n from '@vscode/l10n';
import type { PreviewAction, PreviewEvent, PreviewResult } from '../shared/protocol';
import type { PreviewView } from '../shared/viewModel';

/** Output lines kept for the panel. */
export const PREVIEW_LINES = 20;
const MAX_LINE_CHARS = 500;
const MAX_ERROR_LINES = 40;
// eslint-disable-next-line no-control-regex -- terminal colour codes are what this removes
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

function clean(line: string): string {
  const plain = line.replace(ANSI, '').replace(/\r$/, '');
  return plain.length > MAX_LINE_CHARS ? `${plain.slice(0, MAX_LINE_CHARS - 1)}…` : plain;
}

function keepTail(lines: readonly string[]): string[] {
  return lines.slice(-PREVIEW_LINES);
}

export class PreviewModel {
  private value: PreviewView = { rev: 0, state: 'unknown', reloads: 0, lines: [] };

  get rev(): number {
    return this.value.rev;
  }

  /** A copy for the view model (the host posts it to the page). */
  view(): PreviewView {
    return { ...this.value, lines: [...this.value.lines] };
  }

  private changed(update: Partial<PreviewView>): void {
    this.value = { ...this.value, ...update, rev: this.value.rev + 1 };
  }

  /** One preview event, from a session's stream or from none. */
  apply(event: PreviewEvent): void {
    const v = this.value;
    switch (event.type) {
      case 'preview_started':
        this.changed({
          state: event.state ?? 'running',
          pid: event.pid,
          command: event.command || v.command,
          generation: event.generation,
          error: undefined,
          detail: undefined,
        });
        break;
      case 'preview_reloaded':
        this.changed({
          state: event.state ?? 'running',
          pid: event.pid ?? v.pid,
          generation: event.generation,
          reloads: v.reloads + 1,
          error: undefined,
          detail: undefined,
        });
        break;
      case 'preview_output': {
        const dropped = event.lines_dropped ? [l10n.t('… {0} lines left out', event.lines_dropped)] : [];
        const lines = event.text.replace(/\n$/, '').split('\n').map(clean);
        this.changed({ lines: keepTail([...v.lines, ...dropped, ...lines]) });
        break;
      }
      case 'preview_error': {
        const state = event.state ?? v.state;
        const code = event.exit_code;
        const exited = code !== null && code !== undefined;
        this.changed({
          state,
          pid: state === 'failed' || state === 'exited' ? undefined : v.pid,
          error: { message: event.message, lines: (event.lines ?? []).slice(-MAX_ERROR_LINES).map(clean) },
          detail: exited ? l10n.t('exit code {0}', code) : v.detail,
        });
        break;
      }
      case 'preview_stopped': {
        const state = event.state ?? 'stopped';
        const code = state === 'exited' ? event.exit_code : undefined;
        const detail = code === null || code === undefined ? event.reason : l10n.t('{0} (exit code {1})', event.reason, code);
        this.changed({ state, pid: undefined, detail });
        break;
      }
    }
  }

  /**
   * The answer of `rein/preview` (any action): the server's truth at that
   * moment. A watched start or restart that saw runtime errors shows them
   * as the preview's error; one that came up clears it.
   */
  applyStatus(result: Partial<PreviewResult> | null | undefined): void {
    if (!result?.state) {
      return;
    }
    const running = result.state === 'running' || result.state === 'reloading' || result.state === 'starting';
    const seen = result.runtimeErrors?.length ? { message: result.error ?? '', lines: result.runtimeErrors.slice(-MAX_ERROR_LINES).map(clean) } : undefined;
    this.changed({
      ...(seen || result.up === true ? { error: seen } : {}),
      state: result.state,
      pid: result.pid,
      command: result.command || this.value.command,
      generation: running ? (result.generation ?? this.value.generation) : this.value.generation,
      lines: result.lines ? keepTail(result.lines.map(clean)) : this.value.lines,
      detail: result.error ?? (running ? undefined : this.value.detail),
    });
  }

  /** A start, stop or restart was sent (or answered: undefined). */
  setPending(action: Exclude<PreviewAction, 'status'> | undefined): void {
    if (this.value.pending !== action) {
      this.changed({ pending: action });
    }
  }

  /** A request failed (the server is not running, ...). */
  requestFailed(action: PreviewAction, reason: string): void {
    const failed: Record<PreviewAction, string> = {
      start: l10n.t('start failed: {0}', reason),
      stop: l10n.t('stop failed: {0}', reason),
      restart: l10n.t('restart failed: {0}', reason),
      status: l10n.t('status failed: {0}', reason),
    };
    this.changed({ pending: undefined, detail: failed[action] });
  }

  /** The server went away, and its preview with it. */
  serverStopped(): void {
    const v = this.value;
    if (v.state === 'unknown' || v.state === 'off') {
      return;
    }
    const wasRunning = v.state === 'running' || v.state === 'reloading' || v.state === 'starting';
    this.changed({
      state: wasRunning ? 'stopped' : v.state,
      pid: undefined,
      pending: undefined,
      detail: wasRunning ? l10n.t('the Rein server stopped') : v.detail,
    });
  }
}
