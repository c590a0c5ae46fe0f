/**
 * The preview section under the status line: the preview's state, command
 * and last output lines, its runtime error, and Start / Restart / Stop (which
 * the host runs as the Rein: ... Preview commands). Hidden while no preview
 * is configured (state "off") or nothing is known yet. Built once and
 * updated in place, so a button under the mouse stays put while output
 * streams in.
 */

import * as l10n from '@vscode/l10n';
import type { PreviewAction } from '../src/shared/protocol';
import type { PreviewView } from '../src/shared/viewModel';
import { h, icon } from './dom';
import type { IconName } from './icons';
import { stateName as stateWord } from './locale';

type Action = Exclude<PreviewAction, 'status'>;

function pendingText(action: Action): string {
  switch (action) {
    case 'start':
      return l10n.t('starting…');
    case 'stop':
      return l10n.t('stopping…');
    case 'restart':
      return l10n.t('restarting…');
  }
}
const LIVE: ReadonlySet<string> = new Set(['starting', 'running', 'reloading']);

export interface PreviewSection {
  el: HTMLDetailsElement;
  /** Draws `view` (undefined: the last one again); `connected`: the server runs (the buttons need it). */
  render(view: PreviewView | undefined, connected: boolean): void;
}

function button(action: Action, iconName: IconName, label: string, title: string): HTMLButtonElement {
  return h('button', { class: `secondary small preview-${action}`, title, 'data-action': action }, icon(iconName), label);
}

export function previewSection(onAction: (action: Action) => void, open: boolean, onToggle: (open: boolean) => void): PreviewSection {
  const stateIcon = h('span', { class: 'preview-icon' });
  const badge = h('span', { class: 'badge preview-state' });
  const errorBadge = h('span', { class: 'badge preview-error-badge hidden' }, l10n.t('error'));
  const command = h('span', { class: 'preview-command' });
  const meta = h('span', { class: 'preview-meta' });
  const summary = h(
    'summary',
    { title: l10n.t('The preview: your program, which Rein starts, reloads with validated changes and watches for errors') },
    icon('chevron', 'chevron'),
    stateIcon,
    h('span', { class: 'preview-title' }, l10n.t('Preview')),
    badge,
    errorBadge,
    command,
    meta,
  );
  const buttons: Record<Action, HTMLButtonElement> = {
    start: button('start', 'play', l10n.t('Start'), l10n.t('Start the preview (Rein: Start Preview)')),
    restart: button('restart', 'refresh', l10n.t('Restart'), l10n.t('Stop the preview and start it again (Rein: Restart Preview)')),
    stop: button('stop', 'stop', l10n.t('Stop'), l10n.t('Stop the preview (Rein: Stop Preview)')),
  };
  for (const [action, node] of Object.entries(buttons) as [Action, HTMLButtonElement][]) {
    node.addEventListener('click', () => onAction(action));
  }
  const detail = h('span', { class: 'preview-detail' });
  const errorMessage = h('span', {});
  const errorLines = h('pre', { class: 'preview-error-lines' });
  const errorBox = h('div', { class: 'preview-error hidden' }, h('div', { class: 'preview-error-message' }, icon('error'), errorMessage), errorLines);
  const lines = h('pre', { class: 'preview-lines' });
  const noLines = h('div', { class: 'preview-no-lines muted' }, l10n.t('No output yet.'));
  const el = h(
    'details',
    { class: 'preview-section hidden' },
    summary,
    h(
      'div',
      { class: 'preview-body' },
      h('div', { class: 'preview-actions', role: 'toolbar', 'aria-label': l10n.t('Preview') }, buttons.start, buttons.restart, buttons.stop, detail),
      errorBox,
      lines,
      noLines,
    ),
  );
  el.open = open;
  el.addEventListener('toggle', () => onToggle(el.open));
  let last: PreviewView | undefined;

  function render(view: PreviewView | undefined, connected: boolean): void {
    last = view ?? last;
    const v = last;
    if (!v || v.state === 'unknown' || v.state === 'off') {
      el.classList.add('hidden');
      return;
    }
    const live = LIVE.has(v.state);
    const busy = v.pending !== undefined;
    const stateName = v.pending ? 'pending' : v.state;
    el.className = `preview-section state-${stateName}${v.error ? ' has-error' : ''}`;

    const spinning = busy || v.state === 'starting' || v.state === 'reloading';
    stateIcon.replaceChildren(icon(spinning ? 'spinner' : 'play', spinning ? 'spin' : ''));
    badge.className = `badge preview-state ${stateName}`;
    badge.textContent = v.pending ? pendingText(v.pending) : stateWord(v.state);
    errorBadge.classList.toggle('hidden', !v.error);
    errorBadge.title = v.error?.message ?? '';
    command.textContent = v.command ?? '';
    command.title = v.command ?? '';
    meta.textContent = [v.pid !== undefined ? l10n.t('pid {0}', v.pid) : '', live && v.generation !== undefined ? l10n.t('gen {0}', v.generation) : '']
      .filter(Boolean)
      .join(' · ');

    buttons.start.disabled = !connected || busy || live;
    buttons.restart.disabled = !connected || busy;
    buttons.stop.disabled = !connected || busy || !live;
    detail.textContent = v.detail ?? '';
    detail.title = v.detail ?? '';

    errorBox.classList.toggle('hidden', !v.error);
    errorMessage.textContent = v.error?.message ?? '';
    errorLines.textContent = v.error?.lines.join('\n') ?? '';
    errorLines.classList.toggle('hidden', !v.error?.lines.length);

    const text = v.lines.join('\n');
    if (lines.textContent !== text) {
      lines.textContent = text;
      lines.scrollTop = lines.scrollHeight; // the newest lines
    }
    lines.classList.toggle('hidden', v.lines.length === 0);
    noLines.classList.toggle('hidden', v.lines.length > 0);
  }

  return { el, render };
}
