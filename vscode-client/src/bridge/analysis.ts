/**
 * Which open documents' diagnostics are of their current text.
 *
 * VS Code says neither which text a diagnostics change was made for nor when it
 * was made: its extension host batches `onDidChangeDiagnostics` and delivers a
 * batch 50 ms after the batch's first change (later on a loaded machine). A
 * language server's diagnostics for the text before an edit, set just before the
 * edit arrived, are delivered after it; taken with the document's version at
 * delivery, they looked fresh for the edit, and the analyzer gate judged the
 * edited file by the old text's diagnostics (an import the next edit used was
 * still "unused": a blocker of nothing).
 *
 * So, per document changed (or opened) since the last delivery, the diagnostics
 * it had at the change are kept: a delivery that includes it was made after the
 * change when its diagnostics are not those very objects (every set makes new
 * ones); the same non-empty diagnostics are the old text's (their version is the
 * one before the change). An empty list before and after cannot be told apart
 * (as before: taken as fresh). A change made before the last delivery is older
 * than every set delivered after it.
 *
 * A document whose current text has no diagnostics change yet is owed one:
 * {@link AnalysisTracker.owed} says so, at most `waitMs` after the change (a
 * file no language server analyses never gets one); `rein/diagnostics` answers
 * `pending` for it, so the server does not take a baseline of text nobody
 * analysed yet, nor judge an edit by the text before it.
 */

import type * as vscode from 'vscode';

/** The documents' diagnostics, as `vscode.languages.getDiagnostics`. */
export type DiagnosticsOf = (uri: string) => readonly vscode.Diagnostic[];

interface Owed {
  /** The document's version before the change: the version of diagnostics that are not newer. */
  before: number;
  /** It was opened (not changed): its first analysis is owed, whether or not anything analyses it. */
  opened: boolean;
  /** Its diagnostics at the change (the objects: a newer set has other ones). */
  diagnostics: readonly vscode.Diagnostic[];
  /** The change happened after the last delivery of diagnostics changes. */
  sinceDelivery: boolean;
  /** When the wait for its diagnostics ends (ms). */
  until: number;
}

function same(a: readonly vscode.Diagnostic[], b: readonly vscode.Diagnostic[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

export class AnalysisTracker {
  private readonly owedBy = new Map<string, Owed>();
  /** Documents some language server published diagnostics for (since they were opened). */
  private readonly analysed = new Set<string>();

  constructor(
    private readonly diagnosticsOf: DiagnosticsOf,
    private readonly now: () => number = Date.now,
    private readonly waitMs = 3000,
  ) {}

  /** A document was opened: its first analysis is owed. */
  opened(uri: string, version: number): void {
    this.analysed.delete(uri);
    this.owe(uri, version - 1, true);
  }

  /** A document open before these were told (at start): analysed when it has diagnostics. */
  known(uri: string): void {
    if (this.diagnosticsOf(uri).length > 0) {
      this.analysed.add(uri);
    }
  }

  /**
   * A document's text changed (from version `before`). Its analysis is owed
   * ({@link owed}) when a language server analyses it (a file none does would
   * only wait out the bound): when one published for it since it was opened.
   */
  changed(uri: string, before: number): void {
    this.owe(uri, before, false);
  }

  closed(uri: string): void {
    this.owedBy.delete(uri);
    this.analysed.delete(uri);
  }

  /**
   * One delivery of diagnostics changes: the version each changed document's
   * diagnostics are of (`current`: its version now; undefined: not open).
   * After it, every change before it is older than any later set.
   */
  delivered(uris: readonly string[], current: (uri: string) => number | undefined): Map<string, number> {
    const versions = new Map<string, number>();
    for (const uri of uris) {
      const version = current(uri);
      if (version === undefined) {
        continue;
      }
      this.analysed.add(uri);
      const owed = this.owedBy.get(uri);
      const now = this.diagnosticsOf(uri);
      if (owed !== undefined && owed.sinceDelivery && now.length > 0 && same(now, owed.diagnostics)) {
        versions.set(uri, owed.before); // set before the change: the old text's
        continue;
      }
      this.owedBy.delete(uri);
      versions.set(uri, version);
    }
    for (const owed of this.owedBy.values()) {
      owed.sinceDelivery = false;
    }
    return versions;
  }

  /** Whether the document's current text still waits for its diagnostics. */
  owed(uri: string): boolean {
    const owed = this.owedBy.get(uri);
    if (owed === undefined) {
      return false;
    }
    if (owed.until <= this.now()) {
      this.owedBy.delete(uri);
      return false;
    }
    return owed.opened || this.analysed.has(uri);
  }

  /** Whether any open document waits for its diagnostics. */
  anyOwed(): boolean {
    return [...this.owedBy.keys()].some((uri) => this.owed(uri));
  }

  private owe(uri: string, before: number, opened: boolean): void {
    this.owedBy.set(uri, {
      before,
      opened: opened || (this.owedBy.get(uri)?.opened ?? false),
      diagnostics: this.diagnosticsOf(uri),
      sinceDelivery: true,
      until: this.now() + this.waitMs,
    });
  }
}
