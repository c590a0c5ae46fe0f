/**
 * The translation seam of the code that runs on both sides of the panel
 * (src/shared, and the view-model code of src/panel that builds notices,
 * labels and the cost line): it calls `l10n.t('…')` of `@vscode/l10n`,
 * which is plain JavaScript (no `vscode` import) and reads one bundle set
 * once per side with `useBundle`:
 *
 * - the page: webview/locale.ts, from `#app`'s `data-l10n`;
 * - the extension host: registerChatPanel (src/panel/chatView.ts), from
 *   `vscode.l10n.bundle` (the same bundle `vscode.l10n.t` reads).
 *
 * Without a bundle (English, the unit tests) `l10n.t` gives the message
 * with its {0} placeholders filled.
 *
 * Why `@vscode/l10n` and not a home-made `t`: `vscode-l10n-dev export`
 * (`npm run l10n`) collects only the `l10n.t(` calls of files that import
 * `vscode` or `@vscode/l10n`; a wrapper's calls would be left out of
 * l10n/bundle.l10n.json. So every file with words imports
 * `* as l10n from '@vscode/l10n'` itself.
 */

import * as l10n from '@vscode/l10n';

/** The bundle `l10n.t` translates with on this side; undefined or {}: English. */
export function useBundle(contents: Record<string, string> | undefined): void {
  l10n.config({ contents: contents ?? {} });
}

/** The words of the states the server reports (badges, headers, notices), in the panel's language; an unknown one as given. */
export function stateName(state: string): string {
  const names: Record<string, string> = {
    running: l10n.t('running'),
    completed: l10n.t('completed'),
    failed: l10n.t('failed'),
    aborted: l10n.t('aborted'),
    waiting: l10n.t('waiting'),
    finished: l10n.t('finished'),
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
