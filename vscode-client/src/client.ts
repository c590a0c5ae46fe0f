/**
 * The connection to `rein serve`: a vscode-languageclient LanguageClient over
 * stdio, for every file document. Restarts after a crash with a growing delay
 * and says so; gives up (with actions) after repeated quick crashes.
 *
 * Features register their request and notification handlers here once; they
 * are installed on every LanguageClient this class creates (a restart makes a
 * new one, so a changed server path or API key always takes effect).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  CancellationToken,
  type ErrorHandler,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import * as vscode from 'vscode';
import type { ApiKeyStore } from './apiKey';
import type { ConnectionInfo, ConnectionState, ReinConnection } from './connection';
import {
  contributedKeys,
  serverSection,
  wideningNoticeHere,
  withStoragePath,
  withWorkspaceTrust,
  workspaceServerNames,
} from './configuration';
import { RestartPolicy } from './restartPolicy';
import { editedUris } from './bridge/save';
import { navigationFeature } from './bridge/navigate';
import { ServerLogReader, write } from './log';
import { findServer, ignoredServerPathHere, type ServerLocation } from './serverPath';
import { trustGate, UNTRUSTED_DETAIL } from './trust';
import { plain } from './panel/text';

/**
 * How long the server may take to shut down before it is stopped: above its
 * own bound (server/rein/session/ending.py: RUN_END_WAIT_S 2 s for the aborted
 * runs, then SESSION_END_BOUND_S + END_GRACE_S 9 s for the SessionEnd hooks,
 * while the isolated copies close). Sooner cuts off its hooks and copies.
 */
const SERVER_STOP_TIMEOUT_MS = 12_000;

export class NotConnectedError extends Error {
  constructor(state: ConnectionState) {
    super(
      state === 'missing'
        ? 'The Rein server was not found: set rein.server.path.'
        : state === 'untrusted'
          ? UNTRUSTED_DETAIL
          : `The Rein server is not running (${state}).`,
    );
  }
}

export interface ClientOptions {
  /** The contributed `rein.*` setting keys (package.json). */
  settingKeys?: ReadonlySet<string>;
  maxQuickCrashes?: number;
  /** Called with the documents of each workspace/applyEdit from the server, before it is applied. */
  beforeApplyEdit?: (uris: string[]) => void;
  /** A server that ran this long before crashing resets the crash count. */
  stableAfterMs?: number;
  backoffBaseMs?: number;
}

/** A LanguageClient whose start failures ReinClient reports (with the restart it schedules). */
class ReinLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    super.error(message, data, showNotification === 'force' ? false : showNotification);
  }
}

type Handler = (params: unknown, token: CancellationToken) => unknown;
type NotificationHandler = (params: unknown) => void;

