/**
 * The chat panel's page. It draws what the extension host sends (see
 * src/shared/messages.ts) and posts back what the person does. DOM nodes are
 * keyed by item id and rebuilt only when the item's `rev` changed; open or
 * closed rows keep their state across updates.
 *
 * Text goes into the DOM as text nodes; the only HTML strings are the
 * Markdown renderer's (escaped by construction) and the constant icons.
 */

import { stateName } from './locale';
import * as l10n from '@vscode/l10n';
import type { ConnectionStateName, HostMessage, SendMode, WebviewMessage } from '../src/shared/messages';
import type { Attachment, PromptMode, SessionSummary, SlashCommand } from '../src/shared/protocol';
import { sessionLabel } from '../src/shared/sessionLabel';
import { formatTokens, totalTokens, type Header } from '../src/shared/viewModel';
import { approvalsSection } from './approvals';
import { fillBanner } from './banner';
import { append, h, icon, usageText } from './dom';
import { renderItem } from './items';
import { isolatedSection } from './isolated';
import { mcpSection } from './mcp';
import { previewSection } from './preview';
import { setupSection } from './setup';

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();

/** What the page keeps across reloads (vscode.setState). */
interface SavedState {
  draft?: string;
  runMode?: PromptMode;
  previewOpen?: boolean;
  mcpOpen?: boolean;
  approvalsOpen?: boolean;
}

const saved: SavedState = (vscode.getState() as SavedState | undefined) ?? {};
let runMode: PromptMode = saved.runMode === 'plan' ? 'plan' : 'agent';

// ------------------------------------------------------------------ page

const app = document.getElementById('app') ?? document.body;
const sessionSelect = h('select', { class: 'session-select', title: l10n.t('Sessions'), 'aria-label': l10n.t('Session') });
const newButton = h('button', { class: 'icon-button', title: l10n.t('New session'), 'aria-label': l10n.t('New session') }, icon('plus'));
const isolatedButton = h(
  'button',
  { class: 'icon-button', title: l10n.t('New isolated session: it runs in its own copy of the folder; you keep its changes when it is done'), 'aria-label': l10n.t('New isolated session') },
  icon('history'),
);
const refreshButton = h('button', { class: 'icon-button', title: l10n.t('Reload the session list'), 'aria-label': l10n.t('Reload sessions') }, icon('refresh'));
const statusLine = h('div', { class: 'status-line' });
const banner = h('div', { class: 'banner hidden' });
/** The run's tokens, context share and cost (header.costLine). */
const costLineEl = h('div', { class: 'cost-line hidden', title: l10n.t('Tokens in and out, the context window in use, and the cost when the price is known') });
/** The model's request waits to be retried (header.retry): cleared when the reply starts. */
const retryLineEl = h('div', { class: 'retry-line hidden', role: 'status' });
/** A run ended on its budget: the reason and Continue. */
const budgetText = h('span', { class: 'budget-text' });
const continueButton = h('button', { class: 'link-button budget-continue', title: l10n.t('Go on: send "continue" as a new prompt') }, l10n.t('Continue'));
const budgetEl = h('div', { class: 'budget-stop hidden', role: 'status' }, icon('warning'), budgetText, continueButton);
const timeline = h('div', { class: 'timeline', role: 'log', 'aria-live': 'polite' });
const empty = h(
  'div',
  { class: 'empty' },
  h('div', { class: 'empty-title' }, 'Rein'),
  h('div', {}, l10n.t('Describe a change. Rein edits through the editor and checks the result with the editor\u2019s own diagnostics before it says done.')),
  h('div', { class: 'muted' }, l10n.t('Enter sends · Shift+Enter new line · while a run is active Enter steers it and Alt+Enter queues a follow-up')),
  h('div', { class: 'muted' }, l10n.t('@ attaches a file, the selection, Problems or the terminal\u2019s output')),
);
const input = h('textarea', {
  class: 'prompt-input',
  rows: '3',
  placeholder: l10n.t('Ask Rein to change something…'),
  'aria-label': l10n.t('Prompt'),
});
/** The context picked with `@`, shown as chips above the prompt box until sent with a new prompt. */
let chips: { label: string; attachments: Attachment[] }[] = [];
const chipRow = h('div', { class: 'attachments hidden', 'aria-label': l10n.t('Attachments') });
/** The slash commands `/` lists (`rein/commands`, asked each time `/` starts the prompt). */
const commandList = h('div', { class: 'command-list', role: 'listbox', 'aria-label': l10n.t('Commands') });
commandList.hidden = true;
let slashCommands: SlashCommand[] = [];
const mentionButton = h('button', { class: 'icon-button mention-button', title: l10n.t('Attach context (@)'), 'aria-label': l10n.t('Attach context') }, '@');
const sendLabel = h('span', { class: 'send-label' }, l10n.t('Send'));
const sendButton = h('button', { class: 'primary', title: l10n.t('Send (Enter)') }, icon('send'), sendLabel);
const queueButton = h('button', { class: 'secondary hidden', title: l10n.t('Queue as a follow-up (Alt+Enter)') }, icon('queue'), l10n.t('Queue'));
const stopButton = h('button', { class: 'secondary danger hidden', title: l10n.t('Abort the run') }, icon('stop'), l10n.t('Stop'));
const MODES: Record<PromptMode, { label: string; title: string; placeholder: string }> = {
  agent: {
    label: l10n.t('Agent'),
    title: l10n.t('Agent mode: Rein works on the task directly'),
    placeholder: l10n.t('Ask Rein to change something…'),
  },
  plan: {
    label: l10n.t('Plan'),
    title: l10n.t('Plan mode: Rein first makes a plan, then carries it out step by step'),
    placeholder: l10n.t('Describe a task; Rein plans it, then does it step by step…'),
  },
};
const modeButtons = (Object.keys(MODES) as PromptMode[]).map((mode) =>
  h('button', { class: 'mode-option', role: 'radio', 'data-mode': mode, title: MODES[mode].title }, MODES[mode].label),
);
const modelButton = h(
  'button',
  { class: 'model-button secondary', title: l10n.t('The model of the next turn: click to choose another'), 'aria-label': l10n.t('Model') },
  icon('chevron'),
  h('span', { class: 'model-label' }, l10n.t('Model')),
);
modelButton.addEventListener('click', () => vscode.postMessage({ type: 'pickModel' }));
const modeToggle = h('div', { class: 'mode-toggle', role: 'radiogroup', 'aria-label': l10n.t('Mode of a new prompt') }, ...modeButtons);
const preview = previewSection(
  (action) => vscode.postMessage({ type: 'preview', action }),
  saved.previewOpen === true,
  () => saveState(),
);

