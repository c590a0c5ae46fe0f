/**
 * The reusable fakes of the extension's unit tests, in one place: a
 * `ReinConnection` that records what the client sends and lets the test play
 * the server (answer requests, push events, call the client's handlers), and
 * a way to wait for a `vscode.Event` instead of sleeping, and the extension
 * host of the chat page (for the page in headless Chromium). The `vscode`
 * module itself is faked by test/stub/vscode.ts.
 */

import type { Page } from 'playwright-core';
import type { ConnectionInfo, ReinConnection } from '../src/connection';
import { ApprovalsModel } from '../src/panel/approvals';
import { CheckpointModel, panelView } from '../src/panel/checkpoints';
import { PanelState } from '../src/panel/reducer';
import { UpdateBuilder } from '../src/panel/updates';
import type { HostMessage } from '../src/shared/messages';
import type { EventEnvelope } from '../src/shared/protocol';
import { Disposable, EventEmitter } from './stub/vscode';

export type Responder = (params: Record<string, unknown>) => unknown;

type Handler = (params: never, token: never) => unknown;

/** A connection to a fake server: records requests and notifications, answers with `responders`. */
export class FakeConnection implements ReinConnection {
  info: ConnectionInfo = { state: 'running' };
  readonly states = new EventEmitter<ConnectionInfo>();
  readonly onDidChangeState = this.states.event as never;
  readonly requests: { method: string; params: Record<string, unknown> }[] = [];
  readonly notifications: { method: string; params: unknown }[] = [];
  /** What the fake server answers per method (default: `{}`); a responder that throws rejects the request. */
  readonly responders = new Map<string, Responder>();
  /** The client's handlers of server -> client requests and notifications. */
  private readonly handlers = new Map<string, Handler>();
  private readonly sent = new EventEmitter<string>();