export class ReinClient implements ReinConnection, vscode.Disposable {
  private client: LanguageClient | undefined;
  private process: ChildProcess | undefined;
  private stderrTail: string[] = [];
  private restartTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private generation = 0;
  private current: ConnectionInfo = { state: 'stopped' };
  private reportedIgnored: string | undefined;
  private reportedWidening: string | undefined;
  private readonly requestHandlers = new Map<string, Handler>();
  private readonly notificationHandlers = new Map<string, NotificationHandler>();
  private readonly stateEmitter = new vscode.EventEmitter<ConnectionInfo>();
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly policy: RestartPolicy;
  private readonly settingKeys: ReadonlySet<string>;
  private readonly beforeApplyEdit: (uris: string[]) => void;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly storagePath: string,
    private readonly keys: ApiKeyStore,
    options: ClientOptions = {},
  ) {
    this.policy = new RestartPolicy(options.maxQuickCrashes, options.stableAfterMs, options.backoffBaseMs);
    this.settingKeys = options.settingKeys ?? new Set();
    this.beforeApplyEdit = options.beforeApplyEdit ?? (() => undefined);
  }

  get info(): ConnectionInfo {
    return this.current;
  }

  private setState(state: ConnectionState, detail?: string): void {
    this.current = detail === undefined ? { state } : { state, detail };
    this.stateEmitter.fire(this.current);
  }

  // ---------------------------------------------------------- handlers

  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- see ReinConnection
  onRequest<P, R>(method: string, typed: (params: P, token: CancellationToken) => R | Promise<R>): vscode.Disposable {
    const handler = typed as Handler;
    this.requestHandlers.set(method, handler);
    const live = this.client?.onRequest(method, handler);
    return new vscode.Disposable(() => {
      this.requestHandlers.delete(method);
      live?.dispose();
    });
  }

  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- see ReinConnection
  onNotification<P>(method: string, typed: (params: P) => void): vscode.Disposable {
    const handler = typed as NotificationHandler;
    this.notificationHandlers.set(method, handler);
    const live = this.client?.onNotification(method, handler);
    return new vscode.Disposable(() => {
      this.notificationHandlers.delete(method);
      live?.dispose();
    });
  }

  async sendRequest<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    const client = this.client;
    if (!client || this.current.state !== 'running') {
      throw new NotConnectedError(this.current.state);
    }
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  sendNotification(method: string, params: unknown): void {
    if (this.client && this.current.state === 'running') {
      this.client.sendNotification(method, params).catch((error: unknown) => {
        this.output.warn(`${method} not sent: ${String(error)}`);
      });
    }
  }

  // ---------------------------------------------------------- lifecycle

  /** Finds the server and starts it; shows a message with actions if it is missing. */
  async start(): Promise<void> {
    this.clearRestartTimer();
    const generation = ++this.generation;
    await this.disposeClient();
    const ignored = ignoredServerPathHere();
    if (ignored && ignored !== this.reportedIgnored) {
      this.reportedIgnored = ignored; // once per reason, not at every restart
      this.output.warn(ignored);
      void vscode.window.showWarningMessage(vscode.l10n.t('Rein: {0}', ignored));
    }
    const widening = wideningNoticeHere();
    if (widening && widening !== this.reportedWidening) {
      this.reportedWidening = widening; // once per set of settings, not at every restart
      this.output.warn(widening);
      void vscode.window.showWarningMessage(vscode.l10n.t('Rein: {0}', widening));
    }
    const untrusted = trustGate(vscode.workspace.isTrusted);
    if (untrusted) {
      // No server, no gate or preview command, until the person trusts the workspace
      // (onDidGrantWorkspaceTrust starts it then).
      this.setState(untrusted.state, untrusted.detail);
      this.output.info('The workspace is not trusted: the Rein server starts once it is.');
      return;
    }
    const location = await findServer();
    if (generation !== this.generation) {
      return;
    }
    if (!location.found) {
      this.setState('missing', location.reason);
      this.output.error(location.reason);
      void this.showMissing(location);
      return;
    }
    this.setState('starting', location.path);
    this.output.info(`Starting ${location.path} serve (found via ${location.source})`);
    const client = this.createClient(location.path);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      await this.waitForExit(1000);
      if (generation === this.generation) {
        this.onCrash(this.exitSummary(`did not start: ${error instanceof Error ? error.message : String(error)}`));
      }
      return;
    }
    if (generation !== this.generation) {
      return;
    }
    this.policy.started(Date.now());
    this.setState('running', location.path);
  }

  /** Stops and starts again (a setting or the API key changed, or the person asked). */
  async restart(reason: string): Promise<void> {
    this.output.info(`Restarting the Rein server: ${reason}`);
    this.policy.reset();
    await this.start();
  }

  async stop(): Promise<void> {
    this.generation++;
    this.clearRestartTimer();
    await this.disposeClient();
    this.setState('stopped');
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
  }

  private clearRestartTimer(): void {
    if (this.restartTimer) {
      clearTimeout(this.restartTimer);
      this.restartTimer = undefined;
    }
  }

  private async disposeClient(): Promise<void> {
    const client = this.client;
    const child = this.process;
    this.client = undefined;
    this.process = undefined;
    if (client) {
      this.stopping = true;
      try {
        if (client.state === State.Running) {
          await client.stop(SERVER_STOP_TIMEOUT_MS);
        }
      } catch (error) {
        this.output.warn(`Stopping the server: ${String(error)}`);
      } finally {
        this.stopping = false;
        try {
          await client.dispose(1000);
        } catch {
          // already stopped
        }
      }
    }
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 2000);
      child.once('exit', () => clearTimeout(killer));
    }
  }

  private createClient(command: string): ReinLanguageClient {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = async () => {
      const env = await this.keys.serverEnv(process.env);
      const child = spawn(command, ['serve'], { cwd: folder, env, stdio: 'pipe' });
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
      this.process = child;
      this.stderrTail = [];
      child.stderr.on('data', (chunk: Buffer) => {
        this.stderrTail.push(...chunk.toString('utf8').split('\n').filter((line) => line.trim()));
        this.stderrTail = this.stderrTail.slice(-5);
      });
      child.once('exit', (code, signal) => {
        this.output.info(`rein serve exited (${signal ?? `code ${String(code)}`})`);
      });
      return child;
    };
    const errorHandler: ErrorHandler = {
      error: (_error, _message, count) =>
        (count ?? 0) <= 3 ? { action: ErrorAction.Continue } : { action: ErrorAction.Shutdown },
      closed: () => {
        if (!this.stopping && this.client === client) {
          const generation = this.generation;
          void this.waitForExit(1000).then(() => {
            if (generation === this.generation && this.client === client) {
              this.onCrash(this.exitSummary('connection closed'));
            }
          });
        }
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    };
    const storagePath = this.storagePath;
    const settingKeys = this.settingKeys;
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      // The server's log lines at their level (the client's default logs all of stderr as errors).
      stdioOptions: {
        // Our server options start the process themselves: its stdout is the protocol, never piped here.
        stdout: () => undefined,
        stderr: (input, channel) => {
          const reader = new ServerLogReader();
          readline
            .createInterface({ input, crlfDelay: Infinity, terminal: false })
            .on('line', (line) => write(channel, reader.line(line)));
        },
      },
      traceOutputChannel: this.output,
      initializationOptions: { storagePath },
      errorHandler,
      initializationFailedHandler: () => false,
      middleware: {
        workspace: {
          handleApplyEdit: (params, next) => {
            // Whether each document held the person's unsaved changes before Rein's edit (bridge/save).
            this.beforeApplyEdit(editedUris(params.edit));
            return next(params, CancellationToken.None);
          },
          configuration: async (params, token, next) => {
            const result = await next(params, token);
            if (!Array.isArray(result)) {
              return result;
            }
            return params.items.map((item, index) =>
              item.section === 'rein'
                ? withStoragePath(
                    'rein',
                    withWorkspaceTrust(
                      serverSection(settingKeys, item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined),
                      vscode.workspace.isTrusted,
                      workspaceServerNames(
                        vscode.workspace
                          .getConfiguration(undefined, item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                          .inspect('rein.mcp.servers'),
                      ),
                    ),
                    storagePath,
                  )
                : withStoragePath(item.section, result[index], storagePath),
            );
          },
        },
      },
    };
    const client = new ReinLanguageClient('rein', 'Rein', serverOptions, clientOptions);
    // The editor answers rein/navigate (bridge/navigate): declared in initialize's capabilities.
    client.registerFeature(navigationFeature);
    for (const [method, handler] of this.requestHandlers) {
      client.onRequest(method, handler);
    }
    for (const [method, handler] of this.notificationHandlers) {
      client.onNotification(method, handler);
    }
    return client;
  }

  /** Resolves when the server process has exited, or after `ms`. */
  private waitForExit(ms: number): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private exitSummary(otherwise: string): string {
    const child = this.process;
    const how =
      child?.signalCode != null
        ? `killed by ${child.signalCode}`
        : child?.exitCode != null
          ? `exit code ${child.exitCode}`
          : otherwise;
    const last = this.stderrTail[this.stderrTail.length - 1];
    return last ? `${how}: ${last}` : how;
  }

  private onCrash(why: string): void {
    if (this.restartTimer || this.current.state === 'failed') {
      return; // already handled (start() failing also closes the connection)
    }
    const decision = this.policy.crashed(Date.now());
    const max = this.policy.maxQuickCrashes;
    this.output.error(`The Rein server stopped (${why}); crash ${decision.crashes} of ${max}.`);
    if (decision.giveUp) {
      this.setState('failed', why);
      void this.showFailed(why);
      return;
    }
    const delay = decision.delayMs;
    const seconds = Math.round(delay / 1000);
    this.setState('restarting', `${why}; restarting in ${seconds} s`);
    if (decision.crashes === 1) {
      // Once per streak; later restarts show in the status bar and the panel.
      void vscode.window
        .showWarningMessage(plain(vscode.l10n.t('Rein server stopped ({0}). Restarting in {1} s.', why, seconds)), 'Show Output')
        .then((choice) => {
          if (choice === 'Show Output') {
            this.output.show(true);
          }
        });
    }
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.start();
    }, delay);
  }

  private async showMissing(location: Extract<ServerLocation, { found: false }>): Promise<void> {
    const choice = await vscode.window.showErrorMessage(plain(vscode.l10n.t('Rein: {0}', location.reason)), 'Open Settings', 'Retry');
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'rein.server.path');
    } else if (choice === 'Retry') {
      await this.restart('retry after the server was not found');
    }
  }

  private async showFailed(why: string): Promise<void> {
    const [SHOW_OUTPUT, RESTART, OPEN_SETTINGS] = [vscode.l10n.t('Show Output'), vscode.l10n.t('Restart'), vscode.l10n.t('Open Settings')];
    const choice = await vscode.window.showErrorMessage(
      plain(vscode.l10n.t('Rein server keeps stopping ({0}). It will not be restarted automatically.', why)),
      SHOW_OUTPUT,
      RESTART,
      OPEN_SETTINGS,
    );
    if (choice === SHOW_OUTPUT) {
      this.output.show(true);
    } else if (choice === RESTART) {
      await this.restart('restart requested after repeated crashes');
    } else if (choice === OPEN_SETTINGS) {
      await vscode.commands.executeCommand('workbench.action.openSettings', '@ext:rein.rein');
    }
  }
}

