/**
 * What the features need from the connection to `rein serve`: its state and
 * the requests and notifications they send and serve. ReinClient (client.ts)
 * implements it; the features and the tests take it, never the client, so
 * nothing they hold imports the client back.
 */

import type * as vscode from 'vscode';
import type { CancellationToken } from 'vscode-languageclient/node';

export type ConnectionState =
  | 'stopped' // not started yet, or stopped on purpose
  | 'starting'
  | 'running'
  | 'restarting' // crashed; a restart is scheduled
  | 'missing' // no `rein` executable found
  | 'untrusted' // the workspace is not trusted: nothing starts until it is
  | 'failed'; // crashed too often; waiting for the person

export interface ConnectionInfo {
  state: ConnectionState;
  detail?: string;
}

/** What the features need from the connection; tests pass a fake. */
/* eslint-disable @typescript-eslint/no-unnecessary-type-parameters --
   P and R let each handler name the params and result of the method it serves. */
export interface ReinConnection {
  readonly info: ConnectionInfo;
  readonly onDidChangeState: vscode.Event<ConnectionInfo>;
  sendRequest<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R>;
  sendNotification(method: string, params: unknown): void;
  onRequest<P, R>(method: string, handler: (params: P, token: CancellationToken) => R | Promise<R>): vscode.Disposable;
  onNotification<P>(method: string, handler: (params: P) => void): vscode.Disposable;
}
/* eslint-enable @typescript-eslint/no-unnecessary-type-parameters */
