/**
 * `@` in the panel's prompt box: the person picks context to attach to the
 * next prompt (files, fuzzy; the current selection; the Problems of the
 * current file or the workspace; the terminal's last output). Each pick
 * becomes `rein/prompt` attachments, which the server turns into tagged
 * blocks the model reads (docs/protocol.md, "Attachments").
 *
 * The terminal's output comes from VS Code's shell-integration API
 * (`window.onDidStartTerminalShellExecution`, `execution.read()`), which
 * VS Code has since 1.93: there is no other API that gives a terminal's
 * output. Without shell integration (an older VS Code, a shell it does not
 * support) the terminal entry says so instead of attaching nothing.
 */

import * as vscode from 'vscode';
import { toLspDiagnostic } from '../bridge/diagnostics';
import type { Attachment } from '../shared/protocol';

/** What the panel shows for one attachment, and what the server gets. */
export interface AttachmentChip {
  label: string;
  attachments: Attachment[];
}

/** The most characters of a terminal's output kept (its tail). */
export const TERMINAL_OUTPUT_CHARS = 20_000;
/** The most files the picker lists. */
export const MAX_PICKER_FILES = 5_000;
/** The most files "Problems in the workspace" attaches (one attachment each). */
export const MAX_PROBLEM_FILES = 15;

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** The text of a terminal's output without colour codes and shell-integration marks. */
export function plainTerminalText(raw: string): string {
  return raw.replace(ANSI, '').replace(/\r\n?/g, '\n');
}

/** The last command each terminal ran with its output (its tail), from shell integration. */
export class TerminalOutputLog {
  private last: { terminal: string; command: string; output: string } | undefined;

  /** Shell integration reported a command; `chunks` is its output as it streams. */
  async record(terminal: string, command: string, chunks: AsyncIterable<string>): Promise<void> {
    let output = '';
    for await (const chunk of chunks) {
      output = (output + chunk).slice(-4 * TERMINAL_OUTPUT_CHARS);
    }
    this.last = { terminal, command, output };
  }

  /** The attachment text, or undefined when no command was seen. */
  lastOutput(): { label: string; text: string } | undefined {
    if (!this.last) {
      return undefined;
    }
    const text = plainTerminalText(this.last.output).slice(-TERMINAL_OUTPUT_CHARS);
    return { label: `Terminal: ${this.last.command}`, text: `$ ${this.last.command}\n${text.trimEnd()}` };
  }
}

interface ShellExecution {
  readonly commandLine: { readonly value: string };
  read(): AsyncIterable<string>;
}
interface ShellIntegrationWindow {
  onDidStartTerminalShellExecution?: vscode.Event<{ terminal: vscode.Terminal; execution: ShellExecution }>;
}

/** Whether this VS Code has the shell-integration execution API. */
export function hasShellIntegrationApi(): boolean {
  return typeof (vscode.window as unknown as ShellIntegrationWindow).onDidStartTerminalShellExecution === 'function';
}

/** Keeps the terminals' last output (when VS Code offers shell integration). */
export function registerTerminalOutput(context: vscode.ExtensionContext, log: TerminalOutputLog): void {
  const started = (vscode.window as unknown as ShellIntegrationWindow).onDidStartTerminalShellExecution;
  if (typeof started !== 'function') {
    return;
  }
  context.subscriptions.push(
    started(({ terminal, execution }) => {
      void log.record(terminal.name, execution.commandLine.value, execution.read()).catch(() => undefined);
    }),
  );
}

function range(selection: vscode.Range): Attachment['range'] {
  return {
    start: { line: selection.start.line, character: selection.start.character },
    end: { line: selection.end.line, character: selection.end.character },
  };
}

/** The active editor's selection (the current line when nothing is selected). */
export function selectionChip(editor: vscode.TextEditor | undefined): AttachmentChip | string {
  if (!editor) {
    return vscode.l10n.t('No editor is active: open a file and select some code first.');
  }
  const document = editor.document;
  const chosen = editor.selection.isEmpty ? document.lineAt(editor.selection.active.line).range : editor.selection;
  const text = document.getText(chosen);
  const name = vscode.workspace.asRelativePath(document.uri);
  return {
    label: `${name}:${chosen.start.line + 1}-${chosen.end.line + 1}`,
    attachments: [{ kind: 'selection', uri: document.uri.toString(), range: range(chosen), text }],
  };
}

