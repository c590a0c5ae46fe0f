/**
 * The isolated runs section under the approval rules: one row per copy of
 * the folder (its title, its state, its verdict, its changed files, its
 * analyzers, and Open / Abort / Keep all / Discard / Keep as branch);
 * hidden while there is none.
 */

import * as l10n from '@vscode/l10n';
import type { IsolatedRowAction, IsolatedRunView } from '../src/shared/isolatedView';
import { h, icon } from './dom';
import { stateName } from './locale';

export interface Section<T> {
  el: HTMLDetailsElement;
  render(view: T): void;
}

const ACTION_LABEL: Record<IsolatedRowAction, () => string> = {
  open: () => l10n.t('Open'),
  abort: () => l10n.t('Abort'),
  keep: () => l10n.t('Keep all'),
  discard: () => l10n.t('Discard'),
  branch: () => l10n.t('Keep as branch'),
};

const ACTION_TITLE: Record<IsolatedRowAction, () => string> = {
  open: () => l10n.t('Show its timeline here: the prompt box then steers it or sends it a new prompt'),
  abort: () => l10n.t('Abort its run'),
  keep: () => l10n.t('Apply its changes to your folder (conflicting hunks are left out and shown)'),
  discard: () => l10n.t('Throw its changes away and remove its copy'),
  branch: () => l10n.t('Commit its changes on a new branch; nothing is applied'),
};

function runRow(run: IsolatedRunView, onAction: (sessionId: string, action: IsolatedRowAction) => void): HTMLElement {
  const buttons = run.actions.map((action) => {
    const button = h('button', { class: `link-button isolated-${action}`, 'data-action': action, title: ACTION_TITLE[action]() }, ACTION_LABEL[action]());
    button.addEventListener('click', () => onAction(run.sessionId, action));
    return button;
  });
  const changed = run.changedError
    ? h('div', { class: 'isolated-changed muted' }, l10n.t('changed files unknown: {0}', run.changedError))
    : h(
        'div',
        { class: 'isolated-changed muted', title: run.changed.join('\n') },
        run.changed.length ? l10n.t('changed: {0}', run.changed.join(', ')) : l10n.t('no changes yet'),
      );
  return h(
    'li',
    { class: `isolated-run state-${run.state}${run.shown ? ' shown' : ''}`, 'data-session': run.sessionId },
    h(
      'div',
      { class: 'isolated-head' },
      icon(run.state === 'running' ? 'spinner' : run.verdict === 'completed' ? 'check' : 'circle', run.state === 'running' ? 'spin isolated-icon' : 'isolated-icon'),
      h('span', { class: 'isolated-title', title: run.sessionId }, run.title),
      h('span', { class: `badge isolated-state ${run.state}` }, stateName(run.state)),
      run.verdict && run.verdict !== run.state ? h('span', { class: 'isolated-verdict muted' }, stateName(run.verdict)) : null,
      run.shown ? h('span', { class: 'isolated-shown muted' }, l10n.t('shown')) : null,
    ),
    changed,
    run.analyzers ? h('div', { class: 'isolated-analyzers muted', title: run.analyzers }, run.analyzers) : null,
    buttons.length ? h('div', { class: 'isolated-actions' }, ...buttons) : null,
  );
}

/** The isolated runs section (open; hidden while there is no run). */
export function isolatedSection(
  onAction: (sessionId: string, action: IsolatedRowAction) => void,
): Section<IsolatedRunView[]> {
  const counts = h('span', { class: 'isolated-counts muted' });
  const list = h('ul', { class: 'isolated-runs' });
  const el = h(
    'details',
    { class: 'isolated-section hidden' },
    h(
      'summary',
      { title: l10n.t('Runs in their own copy of the folder: their changes reach your files only when you keep them') },
      icon('chevron', 'chevron'),
      icon('history', 'isolated-title-icon'),
      h('span', { class: 'isolated-section-title' }, l10n.t('Isolated runs')),
      counts,
    ),
    list,
  );
  el.open = true;

  function render(runs: IsolatedRunView[]): void {
    el.classList.toggle('hidden', runs.length === 0);
    const running = runs.filter((r) => r.state === 'running').length;
    counts.textContent = running ? l10n.t('{0} · {1} running', runs.length, running) : String(runs.length);
    list.replaceChildren(...runs.map((run) => runRow(run, onAction)));
  }

  return { el, render };
}
