/**
 * A checkpoint row of the timeline: what a run changed, "Undo this run",
 * each file (open its diff, restore it), "Restore to here" per turn, the last
 * restore's outcome (conflicts with Compare), a pruned run's reason, and the
 * run's review (Keep / Undo per file and hunk, Keep all / Undo all).
 *
 * Buttons carry data-ckpt / data-review attributes; main.ts posts them.
 */

import type { FileEntry, ReviewFile, ReviewHunk } from '../src/shared/protocol';
import type { CheckpointItem } from '../src/shared/viewModel';
import { diffPre, h, icon } from './dom';

const CHANGE_LETTER: Record<FileEntry['change'], string> = { created: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
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
    h('span', { class: 'change-letter', title: entry.change }, CHANGE_LETTER[entry.change]),
    h('a', { class: 'ckpt-path', title: `Open the diff of ${entry.path}: before ${turn === undefined ? 'the run' : `turn ${turn}`} ↔ now`, 'data-ckpt': 'openDiff', 'data-run': run, 'data-file': entry.path, 'data-turn': turn === undefined ? undefined : String(turn) }, name),
  );
  if (entry.review) {
    row.append(h('span', { class: `badge review-${entry.review}` }, entry.review));
  }
  if (turn !== undefined) {
    return row;
  }
  if (entry.restorable) {
    row.append(action('Restore', `Restore ${entry.path} to how it was before this run (asks first)`, { ckpt: 'restoreFile', run, file: entry.path }, 'link-button', blocked));
  } else {
    row.append(h('span', { class: 'ckpt-reason muted', title: entry.reason }, entry.reason ?? 'cannot be restored'));
  }
  return row;
}

function outcome(item: CheckpointItem): HTMLElement | null {
  const result = item.outcome;
  if (!result) {
    return null;
  }
  const parts = [`Restored ${plural(result.restored, 'file')}`];
  if (result.alreadyRestored) {
    parts.push(`${plural(result.alreadyRestored, 'file')} already as before`);
  }
  if (result.skipped.length) {
    parts.push(`${result.skipped.length} skipped`);
  }
  if (result.conflicts.length) {
    parts.push(plural(result.conflicts.length, 'conflict'));
  }
  const el = h('div', { class: `ckpt-outcome${result.conflicts.length ? ' has-conflicts' : ''}` }, h('div', { class: 'ckpt-outcome-head' }, `${parts.join(' · ')} (${result.scope})`));
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
          action('Compare', `Compare ${conflict.path} as Rein left it with yours (yours is kept)`, { ckpt: 'compare', run: item.run.runId, file: conflict.path }, 'link-button'),
        ),
      );
    }
    el.append(h('div', { class: 'muted' }, 'Not restored: you changed these files since. Your text is kept.'), list);
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

function hunkBlock(run: string, file: ReviewFile, hunk: ReviewHunk): HTMLElement {
  const head = h('div', { class: 'hunk-head' }, h('code', {}, hunk.header));
  if (hunk.status === 'pending') {
    head.append(
      reviewButton('keep', 'Keep', 'Keep this change', run, file.path, hunk.index),
      reviewButton('undo', 'Undo', 'Undo this change (refused if you changed these lines since)', run, file.path, hunk.index),
    );
  } else {
    head.append(h('span', { class: `badge review-${hunk.status}` }, hunk.status));
  }
  return h('div', { class: `hunk status-${hunk.status}` }, head, diffPre(hunk.lines.join('\n'), 'hunk-lines'));
}

function review(item: CheckpointItem): HTMLElement | null {
  const reviewed = item.review;
  if (!reviewed) {
    return null;
  }
  const run = item.run.runId;
  const pending = reviewed.filter((file) => file.status === 'pending').length;
  const el = h('div', { class: 'ckpt-review' });
  const head = h('div', { class: 'ckpt-review-head' }, h('span', { class: 'ckpt-review-title' }, pending ? `Review: ${plural(pending, 'file')} pending` : 'Reviewed'));
  if (pending) {
    head.append(
      reviewButton('keep', 'Keep all', "Keep every pending change of this run", run),
      reviewButton('undo', 'Undo all', "Undo every pending change of this run", run),
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
      h('span', { class: `badge review-${file.status}` }, file.status),
    );
    if (open) {
      summary.append(reviewButton('keep', 'Keep', `Keep every change to ${file.path}`, run, file.path));
      if (file.reason === undefined) {
        summary.append(reviewButton('undo', 'Undo', `Undo every change to ${file.path}`, run, file.path));
      }
    }
    const details = h('details', { class: `review-file status-${file.status}`, 'data-key': `review-${file.path}` }, summary);
    if (file.reason !== undefined) {
      details.append(h('div', { class: 'ckpt-reason muted' }, `Cannot be undone: ${file.reason}`));
    }
    details.append(...file.hunks.map((hunk) => hunkBlock(run, file, hunk)));
    el.append(details);
  }
  return el;
}

export function renderCheckpoint(item: CheckpointItem): HTMLElement {
  const run = item.run;
  const blocked = run.pruned || item.busy !== undefined;
  const isRestore = run.kind === 'restore';
  const title = !isRestore
    ? `Changed ${plural(run.files.length, 'file')}`
    : item.restoredKind === 'restore'
      ? `Undid a restore: ${plural(run.files.length, 'file')} as before it`
      : `Restored ${plural(run.files.length, 'file')} to before ${item.restoredTitle ? `“${item.restoredTitle}”` : 'a run'}${run.restoredTurn ? ` (turn ${run.restoredTurn})` : ''}`;
  const undo = action(
    isRestore ? 'Undo this restore' : 'Undo this run',
    isRestore
      ? `Put back the ${plural(item.undoCount, 'file')} this restore changed (asks first)`
      : `Restore ${plural(item.undoCount, 'file')} to how they were before this run (asks first)`,
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
    el.append(h('div', { class: 'ckpt-pruned' }, icon('warning'), `Cannot be restored: ${run.prunedReason ?? 'its checkpoint was pruned'}`));
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
    const turns = h('details', { class: 'ckpt-turns', 'data-key': 'turns' }, h('summary', {}, icon('chevron', 'chevron'), `By turn (${changedTurns.length})`));
    for (const turn of changedTurns) {
      const count = item.turnCounts[turn.turn] ?? turn.files.length;
      turns.append(
        h(
          'div',
          { class: 'ckpt-turn' },
          h(
            'div',
            { class: 'ckpt-turn-head' },
            h('span', {}, `Turn ${turn.turn}`),
            h('span', { class: 'spacer' }),
            action('Restore to here', `Restore ${plural(count, 'file')} to how they were before turn ${turn.turn} (asks first)`, { ckpt: 'restoreTurn', run: run.runId, turn: turn.turn }, 'secondary small ckpt-restore-turn', blocked),
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
          h('li', {}, icon('warning'), `Undo refused: ${refused.path}${refused.header ? ` (${refused.header})` : ''}: ${refused.reason}`),
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
