/**
 * The page's strings in the editor's language. The extension puts
 * `vscode.l10n.bundle` (undefined in English) into the page as the JSON
 * attribute `data-l10n` of `#app` (no inline script: the page's CSP allows
 * only the nonce'd bundle); this configures `@vscode/l10n` with it
 * (src/shared/l10n.ts) before any other module of the page runs, so every
 * `l10n.t('...')` after it is translated, the shared code's too. Without a
 * bundle, or with one that does not parse, the English text stays.
 *
 * Import it first in main.ts.
 */

import { useBundle } from '../src/shared/l10n';

export { stateName } from '../src/shared/l10n';

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

useBundle(bundle());
