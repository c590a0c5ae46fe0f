/**
 * A stand-in for the Python language server a person would have: publishes
 * `ruff check` diagnostics for the Python buffers (their unsaved text, as an
 * editor's analyzer does), so the end-to-end test has real editor
 * diagnostics for Rein's analyzer gate. Test-only; never shipped.
 */

import { spawn } from 'node:child_process';
import * as vscode from 'vscode';

interface RuffMessage {
  code: string | null;
  message: string;
  url?: string | null;
  location: { row: number; column: number };
  end_location: { row: number; column: number };
}

function ruffCheck(ruff: string, document: vscode.TextDocument): Promise<RuffMessage[]> {
  return new Promise((resolve) => {
    const child = spawn(ruff, ['check', '--output-format=json', '--no-cache', '--exit-zero', '--stdin-filename', document.uri.fsPath, '-'], {
      cwd: vscode.workspace.getWorkspaceFolder(document.uri)?.uri.fsPath,
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', () => resolve([]));
    child.on('close', () => {
      try {
        resolve(JSON.parse(out) as RuffMessage[]);
      } catch {
        resolve([]);
      }
    });
    child.stdin.end(document.getText());
  });
}

export function activate(context: vscode.ExtensionContext): void {
  const ruff = process.env.REIN_E2E_RUFF ?? 'ruff';
  const collection = vscode.languages.createDiagnosticCollection('ruff');
  const timers = new Map<string, NodeJS.Timeout>();
  const check = async (document: vscode.TextDocument): Promise<void> => {
    if (document.languageId !== 'python' || document.uri.scheme !== 'file') {
      return;
    }
    const version = document.version;
    const messages = await ruffCheck(ruff, document);
    if (document.isClosed || document.version !== version) {
      return; // a newer check follows
    }
    collection.set(
      document.uri,
      messages.map((m) => {
        const range = new vscode.Range(m.location.row - 1, m.location.column - 1, m.end_location.row - 1, m.end_location.column - 1);
        const diagnostic = new vscode.Diagnostic(range, m.message, vscode.DiagnosticSeverity.Error);
        diagnostic.source = 'Ruff';
        if (m.code) {
          diagnostic.code = m.url ? { value: m.code, target: vscode.Uri.parse(m.url) } : m.code;
        }
        return diagnostic;
      }),
    );
  };
  const schedule = (document: vscode.TextDocument): void => {
    const key = document.uri.toString();
    clearTimeout(timers.get(key));
    timers.set(
      key,
      setTimeout(() => {
        timers.delete(key);
        void check(document);
      }, 100),
    );
  };
  context.subscriptions.push(
    collection,
    vscode.workspace.onDidOpenTextDocument(schedule),
    vscode.workspace.onDidChangeTextDocument((event) => schedule(event.document)),
    vscode.workspace.onDidCloseTextDocument((document) => collection.delete(document.uri)),
  );
  vscode.workspace.textDocuments.forEach(schedule);
}

export function deactivate(): void {}
