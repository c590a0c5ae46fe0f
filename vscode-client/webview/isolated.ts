/**
 * The isolated runs section under the approval rules: one row per copy of
 * the folder (its title, its state, its verdict, its changed files, its
 * analyzers, and Open / Abort / Review / Keep all / Discard / Keep as
 * branch); hidden while there is none. "Review" shows its hunks as the
 * checkpoint review draws them, each clean one with Keep / Undo and each
 * conflict with both sides (never applied), then "Apply kept (N)".
 */

import * as l10n from '@vscode/l10n';
import type { IsolatedHunkView, IsolatedReviewView, IsolatedRowAction, IsolatedRunView } from '../src/shared/isolatedView';
import { hunkFrame } from './checkpoints';
import { h, icon } from './dom';
import { stateName } from './locale';

export interface Section<T> {
  el: HTMLDetailsElement;
  render(view: T): void;
}

const ACTION_LABEL: Record<IsolatedRowAction, () => string> = {
  open: () => l10n.t('Open'),
  abort: () => l10n.t('Abort'),
  review: () => l10n.t('Review'),
  applyKept: () => l10n.t('Apply kept'),
  keep: () => l10n.t('Keep all'),
  discard: () => l10n.t('Discard'),
  branch: () => l10n.t('Keep as branch'),
};

const ACTION_TITLE: Record<IsolatedRowAction, () => string> = {
  open: () => l10n.t('Show its timeline here: the prompt box then steers it or sends it a new prompt'),
  abort: () => l10n.t('Abort its run'),
  review: () => l10n.t('Review its changes hunk by hunk against your folder as it is now'),
  applyKept: () => l10n.t('Apply the hunks you kept to your folder; conflicts are never applied, and the hunks not kept are discarded with the copy when no conflict is left'),
  keep: () => l10n.t('Apply its changes to your folder (conflicting hunks are left out and shown)'),
  discard: () => l10n.t('Throw its changes away and remove its copy'),
  branch: () => l10n.t('Commit its changes on a new branch; nothing is applied'),
};

type OnHunk = (sessionId: string, hunk: string, keep: boolean) => void;

function actionLabel(run: IsolatedRunView, action: IsolatedRowAction): string {
  if (action === 'review' && run.review) {
    return l10n.t('Close review');
  }
  if (action === 'applyKept' && run.review) {
    return l10n.t('Apply kept ({0})', run.review.kept);
  }
  return ACTION_LABEL[action]();
}

/** The side of a conflict: a label and the text (or "nothing"). */
function side(label: string, text: string | undefined, cls: string): HTMLElement {
  return h('div', { class: `isolated-side ${cls}` }, h('div', { class: 'muted' }, label), h('pre', { class: 'hunk-lines' }, text || l10n.t('(nothing)')));
}

function hunkBlock(sessionId: string, hunk: IsolatedHunkView, onHunk: OnHunk): HTMLElement {
  const header = hunk.header || hunk.id;
  if (hunk.status === 'conflict') {
    const block = hunkFrame(header, hunk.lines, hunk.status, h('span', { class: 'badge isolated-conflict' }, l10n.t('conflict')));
    block.append(
      h('div', { class: 'isolated-reason muted' }, hunk.reason ?? ''),
      side(l10n.t('Your folder now:'), hunk.ours, 'ours'),
      side(l10n.t('The run:'), hunk.theirs, 'theirs'),
    );
    return marked(block, hunk.id);
  }
  const keep = !hunk.kept;
  const button = h(
    'button',
    { class: `secondary small isolated-hunk-${keep ? 'keep' : 'undo'}`, 'data-hunk': hunk.id, title: keep ? l10n.t('Keep this change') : l10n.t('Leave this change out of the apply') },
    keep ? l10n.t('Keep') : l10n.t('Undo'),
  );
  button.addEventListener('click', () => onHunk(sessionId, hunk.id, keep));
  const badge = h('span', { class: `badge review-${hunk.kept ? 'kept' : 'undone'}` }, hunk.kept ? l10n.t('kept') : l10n.t('undone'));
  return marked(hunkFrame(header, hunk.lines, hunk.status, badge, button), hunk.id);
}

/** The review's hunk block, as an isolated run's hunk `id`. */
function marked(block: HTMLElement, id: string): HTMLElement {
  block.classList.add('isolated-hunk');
  block.dataset.hunk = id;
  return block;
}

function reviewBlock(sessionId: string, review: IsolatedReviewView, onHunk: OnHunk): HTMLElement {
  const head = review.conflicts
    ? l10n.t('{0} kept · {1} conflicting, never applied', review.kept, review.conflicts)
    : l10n.t('{0} kept', review.kept);
  const el = h('div', { class: 'isolated-review' }, h('div', { class: 'isolated-review-head muted' }, head));
  if (!review.files.length) {
    el.append(h('div', { class: 'muted' }, l10n.t('Nothing to apply: your folder has these changes already.')));
  }
  for (const file of review.files) {
    el.append(
      h(
        'div',
        { class: 'isolated-review-file', 'data-path': file.path },
        h('div', { class: 'isolated-review-path' }, h('span', { class: 'ckpt-path' }, file.path), h('span', { class: 'muted' }, ` ${stateName(file.change)}`)),
        ...file.notes.map((note) => h('div', { class: 'isolated-reason muted' }, note)),
        ...file.hunks.map((hunk) => hunkBlock(sessionId, hunk, onHunk)),
      ),
    );
  }
  return el;
}

function runRow(run: IsolatedRunView, onAction: (sessionId: string, action: IsolatedRowAction) => void, onHunk: OnHunk): HTMLElement {
  const buttons = run.actions.map((action) => {
    const button = h('button', { class: `link-button isolated-${action}`, 'data-action': action, title: ACTION_TITLE[action]() }, actionLabel(run, action));
    button.disabled = action === 'applyKept' && !run.review?.kept;
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
    run.review ? reviewBlock(run.sessionId, run.review, onHunk) : null,
  );
}

/** The isolated runs section (open; hidden while there is no run). */
export function isolatedSection(
  onAction: (sessionId: string, action: IsolatedRowAction) => void,
  onHunk: OnHunk,
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
    list.replaceChildren(...runs.map((run) => runRow(run, onAction, onHunk)));
  }

  return { el, render };
}