  sendRequest<R>(method: string, params: unknown): Promise<R> {
    this.requests.push({ method, params: params as Record<string, unknown> });
    this.sent.fire(method);
    const responder = this.responders.get(method);
    try {
      return Promise.resolve((responder ? responder(params as Record<string, unknown>) : {}) as R);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  sendNotification(method: string, params: unknown): void {
    this.notifications.push({ method, params });
    this.sent.fire(method);
  }

  onRequest(method: string, handler: Handler): Disposable {
    return this.register(method, handler);
  }

  onNotification(method: string, handler: Handler): Disposable {
    return this.register(method, handler);
  }

  private register(method: string, handler: Handler): Disposable {
    this.handlers.set(method, handler);
    return new Disposable(() => {
      if (this.handlers.get(method) === handler) {
        this.handlers.delete(method);
      }
    });
  }

  /** The server calls the client: a request (its answer) or a notification. */
  async call(method: string, params: unknown): Promise<unknown> {
    const handler = this.handlers.get(method);
    if (!handler) {
      throw new Error(`the client has no handler for ${method}`);
    }
    return handler(params as never, { isCancellationRequested: false } as never);
  }

  /** The server sends a `rein/event` notification. */
  emit(envelope: EventEnvelope): void {
    const handler = this.handlers.get('rein/event');
    if (!handler) {
      throw new Error('the client does not listen to rein/event');
    }
    handler(envelope as never, undefined as never);
  }

  methods(): string[] {
    return this.requests.map((request) => request.method);
  }

  /** Resolves when the client next sends `method` (a request or a notification). */
  nextSent(method: string): Promise<void> {
    return nextEvent(this.sent.event, (sent) => sent === method).then(() => undefined);
  }
}

/** A `rein/event` envelope of session `sessionId` (run r1). */
export function envelope(seq: number, event: Record<string, unknown>, sessionId = 's1'): EventEnvelope {
  return { sessionId, runId: 'r1', seq, event: event as EventEnvelope['event'] };
}

type Event<T> = (listener: (value: T) => unknown) => { dispose(): unknown };

/** Resolves with the next value `event` fires (for which `accept` holds): wait for what happens, never for a time. */
export function nextEvent<T>(event: Event<T>, accept: (value: T) => boolean = () => true): Promise<T> {
  return new Promise((resolve) => {
    const subscription = event((value) => {
      if (accept(value)) {
        subscription.dispose();
        resolve(value);
      }
    });
  });
}

/**
 * The extension host as the chat page sees it, for tests of the page in
 * Chromium: a PanelState fed events (and a CheckpointModel), its changes posted the way the host's
 * 50 ms timer does (UpdateBuilder -> postMessage).
 */
export class FakePanelHost {
  readonly state: PanelState;
  /** The session's checkpoints, drawn into the timeline as the host does. */
  readonly checkpoints = new CheckpointModel();
  /** The approval rules section, drawn as the controller adds it. */
  readonly approvals = new ApprovalsModel();
  private readonly updates = new UpdateBuilder();

  constructor(
    private readonly page: Page,
    sessionId: string,
  ) {
    this.state = new PanelState(sessionId);
  }

  /** Posts `message` to the page and waits until the page handled it. */
  async post(message: HostMessage): Promise<void> {
    await this.page.evaluate(
      (msg) =>
        new Promise<void>((resolve) => {
          const page = globalThis as unknown as {
            postMessage(m: unknown, origin: string): void;
            addEventListener(type: 'message', listener: () => void, options: { once: boolean }): void;
          };
          // Listeners run in order: when this one runs, the panel's has.
          page.addEventListener('message', () => resolve(), { once: true });
          page.postMessage(msg, '*');
        }),
      message,
    );
  }

  async feed(envelopes: readonly EventEnvelope[]): Promise<void> {
    for (const envelope of envelopes) {
      this.state.apply(envelope.event);
      await this.flush();
    }
  }

  /** Posts what changed (as the host's 50 ms timer does). */
  async flush(): Promise<void> {
    const update = this.updates.next({ ...panelView(this.state, this.checkpoints), approvals: this.approvals.view() });
    if (update) {
      await this.post(update);
    }
  }
}

/** A part of the fake LM API's messages and streams. */
export type FakeLmPart =
  | { kind: 'text'; value: string }
  | { kind: 'call'; callId: string; name: string; input: object }
  | { kind: 'result'; callId: string; text: string }
  | { kind: 'data' };

/** A language model of the fake LM API: streams its script's parts whatever it is asked, records each request. */
export class FakeLmModel {
  readonly requests: { messages: unknown[]; options: Record<string, unknown> }[] = [];
  /** Set when a request's token was cancelled. */
  cancelled = false;
  constructor(
    readonly id: string,
    readonly vendor: string,
    readonly family: string,
    readonly name: string,
    private readonly script: FakeLmPart[][] = [],
    /** Stream the parts, then wait for cancellation instead of ending. */
    private readonly hang = false,
  ) {}

  sendRequest(messages: unknown[], options: object, token: { isCancellationRequested: boolean; onCancellationRequested: Event<void> }): Promise<{ stream: AsyncIterable<unknown> }> {
    this.requests.push({ messages, options: options as Record<string, unknown> });
    const parts = this.script.shift() ?? [];
    const hang = this.hang;
    const cancelled = new Promise<void>((resolve) => {
      token.onCancellationRequested(() => {
        this.cancelled = true;
        resolve();
      });
    });
    async function* stream(): AsyncIterable<unknown> {
      for (const part of parts) {
        yield part;
      }
      if (hang) {
        await cancelled;
      }
    }
    return Promise.resolve({ stream: stream() });
  }
}

/** `vscode.lm` and its classes, faked: messages are `{role, parts}`, parts are `FakeLmPart`. */
export class FakeLmApi {
  selectors: object[] = [];
  constructor(readonly models: FakeLmModel[]) {}
  selectChatModels(selector: { vendor?: string; family?: string; id?: string } = {}): Promise<FakeLmModel[]> {
    this.selectors.push(selector);
    return Promise.resolve(
      this.models.filter(
        (m) =>
          (selector.vendor === undefined || m.vendor === selector.vendor) &&
          (selector.family === undefined || m.family === selector.family) &&
          (selector.id === undefined || m.id === selector.id),
      ),
    );
  }
  userMessage(parts: unknown[]): unknown {
    return { role: 'user', parts };
  }
  assistantMessage(parts: unknown[]): unknown {
    return { role: 'assistant', parts };
  }
  textPart(value: string): FakeLmPart {
    return { kind: 'text', value };
  }
  toolCallPart(callId: string, name: string, input: object): FakeLmPart {
    return { kind: 'call', callId, name, input };
  }
  toolResultPart(callId: string, text: string): FakeLmPart {
    return { kind: 'result', callId, text };
  }
  toolMode(mode: 'auto' | 'required'): unknown {
    return `mode:${mode}`;
  }
  readPart(part: unknown): { text: string } | { id: string; name: string; input: object } | undefined {
    const p = part as FakeLmPart;
    if (p.kind === 'text') {
      return { text: p.value };
    }
    if (p.kind === 'call') {
      return { id: p.callId, name: p.name, input: p.input };
    }
    return undefined;
  }
}
