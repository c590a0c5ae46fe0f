/**
 * The editor's diagnostics for the server: `rein/diagnostics` answers with what
 * every language server in the editor currently reports, and
 * `rein/diagnosticsChanged` tells the server which files changed (batched).
 * Asked about files that are not open, it opens (loads) them first, so the
 * editor's language servers analyse them, and answers `pending: true` until
 * their diagnostics first change (at most `openWaitMs`); so it does for an open
 * document whose current text has no diagnostics yet (./analysis.ts).
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../connection';
import { AnalysisTracker } from './analysis';
import {
  Methods,
  type DiagnosticsParams,
  type DiagnosticsResult,
  type LspDiagnostic,
  type LspRange,
} from '../shared/protocol';

function toLspRange(range: vscode.Range): LspRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

/** vscode.DiagnosticSeverity is 0-based (Error = 0); LSP is 1-based (Error = 1). */
export function toLspSeverity(severity: vscode.DiagnosticSeverity): 1 | 2 | 3 | 4 {
  switch (severity) {
    case vscode.DiagnosticSeverity.Error:
      return 1;
    case vscode.DiagnosticSeverity.Warning:
      return 2;
    case vscode.DiagnosticSeverity.Information:
      return 3;
    default:
      return 4;
  }
}

export function toLspDiagnostic(diagnostic: vscode.Diagnostic): LspDiagnostic {
  const result: LspDiagnostic = {
    range: toLspRange(diagnostic.range),
    severity: toLspSeverity(diagnostic.severity),
    message: diagnostic.message,
  };
  const code = diagnostic.code;
  if (typeof code === 'string' || typeof code === 'number') {
    result.code = code;
  } else if (code !== undefined) {
    result.code = code.value;
    result.codeDescription = { href: code.target.toString() };
  }
  if (diagnostic.source) {
    result.source = diagnostic.source;
  }
  if (diagnostic.tags?.length) {
    result.tags = [...diagnostic.tags];
  }
  if (diagnostic.relatedInformation?.length) {
    result.relatedInformation = diagnostic.relatedInformation.map((info) => ({
      location: { uri: info.location.uri.toString(), range: toLspRange(info.location.range) },
      message: info.message,
    }));
  }
  return result;
}

/** Schemes whose diagnostics the server can act on. */
const SCHEMES: ReadonlySet<string> = new Set(['file', 'untitled']);

/** Answers `rein/diagnostics`: the given files, or every file with problems (null). */
export function collectDiagnostics(params: Partial<DiagnosticsParams> | null): DiagnosticsResult {
  if (params?.uris == null) {
    const items = vscode.languages
      .getDiagnostics()
      .filter(([uri, diagnostics]) => SCHEMES.has(uri.scheme) && diagnostics.length > 0)
      .map(([uri, diagnostics]) => ({ uri: uri.toString(), diagnostics: diagnostics.map(toLspDiagnostic) }));
    return { items };
  }
  return {
    items: params.uris.map((uri) => ({
      uri,
      diagnostics: vscode.languages.getDiagnostics(vscode.Uri.parse(uri)).map(toLspDiagnostic),
    })),
  };
}

/**
 * Answers `rein/diagnostics` (see docs/protocol.md): opens the asked documents
 * that are not open, as `workspace.openTextDocument` does (without showing
 * them), and says `pending` while a document it opened has had no diagnostics
 * change yet, at most `openWaitMs` (a clean file may never get one).
 */
export class DiagnosticsAnswerer {
  /** uri -> when its wait for a first diagnostics change ends (ms). */
  private readonly opened = new Map<string, number>();

