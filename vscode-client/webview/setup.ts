/**
 * The *Your setup* section: the hooks, skills, custom agents, commands,
 * instruction files and MCP servers the server found, where each came
 * from, whether it is used and why not, and what the editor's diagnostics
 * were seen to cover; asked from the host each time it opens.
 */

import * as l10n from '@vscode/l10n';
import type { SetupItem } from '../src/shared/protocol';
import { setupProblems, type EditorCoverage, type SetupView } from '../src/shared/setupView';
import { h, icon } from './dom';
import type { Section } from './isolated';

const KIND_TITLE: Record<string, () => string> = {
  hook: () => l10n.t('Hooks'),
  skill: () => l10n.t('Skills'),
  agent: () => l10n.t('Custom agents'),
  command: () => l10n.t('Commands'),
  instructions: () => l10n.t('Instruction files'),
  mcp: () => l10n.t('MCP servers'),
};

const STATUS_NAME: Record<string, () => string> = {
  used: () => l10n.t('used'),
  invalid: () => l10n.t('invalid'),
  'not trusted': () => l10n.t('not trusted'),
  off: () => l10n.t('off'),
};

function setupRow(item: SetupItem): HTMLElement {
  const status = item.status.replace(' ', '-');
  return h(
    'li',
    { class: `setup-item status-${status}`, 'data-kind': item.kind, 'data-name': item.name },
    h('span', { class: 'setup-name' }, item.name),
    h('span', { class: `badge setup-status ${status}` }, (STATUS_NAME[item.status] ?? (() => item.status))()),
    h('span', { class: 'setup-source muted' }, item.source),
    item.detail ? h('div', { class: 'setup-detail muted' }, item.detail) : null,
  );
}

/** What the analyzer gate reads in this window: the editor's diagnostics, and what they were seen to cover. */
function coverageGroup(coverage: EditorCoverage): HTMLElement {
  const seen = coverage.seen.map((entry) =>
    h('li', { class: 'coverage-seen', 'data-ext': entry.ext }, h('span', { class: 'setup-name' }, entry.ext), entry.sources.join(', ') || l10n.t('reported on, no problem now')),
  );
  return h(
    'div',
    { class: 'setup-group coverage', 'data-kind': 'analyzers' },
    h('div', { class: 'setup-kind' }, l10n.t('Analyzers')),
    h('div', { class: 'setup-detail muted' }, l10n.t("The editor's diagnostics (of every extension that reports them); isolated runs use Rein's own analyzers, listed with each run.")),
    seen.length ? h('ul', { class: 'setup-items' }, ...seen) : h('div', { class: 'setup-none muted' }, l10n.t('no diagnostics seen yet')),
    coverage.unseen.length
      ? h('div', { class: 'coverage-unseen' }, l10n.t('Open files no analyzer reported on (none analyses them, or they have no problem): {0}', coverage.unseen.join(', ')))
      : null,
  );
}

/** The setup view; `onOpen` asks the host for `rein/setup` (each time it opens, and Refresh). */
export function setupSection(onOpen: () => void): Section<SetupView> {
  const badge = h('span', { class: 'badge setup-problems hidden' });
  const refresh = h('button', { class: 'icon-button setup-refresh', title: l10n.t('Read the setup again'), 'aria-label': l10n.t('Read the setup again') }, icon('refresh'));
  const body = h('div', { class: 'setup-body' }, h('div', { class: 'muted' }, l10n.t('Loading…')));
  const el = h(
    'details',
    { class: 'setup-section' },
    h(
      'summary',
      { title: l10n.t('Your hooks, skills, custom agents, commands, instruction files and MCP servers, as Rein found them') },
      icon('chevron', 'chevron'),
      icon('list', 'setup-title-icon'),
      h('span', { class: 'setup-title' }, l10n.t('Your setup')),
      badge,
      refresh,
    ),
    body,
  );
  el.addEventListener('toggle', () => {
    if (el.open) {
      onOpen();
    }
  });
  refresh.addEventListener('click', (event) => {
    event.preventDefault();
    el.open = true;
    onOpen();
  });

  function render(view: SetupView): void {
    const problems = setupProblems(view);
    badge.textContent = problems === 1 ? l10n.t('1 not used') : l10n.t('{0} not used', problems);
    badge.classList.toggle('hidden', problems === 0);
    const coverage = view.coverage ? coverageGroup(view.coverage) : null;
    if (view.error) {
      body.replaceChildren(h('div', { class: 'setup-error' }, l10n.t('The server cannot list the setup: {0}', view.error)));
      if (coverage) {
        body.append(coverage);
      }
      return;
    }
    body.replaceChildren(
      ...(coverage ? [coverage] : []),
      ...view.groups.map((group) => {
        const empty = group.kind === 'mcp' && !view.mcpLoaded ? l10n.t('not loaded yet (a session loads them)') : l10n.t('none found');
        return h(
          'div',
          { class: 'setup-group', 'data-kind': group.kind },
          h('div', { class: 'setup-kind' }, (KIND_TITLE[group.kind] ?? (() => group.kind))()),
          group.items.length ? h('ul', { class: 'setup-items' }, ...group.items.map(setupRow)) : h('div', { class: 'setup-none muted' }, empty),
        );
      }),
    );
  }

  return { el, render };
}
