/**
 * A checkpoint row of the timeline: what a run changed, "Undo this run",
 * each file (open its diff, restore it), "Restore to here" per turn, the last
 * restore's outcome (conflicts with Compare), a pruned run's reason, and the
 * run's review (Keep / Undo per file and hunk, Keep all / Undo all).
 *
 * Buttons carry data-ckpt / data-review attributes; main.ts posts them.
 */

import * as l10n from '@vscode/l10n';
import type { FileEntry, ReviewFile, ReviewHunk } from '../src/shared/protocol';
import type { CheckpointItem } from '../src/shared/viewModel';
import { diffPre, h, icon } from './dom';
import { stateName } from './locale';

const CHANGE_LETTER: Record<FileEntry['change'], string> = { created: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

/** "1 file", "3 files". */
function files(count: number): string {
  return count === 1 ? l10n.t('1 file') : l10n.t('{0} files', count);
}

/** A button whose click main.ts turns into a 'checkpoint' message. */
function action(
  label: string,
  title: string,
  data: { ckpt: string; run: string; turn?: number | undefined; file?: string | undefined },
  cls = 'secondary small',
  disabled = false,
): HTMLButtonElement {
  const button = h('button', {
    class: cls,
    title,
    'data-ckpt': data.ckpt,
    'data-run': data.run,
    'data-turn': data.turn === undefined ? undefined : String(data.turn),
    'data-file': data.file,
  }, label);
  button.disabled = disabled;
  return button;
}

function reviewButton(decision: 'keep' | 'undo', label: string, title: string, run: string, file?: string, hunk?: number): HTMLButtonElement {
  return h('button', {
    class: `secondary small review-${decision}`,
    title,
    'data-review': decision,
    'data-run': run,
    'data-file': file,
    'data-hunk': hunk === undefined ? undefined : String(hunk),
  }, label);
}

function fileRow(item: CheckpointItem, entry: FileEntry, blocked: boolean, turn?: number): HTMLElement {
  const run = item.run.runId;
  const name = entry.renamedFrom ? `${entry.renamedFrom} → ${entry.path}` : entry.path;
  const row = h(
    'li',
    { class: `ckpt-file change-${entry.change}` },
    h('span', { class: 'change-letter', title: stateName(entry.change) }, CHANGE_LETTER[entry.change]),
    h('a', { class: 'ckpt-path', title: turn === undefined ? l10n.t('Open the diff of {0}: before the run ↔ now', entry.path) : l10n.t('Open the diff of {0}: before turn {1} ↔ now', entry.path, turn), 'data-ckpt': 'openDiff', 'data-run': run, 'data-file': entry.path, 'data-turn': turn === undefined ? undefined : String(turn) }, name),
  );
  if (entry.review) {
    row.append(h('span', { class: `badge review-${entry.review}` }, stateName(entry.review)));
  }
  if (turn !== undefined) {
    return row;
  }
  if (entry.restorable) {
    row.append(action(l10n.t('Restore'), l10n.t('Restore {0} to how it was before this run (asks first)', entry.path), { ckpt: 'restoreFile', run, file: entry.path }, 'link-button', blocked));
  } else {
    row.append(h('span', { class: 'ckpt-reason muted', title: entry.reason }, entry.reason ?? l10n.t('cannot be restored')));
  }
  return row;
}

function outcome(item: CheckpointItem): HTMLElement | null {
  const result = item.outcome;
  if (!result) {
    return null;
  }
  const parts = [l10n.t('Restored {0}', files(result.restored))];
  if (result.alreadyRestored) {
    parts.push(l10n.t('{0} already as before', files(result.alreadyRestored)));
  }
  if (result.skipped.length) {
    parts.push(l10n.t('{0} skipped', result.skipped.length));
  }
  if (result.conflicts.length) {
    parts.push(result.conflicts.length === 1 ? l10n.t('1 conflict') : l10n.t('{0} conflicts', result.conflicts.length));
  }
  const head = l10n.t('{0} ({1})', parts.join(' · '), stateName(result.scope));
  const el = h('div', { class: `ckpt-outcome${result.conflicts.length ? ' has-conflicts' : ''}` }, h('div', { class: 'ckpt-outcome-head' }, head));
  if (result.conflicts.length) {
    const list = h('ul', { class: 'ckpt-conflicts' });
    for (const conflict of result.conflicts) {
      list.append(
        h(
          'li',
          { class: 'ckpt-conflict' },
          icon('warning'),
          h('span', { class: 'ckpt-path' }, conflict.path),
          h('span', { class: 'ckpt-reason' }, conflict.reason),
          action(l10n.t('Compare'), l10n.t('Compare {0} as Rein left it with yours (yours is kept)', conflict.path), { ckpt: 'compare', run: item.run.runId, file: conflict.path }, 'link-button'),
        ),
      );
    }
    el.append(h('div', { class: 'muted' }, l10n.t('Not restored: you changed these files since. Your text is kept.')), list);
  }
  if (result.skipped.length) {
    const list = h('ul', { class: 'ckpt-skipped' });
    for (const skipped of result.skipped) {
      list.append(h('li', {}, h('span', { class: 'ckpt-path' }, skipped.path), h('span', { class: 'ckpt-reason muted' }, skipped.reason)));
    }
    el.append(list);
  }
  return el;
}

/** A hunk as the reviews draw it: its header and what follows it (badge, buttons), then its lines. */
export function hunkFrame(header: string, lines: readonly string[], status: string, ...head: HTMLElement[]): HTMLElement {
  return h('div', { class: `hunk status-${status}` }, h('div', { class: 'hunk-head' }, h('code', {}, header), ...head), diffPre(lines.join('\n'), 'hunk-lines'));
}

function hunkBlock(run: string, file: ReviewFile, hunk: ReviewHunk): HTMLElement {
  if (hunk.status === 'pending') {
    return hunkFrame(
      hunk.header,
      hunk.lines,
      hunk.status,
      reviewButton('keep', l10n.t('Keep'), l10n.t('Keep this change'), run, file.path, hunk.index),
      reviewButton('undo', l10n.t('Undo'), l10n.t('Undo this change (refused if you changed these lines since)'), run, file.path, hunk.index),
    );
  }
  return hunkFrame(hunk.header, hunk.lines, hunk.status, h('span', { class: `badge review-${hunk.status}` }, stateName(hunk.status)));
}

function review(item: CheckpointItem): HTMLElement | null {
  const reviewed = item.review;
  if (!reviewed) {
    return null;
  }
  const run = item.run.runId;
  const pending = reviewed.filter((file) => file.status === 'pending').length;
  const el = h('div', { class: 'ckpt-review' });
  const head = h('div', { class: 'ckpt-review-head' }, h('span', { class: 'ckpt-review-title' }, pending ? l10n.t('Review: {0} pending', files(pending)) : l10n.t('Reviewed')));
  if (pending) {
    head.append(
      reviewButton('keep', l10n.t('Keep all'), l10n.t('Keep every pending change of this run'), run),
      reviewButton('undo', l10n.t('Undo all'), l10n.t('Undo every pending change of this run'), run),
    );
  }
  el.append(head);
  for (const file of reviewed) {
    const open = file.status === 'pending';
    const summary = h(
      'summary',
      {},
      icon('chevron', 'chevron'),
      h('span', { class: 'ckpt-path' }, file.path),
      h('span', { class: `badge review-${file.status}` }, stateName(file.status)),
    );
    if (open) {
      summary.append(reviewButton('keep', l10n.t('Keep'), l10n.t('Keep every change to {0}', file.path), run, file.path));
      if (file.reason === undefined) {
        summary.append(reviewButton('undo', l10n.t('Undo'), l10n.t('Undo every change to {0}', file.path), run, file.path));
      }
    }
    const details = h('details', { class: `review-file status-${file.status}`, 'data-key': `review-${file.path}` }, summary);
    if (file.reason !== undefined) {
      details.append(h('div', { class: 'ckpt-reason muted' }, l10n.t('Cannot be undone: {0}', file.reason)));
    }
    details.append(...file.hunks.map((hunk) => hunkBlock(run, file, hunk)));
    el.append(details);
  }
  return el;
}

/** "Restored 2 files to before “fix the test” (turn 3)". */
function restoredTitle(count: string, runTitle: string | undefined, turn: number | undefined): string {
  if (runTitle) {
    return turn ? l10n.t('Restored {0} to before “{1}” (turn {2})', count, runTitle, turn) : l10n.t('Restored {0} to before “{1}”', count, runTitle);
  }
  return turn ? l10n.t('Restored {0} to before a run (turn {1})', count, turn) : l10n.t('Restored {0} to before a run', count);
}

export function renderCheckpoint(item: CheckpointItem): HTMLElement {
  const run = item.run;
  const blocked = run.pruned || item.busy !== undefined;
  const isRestore = run.kind === 'restore';
  const title = !isRestore
    ? l10n.t('Changed {0}', files(run.files.length))
    : item.restoredKind === 'restore'
      ? l10n.t('Undid a restore: {0} as before it', files(run.files.length))
      : restoredTitle(files(run.files.length), item.restoredTitle, run.restoredTurn);
  const undo = action(
    isRestore ? l10n.t('Undo this restore') : l10n.t('Undo this run'),
    isRestore
      ? l10n.t('Put back the {0} this restore changed (asks first)', files(item.undoCount))
      : l10n.t('Restore {0} to how they were before this run (asks first)', files(item.undoCount)),
    { ckpt: 'undoRun', run: run.runId },
    'secondary small ckpt-undo',
    blocked,
  );
  undo.prepend(icon('undo'));
  const el = h(
    'div',
    { class: `item checkpoint kind-${run.kind}${run.pruned ? ' pruned' : ''}` },
    h('div', { class: 'ckpt-head' }, icon('history'), h('span', { class: 'ckpt-title', title: run.title }, title), undo),
  );
  if (!isRestore && run.title) {
    el.append(h('div', { class: 'ckpt-run muted', title: run.title }, run.title));
  }
  if (run.pruned) {
    el.append(h('div', { class: 'ckpt-pruned' }, icon('warning'), l10n.t('Cannot be restored: {0}', run.prunedReason ?? l10n.t('its checkpoint was pruned'))));
  }
  if (item.busy) {
    el.append(h('div', { class: 'ckpt-busy' }, icon('spinner', 'spin'), item.busy));
  }
  if (item.error) {
    el.append(h('div', { class: 'ckpt-error' }, icon('error'), item.error));
  }
  el.append(h('ul', { class: 'ckpt-files' }, ...run.files.map((entry) => fileRow(item, entry, blocked))));
  const changedTurns = run.turns.filter((turn) => turn.files.length > 0);
  if (!isRestore && changedTurns.length > 0) {
    const turns = h('details', { class: 'ckpt-turns', 'data-key': 'turns' }, h('summary', {}, icon('chevron', 'chevron'), l10n.t('By turn ({0})', changedTurns.length)));
    for (const turn of changedTurns) {
      const count = item.turnCounts[turn.turn] ?? turn.files.length;
      turns.append(
        h(
          'div',
          { class: 'ckpt-turn' },
          h(
            'div',
            { class: 'ckpt-turn-head' },
            h('span', {}, l10n.t('Turn {0}', turn.turn)),
            h('span', { class: 'spacer' }),
            action(l10n.t('Restore to here'), l10n.t('Restore {0} to how they were before turn {1} (asks first)', files(count), turn.turn), { ckpt: 'restoreTurn', run: run.runId, turn: turn.turn }, 'secondary small ckpt-restore-turn', blocked),
          ),
          h('ul', { class: 'ckpt-files' }, ...turn.files.map((entry) => fileRow(item, entry, blocked, turn.turn))),
        ),
      );
    }
    el.append(turns);
  }
  const shown = outcome(item);
  if (shown) {
    el.append(shown);
  }
  if (item.refused) {
    el.append(
      h(
        'ul',
        { class: 'ckpt-refused' },
        ...item.refused.map((refused) =>
          h('li', {}, icon('warning'), refused.header ? l10n.t('Undo refused: {0} ({1}): {2}', refused.path, refused.header, refused.reason) : l10n.t('Undo refused: {0}: {1}', refused.path, refused.reason)),
        ),
      ),
    );
  }
  const reviewed = review(item);
  if (reviewed) {
    el.append(reviewed);
  }
  return el;
}