/** Creates the client, restarts it when its settings change, starts it. */
export function registerClient(
  context: vscode.ExtensionContext,
  output: vscode.LogOutputChannel,
  keys: ApiKeyStore,
  beforeApplyEdit?: (uris: string[]) => void,
): ReinClient {
  const storage = (context.storageUri ?? context.globalStorageUri).fsPath;
  fs.mkdirSync(storage, { recursive: true });
  const client = new ReinClient(output, storage, keys, {
    settingKeys: contributedKeys(context.extension.packageJSON),
    ...(beforeApplyEdit ? { beforeApplyEdit } : {}),
  });
  context.subscriptions.push(
    client,
    // A server inside the workspace may start once the person trusts it.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void client.restart('the workspace is trusted now')),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('rein')) {
        // Pull model: the server asks for the `rein` section again.
        client.sendNotification('workspace/didChangeConfiguration', { settings: null });
      }
      if (event.affectsConfiguration('rein.server.path')) {
        void client.restart('rein.server.path changed');
      } else if (event.affectsConfiguration('rein.model.apiKeyEnv') || event.affectsConfiguration('rein.model.provider')) {
        void client.restart('the API key variable changed');
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      if (client.info.state === 'missing') {
        void client.restart('workspace folders changed');
      }
    }),
  );
  void client.start();
  return client;
}
