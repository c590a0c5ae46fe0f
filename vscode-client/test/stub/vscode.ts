/**
 * A stand-in for the `vscode` module in unit tests (the build aliases
 * `vscode` to this file). It implements the parts the extension uses, with
 * plain behaviour, and `stub` lets a test set what the editor holds
 * (diagnostics, dialog answers, settings) and read what was asked.
 */

type Listener<T> = (value: T) => unknown;

export class Disposable {
  constructor(private readonly onDispose: () => unknown = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((item) => item.dispose()));
  }
  dispose(): void {
    this.onDispose();
  }
}

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((other) => other !== listener);
    });
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static parse(value: string): Uri {
    const match = /^([a-z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/i.exec(value);
    if (!match) {
      return new Uri('file', '', value, '', '');
    }
    return new Uri(match[1] ?? 'file', match[2] ?? '', match[3] ?? '', match[4] ?? '', match[5] ?? '');
  }
  static file(path: string): Uri {
    return new Uri('file', '', path.startsWith('/') ? path : `/${path}`, '', '');
  }
  static from(parts: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(parts.scheme, parts.authority ?? '', parts.path ?? '', parts.query ?? '', parts.fragment ?? '');
  }
  static joinPath(base: Uri, ...segments: string[]): Uri {
    const path = [base.path.replace(/\/$/, ''), ...segments].join('/');
    return new Uri(base.scheme, base.authority, path, '', '');
  }
  get fsPath(): string {
    return this.path;
  }
  with(change: { scheme?: string; path?: string; query?: string }): Uri {
    return new Uri(change.scheme ?? this.scheme, this.authority, change.path ?? this.path, change.query ?? this.query, this.fragment);
  }
  toString(): string {
    const query = this.query ? `?${this.query}` : '';
    const fragment = this.fragment ? `#${this.fragment}` : '';
    return `${this.scheme}://${this.authority}${this.path}${query}${fragment}`;
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(startLine: number | Position, startCharacter: number | Position, endLine?: number, endCharacter?: number) {
    if (startLine instanceof Position && startCharacter instanceof Position) {
      this.start = startLine;
      this.end = startCharacter;
    } else {
      this.start = new Position(startLine as number, startCharacter as number);
      this.end = new Position(endLine ?? (startLine as number), endCharacter ?? (startCharacter as number));
    }
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

export class Selection extends Range {
  get active(): Position {
    return this.end;
  }
}

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}

export enum DiagnosticTag {
  Unnecessary = 1,
  Deprecated = 2,
}

export class Location {
  constructor(
    readonly uri: Uri,
    readonly range: Range,
  ) {}
}

export class DiagnosticRelatedInformation {
  constructor(
    readonly location: Location,
    readonly message: string,
  ) {}
}

export class Diagnostic {
  source?: string;
  code?: string | number | { value: string | number; target: Uri };
  tags?: DiagnosticTag[];
  relatedInformation?: DiagnosticRelatedInformation[];
  constructor(
    readonly range: Range,
    readonly message: string,
    readonly severity: DiagnosticSeverity = DiagnosticSeverity.Error,
  ) {}
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class CodeLens {
  constructor(
    readonly range: Range,
    readonly command?: { title: string; command: string; tooltip?: string; arguments?: unknown[] },
  ) {}
}

export enum OverviewRulerLane {
  Left = 1,
  Center = 2,
  Right = 4,
  Full = 7,
}

/** An editor a test shows (window.visibleTextEditors): records its decorations. */
export interface StubEditor {
  document: { uri: Uri; lineCount: number; getText(): string };
  decorations: Map<unknown, Range[]>;
  setDecorations(type: unknown, ranges: Range[]): void;
}

/** An editor showing `text` (its document as much as the extension reads of one). */
export function stubEditor(uri: string, text: string): StubEditor {
  const editor: StubEditor = {
    document: { uri: Uri.parse(uri), lineCount: text.split('\n').length, getText: () => text },
    decorations: new Map(),
    setDecorations(type, ranges) {
      editor.decorations.set(type, ranges);
    },
  };
  return editor;
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

// ------------------------------------------------------------------ state

interface DialogCall {
  kind: 'warning' | 'info' | 'error' | 'input' | 'pick';
  message: string;
  options?: unknown;
  items: string[];
}

const diagnosticsChanged = new EventEmitter<{ uris: Uri[] }>();
const visibleEditorsChanged = new EventEmitter<unknown>();
const textDocumentChanged = new EventEmitter<{ document: unknown; contentChanges: unknown[] }>();
const textDocumentOpened = new EventEmitter<unknown>();
const textDocumentClosed = new EventEmitter<unknown>();

/** What a test controls and observes. */
export const stub = {
  diagnostics: new Map<string, Diagnostic[]>(),
  /** Answers of the next dialogs, in order (a button title, input text or undefined). */
  answers: [] as (string | undefined)[],
  calls: [] as DialogCall[],
  commands: [] as { command: string; args: unknown[] }[],
  /** What executeCommand answers per command (given its args; default undefined): the editor's providers. */
  commandAnswers: new Map<string, (...args: unknown[]) => unknown>(),
  /** setStatusBarMessage texts and withProgress titles, in order. */
  statusMessages: [] as string[],
  progress: [] as string[],
  configuration: {} as Record<string, unknown>,
  /** Registered commands (registerCommand), by id. */
  registered: new Map<string, (...args: unknown[]) => unknown>(),
  /** Files that exist for workspace.fs.stat (file paths). */
  existing: new Set<string>(),
  /** The workspace's files for workspace.findFiles (file paths). */
  files: new Set<string>(),
  /** `contentChanges`: how many (0: a change of its dirty state only). */
  fireTextDocumentChanged(document: unknown, contentChanges = 1): void {
    textDocumentChanged.fire({ document, contentChanges: Array.from({ length: contentChanges }, () => ({})) });
  },
  fireTextDocumentOpened(document: unknown): void {
    textDocumentOpened.fire(document);
  },
  fireTextDocumentClosed(document: unknown): void {
    textDocumentClosed.fire(document);
  },
  fireVisibleEditorsChanged(): void {
    visibleEditorsChanged.fire(window.visibleTextEditors);
  },
  fireDiagnosticsChanged(uris: Uri[]): void {
    diagnosticsChanged.fire({ uris });
  },
  reset(): void {
    this.diagnostics.clear();
    this.answers = [];
    this.calls = [];
    this.commands = [];
    this.commandAnswers.clear();
    this.statusMessages = [];
    this.progress = [];
    this.configuration = {};
    this.registered.clear();
    this.existing.clear();
    this.files.clear();
    workspace.textDocuments = [];
    window.activeTextEditor = undefined;
    window.visibleTextEditors = [];
  },
};

function answer(call: DialogCall): Promise<string | undefined> {
  stub.calls.push(call);
  return Promise.resolve(stub.answers.shift());
}

function splitItems(rest: unknown[]): { options: unknown; items: string[] } {
  const [first, ...others] = rest;
  if (typeof first === 'string' || first === undefined) {
    return { options: undefined, items: rest.filter((x): x is string => typeof x === 'string') };
  }
  return { options: first, items: others.filter((x): x is string => typeof x === 'string') };
}

export const languages = {
  getDiagnostics(uri?: Uri): unknown {
    if (uri) {
      return stub.diagnostics.get(uri.toString()) ?? [];
    }
    return [...stub.diagnostics.entries()].map(([key, list]) => [Uri.parse(key), list]);
  },
  onDidChangeDiagnostics: diagnosticsChanged.event,
  setTextDocumentLanguage: (document: unknown) => Promise.resolve(document),
  registerCodeLensProvider: () => new Disposable(),
};

export const window = {
  showWarningMessage: (message: string, ...rest: unknown[]) => answer({ kind: 'warning', message, ...splitItems(rest) }),
  showInformationMessage: (message: string, ...rest: unknown[]) => answer({ kind: 'info', message, ...splitItems(rest) }),
  showErrorMessage: (message: string, ...rest: unknown[]) => answer({ kind: 'error', message, ...splitItems(rest) }),
  showInputBox: (options: { prompt?: string }) => answer({ kind: 'input', message: options.prompt ?? '', options, items: [] }),
  /** Items as strings or QuickPickItems: the answer is a string, or the item with that label. */
  showQuickPick: (items: (string | { label: string })[], options: { placeHolder?: string }) =>
    answer({ kind: 'pick', message: options.placeHolder ?? '', options, items: items.map((item) => (typeof item === 'string' ? item : item.label)) }).then((picked) =>
      items.every((item) => typeof item === 'string') ? picked : items.find((item) => typeof item !== 'string' && item.label === picked),
    ),
  showTextDocument: () => Promise.resolve(undefined),
  setStatusBarMessage: (text: string) => {
    stub.statusMessages.push(text);
    return new Disposable();
  },
  withProgress: <R>(options: { title?: string }, task: () => Promise<R>): Promise<R> => {
    stub.progress.push(options.title ?? '');
    return task();
  },
  activeTextEditor: undefined as unknown,
  visibleTextEditors: [] as StubEditor[],
  onDidChangeVisibleTextEditors: visibleEditorsChanged.event,
  createTextEditorDecorationType: (options: unknown) => ({ options, dispose: () => undefined }),
  registerWebviewViewProvider: () => new Disposable(),
};

export interface StubDocument {
  uri: Uri;
  version?: number;
  isDirty: boolean;
  saves: number;
  save(): Promise<boolean>;
}

export function stubDocument(uri: string, isDirty: boolean): StubDocument {
  const doc: StubDocument = {
    uri: Uri.parse(uri),
    isDirty,
    saves: 0,
    save() {
      doc.saves += 1;
      doc.isDirty = false;
      return Promise.resolve(true);
    },
  };
  return doc;
}

export const workspace = {
  textDocuments: [] as StubDocument[],
  workspaceFolders: [{ uri: Uri.file('/work/project'), name: 'project', index: 0 }],
  getConfiguration(section?: string) {
    return {
      get<T>(key: string, fallback?: T): T | undefined {
        const full = section ? `${section}.${key}` : key;
        return (full in stub.configuration ? stub.configuration[full] : fallback) as T | undefined;
      },
    };
  },
  registerTextDocumentContentProvider: () => new Disposable(),
  fs: {
    stat: (uri: Uri) =>
      stub.existing.has(uri.path) ? Promise.resolve({ type: 1 }) : Promise.reject(new Error(`no such file: ${uri.path}`)),
  },
  openTextDocument: () => Promise.reject(new Error('no documents in the stub')),
  /** The files findFiles answers (file paths under /work/project). */
  findFiles: () => Promise.resolve([...stub.files].map((file) => Uri.file(file))),
  asRelativePath: (value: Uri | string) => (typeof value === 'string' ? value : value.path.replace(/^\/work\/project\//, '')),
  onDidChangeConfiguration: new EventEmitter<unknown>().event,
  onDidChangeTextDocument: textDocumentChanged.event,
  onDidOpenTextDocument: textDocumentOpened.event,
  onDidCloseTextDocument: textDocumentClosed.event,
};

export enum QuickPickItemKind {
  Separator = -1,
  Default = 0,
}

/** vscode.l10n: the message (its translation when a test sets `bundle`) with its {0} placeholders filled. */
export const l10n = {
  bundle: undefined as Record<string, string> | undefined,
  t(message: string, ...args: unknown[]): string {
    return (l10n.bundle?.[message] ?? message).replace(/\{(\d+)\}/g, (whole, index: string) => (Number(index) < args.length ? String(args[Number(index)]) : whole));
  },
};

export const commands = {
  executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    stub.commands.push({ command, args });
    const answer = stub.commandAnswers.get(command);
    try {
      return Promise.resolve(answer ? answer(...args) : undefined);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  },
  registerCommand: (id: string, handler: (...args: unknown[]) => unknown) => {
    stub.registered.set(id, handler);
    return new Disposable(() => stub.registered.delete(id));
  },
};

export const extensions = {
  getExtension: () => undefined,
};

export const env = {
  language: 'en',
  openExternal: () => Promise.resolve(true),
};