/** The Problems of one file. */
export function fileProblemsChip(uri: vscode.Uri): AttachmentChip | string {
  const found = vscode.languages.getDiagnostics(uri);
  const name = vscode.workspace.asRelativePath(uri);
  if (found.length === 0) {
    return vscode.l10n.t('{0} has no problems.', name);
  }
  return {
    label: vscode.l10n.t('Problems: {0}', name),
    attachments: [{ kind: 'problems', uri: uri.toString(), diagnostics: found.map(toLspDiagnostic) }],
  };
}

/** The Problems of the workspace: one attachment per file, errors first, at most MAX_PROBLEM_FILES files. */
export function workspaceProblemsChip(): AttachmentChip | string {
  const files = vscode.languages
    .getDiagnostics()
    .filter(([, found]) => found.length > 0)
    .map(([uri, found]) => ({ uri, found, errors: found.filter((d) => d.severity === vscode.DiagnosticSeverity.Error).length }))
    .sort((a, b) => b.errors - a.errors || a.uri.toString().localeCompare(b.uri.toString()));
  if (files.length === 0) {
    return vscode.l10n.t('The workspace has no problems.');
  }
  const count = files.reduce((sum, file) => sum + file.found.length, 0);
  return {
    label: vscode.l10n.t('Problems: workspace ({0})', count),
    attachments: files.slice(0, MAX_PROBLEM_FILES).map(({ uri, found }) => ({
      kind: 'problems',
      uri: uri.toString(),
      diagnostics: found.map(toLspDiagnostic),
    })),
  };
}

export function terminalChip(log: TerminalOutputLog): AttachmentChip | string {
  if (!hasShellIntegrationApi()) {
    return vscode.l10n.t("This VS Code has no shell-integration API, so Rein cannot read the terminal's output.");
  }
  const last = log.lastOutput();
  if (!last) {
    return vscode.l10n.t('No terminal command was seen yet (the terminal needs shell integration on).');
  }
  return { label: last.label, attachments: [{ kind: 'terminal', text: last.text }] };
}

export function fileChip(uri: vscode.Uri): AttachmentChip {
  return { label: vscode.workspace.asRelativePath(uri), attachments: [{ kind: 'file', uri: uri.toString() }] };
}

type Pick = vscode.QuickPickItem & { chip: () => AttachmentChip | string };

async function fileItems(): Promise<Pick[]> {
  const uris = await vscode.workspace.findFiles('**/*', undefined, MAX_PICKER_FILES);
  return uris
    .map((uri) => {
      const rel = vscode.workspace.asRelativePath(uri);
      const slash = rel.lastIndexOf('/');
      return {
        label: `$(file) ${rel.slice(slash + 1)}`,
        description: slash > 0 ? rel.slice(0, slash) : '',
        chip: () => fileChip(uri),
      };
    })
    .sort((a, b) => a.label.localeCompare(b.label));
}

/** The entries above the files, in the picker's order. */
export function contextItems(log: TerminalOutputLog): Pick[] {
  const active = vscode.window.activeTextEditor?.document.uri;
  const items: Pick[] = [
    { label: `$(selection) ${vscode.l10n.t('Selection')}`, chip: () => selectionChip(vscode.window.activeTextEditor) },
  ];
  if (active) {
    const name = vscode.workspace.asRelativePath(active);
    items.push({ label: `$(warning) ${vscode.l10n.t('Problems in {0}', name)}`, chip: () => fileProblemsChip(active) });
  }
  items.push(
    { label: `$(warning) ${vscode.l10n.t('Problems in the workspace')}`, chip: () => workspaceProblemsChip() },
    { label: `$(terminal) ${vscode.l10n.t("Terminal's last output")}`, chip: () => terminalChip(log) },
  );
  return items;
}

/** Shows the picker; the chosen context, or undefined (cancelled or nothing to attach, said in a message). */
export async function pickMention(log: TerminalOutputLog): Promise<AttachmentChip | undefined> {
  const items: Pick[] = [
    ...contextItems(log),
    { label: vscode.l10n.t('Files'), kind: vscode.QuickPickItemKind.Separator, chip: () => '' },
    ...(await fileItems()),
  ];
  const picked = await vscode.window.showQuickPick(items, {
    placeHolder: vscode.l10n.t('Attach a file, the selection, Problems or the terminal output'),
    matchOnDescription: true,
  });
  if (!picked) {
    return undefined;
  }
  const chip = picked.chip();
  if (typeof chip === 'string') {
    void vscode.window.showInformationMessage(vscode.l10n.t('Rein: {0}', chip));
    return undefined;
  }
  return chip;
}
