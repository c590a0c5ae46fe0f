/**
 * The page's strings in the editor's language. The extension puts
 * `vscode.l10n.bundle` (undefined in English) into the page as the JSON
 * attribute `data-l10n` of `#app` (no inline script: the page's CSP allows
 * only the nonce'd bundle); this configures `@vscode/l10n` with it before
 * any other module of the page runs, so every `l10n.t('...')` after it is
 * translated. Without a bundle, or with one that does not parse, the
 * English text stays.
 *
 * Import it first in main.ts.
 */

import * as l10n from '@vscode/l10n';

function bundle(): Record<string, string> | undefined {
  const raw = document.getElementById('app')?.dataset.l10n;
  if (!raw) {
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, string>) : undefined;
  } catch {
    return undefined;
  }
}

const contents = bundle();
if (contents) {
  l10n.config({ contents });
}

/** The words of the states the server reports (badges, headers), in the page's language; an unknown one as given. */
export function stateName(state: string): string {
  const names: Record<string, string> = {
    running: l10n.t('running'),
    completed: l10n.t('completed'),
    failed: l10n.t('failed'),
    aborted: l10n.t('aborted'),
    waiting: l10n.t('waiting'),
    error: l10n.t('error'),
    pending: l10n.t('pending'),
    kept: l10n.t('kept'),
    undone: l10n.t('undone'),
    starting: l10n.t('starting'),
    stopped: l10n.t('stopped'),
    skipped: l10n.t('skipped'),
    reloading: l10n.t('reloading'),
    crashed: l10n.t('crashed'),
    exited: l10n.t('exited'),
    created: l10n.t('created'),
    modified: l10n.t('modified'),
    deleted: l10n.t('deleted'),
    renamed: l10n.t('renamed'),
    session: l10n.t('session'),
    workspace: l10n.t('workspace'),
  };
  return Object.hasOwn(names, state) ? (names[state] ?? state) : state;
}