  /** `analysis`: the open documents whose current text was not analysed yet (pending too). */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly openWaitMs = 3000,
    private readonly analysis?: AnalysisTracker,
  ) {}

  async answer(params: Partial<DiagnosticsParams> | null): Promise<DiagnosticsResult> {
    const uris = params?.uris;
    if (uris == null) {
      // Every file with problems: not while an open document's analysis is owed
      // (the run-start baseline would miss what it has before the run).
      const result = collectDiagnostics(params);
      return this.analysis?.anyOwed() ? { ...result, pending: true } : result;
    }
    await Promise.all(uris.map((uri) => this.open(uri)));
    const result = collectDiagnostics({ uris });
    const now = this.now();
    const pending = uris.some((uri) => (this.opened.get(uri) ?? 0) > now || this.analysis?.owed(uri));
    return pending ? { ...result, pending: true } : result;
  }

  /** Diagnostics changed for these documents: they are analysed. */
  changed(uris: readonly vscode.Uri[]): void {
    for (const uri of uris) {
      this.opened.delete(uri.toString());
    }
  }

  private async open(uri: string): Promise<void> {
    const parsed = vscode.Uri.parse(uri);
    if (parsed.scheme !== 'file' || vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri)) {
      return;
    }
    try {
      await vscode.workspace.openTextDocument(parsed);
    } catch {
      return; // deleted, binary or too large: the server gets its diagnostics as they are
    }
    this.opened.set(uri, this.now() + this.openWaitMs);
  }
}

/**
 * Collects changed URIs and sends them in one notification after a quiet
 * `delayMs`, with the version each open document had when its diagnostics
 * changed: the batch can reach the server after Rein's next edit, and the
 * server must not take diagnostics of the older text as fresh for it.
 */
export class DiagnosticsChangeBatcher implements vscode.Disposable {
  private readonly pending = new Set<string>();
  private readonly versions = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly send: (uris: string[], versions: Record<string, number>) => void,
    private readonly delayMs = 50,
  ) {}

  /** `versionOf`: the open document's version now (undefined: not open). */
  add(uris: readonly vscode.Uri[], versionOf: (uri: string) => number | undefined = () => undefined): void {
    for (const uri of uris) {
      if (SCHEMES.has(uri.scheme)) {
        const key = uri.toString();
        this.pending.add(key);
        const version = versionOf(key);
        if (version === undefined) {
          this.versions.delete(key);
        } else {
          this.versions.set(key, version);
        }
      }
    }
    if (this.pending.size > 0 && this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.delayMs);
    }
  }

  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending.size === 0) {
      return;
    }
    const uris = [...this.pending];
    const versions = Object.fromEntries(this.versions);
    this.pending.clear();
    this.versions.clear();
    this.send(uris, versions);
  }

  dispose(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.pending.clear();
    this.versions.clear();
  }
}

/** The open documents' versions, looked up when the diagnostics change. */
function openVersions(): (uri: string) => number | undefined {
  const versions = new Map(vscode.workspace.textDocuments.map((document) => [document.uri.toString(), document.version]));
  return (uri) => versions.get(uri);
}

export function registerDiagnosticsBridge(context: vscode.ExtensionContext, connection: ReinConnection): void {
  const batcher = new DiagnosticsChangeBatcher((uris, versions) =>
    connection.sendNotification(Methods.diagnosticsChanged, { uris, versions }),
  );
  const analysis = new AnalysisTracker((uri) => vscode.languages.getDiagnostics(vscode.Uri.parse(uri)));
  const answerer = new DiagnosticsAnswerer(Date.now, 3000, analysis);
  const tracked = (document: vscode.TextDocument): boolean => SCHEMES.has(document.uri.scheme);
  vscode.workspace.textDocuments.filter(tracked).forEach((document) => analysis.known(document.uri.toString()));
  context.subscriptions.push(
    connection.onRequest(Methods.diagnostics, (params: Partial<DiagnosticsParams> | null) => answerer.answer(params)),
    vscode.workspace.onDidOpenTextDocument((document) => {
      if (tracked(document)) {
        analysis.opened(document.uri.toString(), document.version);
      }
    }),
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (tracked(event.document) && event.contentChanges.length > 0) {
        analysis.changed(event.document.uri.toString(), event.document.version - 1);
      }
    }),
    vscode.workspace.onDidCloseTextDocument((document) => analysis.closed(document.uri.toString())),
    vscode.languages.onDidChangeDiagnostics((event) => {
      answerer.changed(event.uris);
      const uris = event.uris.filter((uri) => SCHEMES.has(uri.scheme)).map((uri) => uri.toString());
      // The version each one's diagnostics are of (not always the document's version now).
      const versions = analysis.delivered(uris, openVersions());
      batcher.add(event.uris, (uri) => versions.get(uri));
    }),
    batcher,
  );
}