const mcp = mcpSection(saved.mcpOpen === true, () => saveState());
const approvals = approvalsSection(
  saved.approvalsOpen === true,
  () => saveState(),
  (id) => vscode.postMessage({ type: 'revokeApproval', id }),
);

const isolated = isolatedSection(
  (sessionId, action) => vscode.postMessage({ type: 'isolatedAction', sessionId, action }),
  (sessionId, hunk, keep) => vscode.postMessage({ type: 'isolatedHunk', sessionId, hunk, keep }),
);
const setup = setupSection(() => vscode.postMessage({ type: 'refreshSetup' }));

app.append(
  h('div', { class: 'toolbar' }, sessionSelect, newButton, isolatedButton, refreshButton),
  statusLine,
  costLineEl,
  retryLineEl,
  budgetEl,
  banner,
  preview.el,
  mcp.el,
  approvals.el,
  isolated.el,
  setup.el,
  timeline,
  h(
    'div',
    { class: 'composer' },
    chipRow,
    commandList,
    input,
    h('div', { class: 'composer-actions' }, modeToggle, modelButton, mentionButton, stopButton, h('span', { class: 'spacer' }), queueButton, sendButton),
  ),
);
timeline.append(empty);

const nodes = new Map<string, { rev: number; el: HTMLElement }>();
let header: Header = { sessionId: null, status: 'idle', turn: 0, runUsage: {}, sessionUsage: {} };
let connection: ConnectionStateName = 'stopped';

function keepOpenState(old: HTMLElement, fresh: HTMLElement): void {
  if (old instanceof HTMLDetailsElement && fresh instanceof HTMLDetailsElement) {
    fresh.open = old.open;
  }
  const oldInner = old.querySelectorAll('details[data-key]');
  const freshInner = fresh.querySelectorAll('details[data-key]');
  oldInner.forEach((detail, index) => {
    const target = freshInner[index];
    if (detail instanceof HTMLDetailsElement && target instanceof HTMLDetailsElement) {
      target.open = detail.open;
    }
  });
}

