/**
 * Two sections under the MCP servers: the isolated runs (one row per copy
 * of the folder: its title, its state, its verdict, its changed files, and
 * Open / Abort / Keep all / Discard / Keep as branch; hidden while there is
 * none) and the setup view (the hooks, skills, custom agents, commands,
 * instruction files and MCP servers the server found, where each came from,
 * whether it is used and why not; asked from the host each time it opens).
 */

import * as l10n from '@vscode/l10n';
import type { EditorCoverage, IsolatedRowAction, IsolatedRunView, SetupView } from '../src/shared/isolatedView';
import { setupProblems } from '../src/shared/isolatedView';
import type { SetupItem } from '../src/shared/protocol';
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