function applyUpdate(message: Extract<HostMessage, { type: 'update' }>): void {
  const nearBottom = timeline.scrollTop + timeline.clientHeight >= timeline.scrollHeight - 48;
  if (message.reset) {
    for (const { el } of nodes.values()) {
      el.remove();
    }
    nodes.clear();
  }
  for (const item of message.items) {
    const fresh = renderItem(item);
    fresh.dataset.id = item.id;
    const old = nodes.get(item.id);
    if (old) {
      keepOpenState(old.el, fresh);
      old.el.replaceWith(fresh);
    }
    nodes.set(item.id, { rev: item.rev, el: fresh });
  }
  const live = new Set(message.order);
  for (const [id, { el }] of nodes) {
    if (!live.has(id)) {
      el.remove();
      nodes.delete(id);
    }
  }
  // Put nodes in order, moving only those out of place.
  let previous: Element = empty;
  for (const id of message.order) {
    const node = nodes.get(id);
    if (!node) {
      continue;
    }
    if (previous.nextElementSibling !== node.el) {
      previous.after(node.el);
    }
    previous = node.el;
  }
  empty.classList.toggle('hidden', message.order.length > 0);
  if (message.preview) {
    preview.render(message.preview, connection === 'running');
  }
  mcp.render(message.mcp);
  approvals.render(message.approvals);
  setHeader(message.header);
  if (nearBottom || message.reset) {
    timeline.scrollTop = timeline.scrollHeight;
  }
}

function setHeader(next: Header): void {
  header = next;
  statusLine.replaceChildren();
  const running = header.status === 'running';
  const tokens = totalTokens(header.sessionUsage);
  if (running) {
    append(
      statusLine,
      icon('spinner', 'spin'),
      h('span', { class: 'state running' }, l10n.t('Running')),
      header.turn ? h('span', { class: 'nowrap' }, l10n.t('· turn {0}', header.turn)) : null,
      h('span', { class: 'nowrap' }, l10n.t('· {0} tokens', formatTokens(totalTokens(header.runUsage)))),
    );
  } else {
    append(
      statusLine,
      h('span', { class: `dot-state ${header.lastRunStatus ?? 'idle'}` }),
      h('span', { class: 'state' }, l10n.t('Idle')),
      header.lastRunStatus ? h('span', { class: 'nowrap' }, l10n.t('· last run {0}', stateName(header.lastRunStatus))) : null,
    );
  }
  if (tokens) {
    statusLine.append(h('span', { class: 'muted right nowrap', title: l10n.t('This session: {0}', usageText(header.sessionUsage)) }, l10n.t('{0} tokens', formatTokens(tokens))));
  }
  statusLine.classList.toggle('running', running);
  costLineEl.textContent = header.costLine ?? '';
  costLineEl.classList.toggle('hidden', !header.costLine);
  retryLineEl.textContent = header.retry ?? '';
  retryLineEl.classList.toggle('hidden', !header.retry);
  budgetText.textContent = header.budgetStop ? l10n.t('Stopped: {0}', header.budgetStop.replace(/^budget: /, '')) : '';
  budgetEl.classList.toggle('hidden', !header.budgetStop || running);
  sendLabel.textContent = running ? l10n.t('Steer') : l10n.t('Send');
  sendButton.title = running ? l10n.t('Steer the active run (Enter)') : l10n.t('Send (Enter)');
  queueButton.classList.toggle('hidden', !running);
  stopButton.classList.toggle('hidden', !running);
  modeToggle.classList.toggle('hidden', running); // it is for a new prompt; Enter steers now
  input.placeholder = running
    ? l10n.t('Steer the run (Enter) or queue a follow-up (Alt+Enter)…')
    : MODES[runMode].placeholder;
  updateSendEnabled();
}

function setRunMode(mode: PromptMode): void {
  runMode = mode;
  for (const option of modeButtons) {
    const selected = option.dataset.mode === mode;
    option.setAttribute('aria-checked', String(selected));
    option.classList.toggle('selected', selected);
    option.tabIndex = selected ? 0 : -1;
  }
  if (header.status !== 'running') {
    input.placeholder = MODES[mode].placeholder;
  }
  saveState();
}

function setSessions(sessions: SessionSummary[], current: string | null): void {
  sessionSelect.replaceChildren();
  const currentKnown = sessions.some((s) => s.id === current);
  if (current === null || !currentKnown) {
    sessionSelect.append(h('option', { value: current ?? '' }, current === null ? l10n.t('New session') : l10n.t('Current session')));
  }
  for (const session of sessions) {
    const option = h('option', { value: session.id }, sessionLabel(session));
    option.title = l10n.t('{0} ({1})', session.title, stateName(session.status));
    sessionSelect.append(option);
  }
  sessionSelect.value = current ?? '';
}

function setConnection(state: ConnectionStateName, detail: string | undefined): void {
  connection = state;
  fillBanner(banner, state, detail, (command) => vscode.postMessage({ type: 'command', command }));
  preview.render(undefined, state === 'running');
  updateSendEnabled();
}

function updateSendEnabled(): void {
  const ready = connection === 'running';
  sendButton.disabled = !ready || !input.value.trim();
  queueButton.disabled = !ready || !input.value.trim();
}

function renderChips(): void {
  chipRow.replaceChildren(
    ...chips.map((chip, index) => {
      const remove = h('button', { class: 'chip-remove', title: l10n.t('Remove {0}', chip.label), 'aria-label': l10n.t('Remove {0}', chip.label) }, '\u00d7');
      remove.addEventListener('click', () => {
        chips = chips.filter((_, i) => i !== index);
        renderChips();
      });
      return h('span', { class: 'chip', title: chip.label }, h('span', { class: 'chip-label' }, `@${chip.label}`), remove);
    }),
  );
  chipRow.classList.toggle('hidden', chips.length === 0);
}

function send(mode: SendMode): void {
  const text = input.value.trim();
  if (!text || connection !== 'running') {
    return;
  }
  // Attachments go with a new prompt; while a run is active they wait for the next one.
  const fresh = header.status !== 'running';
  const attachments = fresh ? chips.flatMap((chip) => chip.attachments) : [];
  vscode.postMessage(attachments.length ? { type: 'send', text, mode, runMode, attachments } : { type: 'send', text, mode, runMode });
  if (fresh) {
    chips = [];
    renderChips();
  }
  input.value = '';
  saveState();
  updateSendEnabled();
}

function saveState(): void {
  const state: SavedState = {
    draft: input.value,
    runMode,
    previewOpen: preview.el.open,
    mcpOpen: mcp.el.open,
    approvalsOpen: approvals.el.open,
  };
  vscode.setState(state);
}

// ------------------------------------------------------------------ events

continueButton.addEventListener('click', () => {
  if (connection === 'running') {
    vscode.postMessage({ type: 'continueRun' });
  }
});

input.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && !commandList.hidden) {
    commandList.hidden = true;
    return;
  }
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send(event.altKey && header.status === 'running' ? 'followUp' : 'auto');
  }
});
/** The command name typed so far, while the prompt is `/` and a name (no space yet). */
function commandQuery(): string | undefined {
  return /^\/[^\s/]*$/.test(input.value) ? input.value.slice(1) : undefined;
}

function renderCommands(): void {
  const query = commandQuery();
  const shown = query === undefined ? [] : slashCommands.filter((c) => c.name.startsWith(query));
  commandList.replaceChildren(
    ...shown.map((command) => {
      const name = `/${command.name}${command.argumentHint ? ` ${command.argumentHint}` : ''}`;
      const item = h(
        'button',
        { class: 'command-item', role: 'option', title: command.source },
        h('span', { class: 'command-name' }, name),
        h('span', { class: 'command-description' }, command.description),
      );
      item.addEventListener('click', () => {
        input.value = `/${command.name} `;
        commandList.hidden = true;
        input.focus();
        saveState();
        updateSendEnabled();
      });
      return item;
    }),
  );
  commandList.hidden = shown.length === 0;
}

input.addEventListener('input', (event) => {
  if (input.value === '/') {
    vscode.postMessage({ type: 'listCommands' });
  }
  renderCommands();
  // `@` typed at the start or after a space opens the context picker; the chip replaces it.
  const at = input.selectionStart - 1;
  if (event instanceof InputEvent && event.data === '@' && input.value[at] === '@' && (at === 0 || /\s/.test(input.value[at - 1] ?? ''))) {
    input.value = input.value.slice(0, at) + input.value.slice(at + 1);
    input.setSelectionRange(at, at);
    vscode.postMessage({ type: 'mention' });
  }
  saveState();
  updateSendEnabled();
});
mentionButton.addEventListener('click', () => vscode.postMessage({ type: 'mention' }));
for (const option of modeButtons) {
  option.addEventListener('click', () => setRunMode(option.dataset.mode === 'plan' ? 'plan' : 'agent'));
}
modeToggle.addEventListener('keydown', (event) => {
  // A radio group: the arrow keys move the choice.
  if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
    event.preventDefault();
    const next: PromptMode = runMode === 'agent' ? 'plan' : 'agent';
    setRunMode(next);
    modeButtons.find((option) => option.dataset.mode === next)?.focus();
  }
});
sendButton.addEventListener('click', () => send('auto'));
queueButton.addEventListener('click', () => send('followUp'));
stopButton.addEventListener('click', () => vscode.postMessage({ type: 'abort' }));
newButton.addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
isolatedButton.addEventListener('click', () => vscode.postMessage({ type: 'newIsolated' }));
refreshButton.addEventListener('click', () => vscode.postMessage({ type: 'refreshSessions' }));
sessionSelect.addEventListener('change', () => {
  if (sessionSelect.value) {
    vscode.postMessage({ type: 'selectSession', sessionId: sessionSelect.value });
  }
});

timeline.addEventListener('click', (event) => {
  const target = event.target instanceof Element ? event.target : null;
  const command = target?.closest('[data-command]');
  if (command instanceof HTMLElement && command.dataset.command === 'setApiKey') {
    event.preventDefault();
    vscode.postMessage({ type: 'command', command: 'setApiKey' });
    return;
  }
  const diff = target?.closest('[data-diff]');
  if (diff instanceof HTMLElement && diff.dataset.diff) {
    event.preventDefault();
    event.stopPropagation();
    vscode.postMessage({ type: 'openDiff', itemId: diff.dataset.diff });
    return;
  }
  const checkpoint = target?.closest('[data-ckpt]');
  if (checkpoint instanceof HTMLElement && checkpoint.dataset.ckpt && checkpoint.dataset.run) {
    event.preventDefault();
    event.stopPropagation();
    if (!(checkpoint instanceof HTMLButtonElement && checkpoint.disabled)) {
      const message: Extract<WebviewMessage, { type: 'checkpoint' }> = {
        type: 'checkpoint',
        action: checkpoint.dataset.ckpt as Extract<WebviewMessage, { type: 'checkpoint' }>['action'],
        runId: checkpoint.dataset.run,
      };
      if (checkpoint.dataset.turn !== undefined) {
        message.turn = Number(checkpoint.dataset.turn);
      }
      if (checkpoint.dataset.file !== undefined) {
        message.path = checkpoint.dataset.file;
      }
      vscode.postMessage(message);
    }
    return;
  }
  const decision = target?.closest('[data-review]');
  if (decision instanceof HTMLElement && decision.dataset.run && (decision.dataset.review === 'keep' || decision.dataset.review === 'undo')) {
    event.preventDefault();
    event.stopPropagation();
    const message: Extract<WebviewMessage, { type: 'review' }> = { type: 'review', runId: decision.dataset.run, decision: decision.dataset.review };
    if (decision.dataset.file !== undefined) {
      message.path = decision.dataset.file;
    }
    if (decision.dataset.hunk !== undefined) {
      message.hunk = Number(decision.dataset.hunk);
    }
    vscode.postMessage(message);
    return;
  }
  const link = target?.closest('[data-href]');
  if (link instanceof HTMLElement && link.dataset.href) {
    event.preventDefault();
    vscode.postMessage({ type: 'openLink', href: link.dataset.href });
    return;
  }
  const file = target?.closest('[data-path]');
  if (file instanceof HTMLElement && file.dataset.path) {
    event.preventDefault();
    const line = file.dataset.line === undefined ? undefined : Number(file.dataset.line);
    const character = file.dataset.char === undefined ? undefined : Number(file.dataset.char);
    vscode.postMessage({ type: 'openFile', path: file.dataset.path, line, character });
  }
});

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  switch (message.type) {
    case 'update':
      applyUpdate(message);
      break;
    case 'sessions':
      setSessions(message.sessions, message.current);
      break;
    case 'connection':
      setConnection(message.state, message.detail);
      break;
    case 'commands':
      slashCommands = message.commands;
      renderCommands();
      break;
    case 'isolated':
      isolated.render(message.runs);
      break;
    case 'setup':
      setup.render(message.view);
      break;
    case 'attachment':
      chips = [...chips, { label: message.label, attachments: message.attachments }];
      renderChips();
      input.focus();
      break;
    case 'model': {
      const label = modelButton.querySelector('.model-label');
      if (label) {
        label.textContent = message.label;
      }
      modelButton.title = l10n.t('Model of the next turn: {0}. Click to choose another.', message.label);
      break;
    }
    case 'focusInput':
      if (message.text) {
        input.value = message.text;
        saveState();
        updateSendEnabled();
      }
      input.focus();
      break;
  }
});

if (saved.draft) {
  input.value = saved.draft;
}
setRunMode(runMode);
setHeader(header);
setSessions([], null);
setConnection('starting', undefined);
vscode.postMessage({ type: 'ready' });
