/**
 * The editor side of the `vscode-lm` provider: `rein/lm/chat` answered with
 * one of VS Code's language models (`vscode.lm.selectChatModels` +
 * `LanguageModelChat.sendRequest` with tools and a tool mode). Text and
 * tool-call parts stream back as `rein/lm/delta` notifications; the answer
 * is the stop reason. The server's `$/cancelRequest` cancels the model's
 * request. The LM API is reached through `LmApi` so tests can fake it.
 */

import type * as vscode from 'vscode';

/** A Rein message as `rein/lm/chat` sends it. */
export type WireMessage =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls?: { id: string; name: string; input: object }[] }
  | { role: 'tool'; toolCallId: string; name: string; text: string; isError?: boolean };

export interface LmChatParams {
  requestId: string;
  sessionId?: string | null;
  model: string;
  system: string;
  messages: WireMessage[];
  tools: { name: string; description: string; inputSchema: object }[];
  toolMode: 'auto' | 'required';
  maxTokens?: number;
}

export type StopReason = 'stop' | 'tool_use' | 'length' | 'error';

export interface LmChatResult {
  stopReason: StopReason;
  error?: string;
  /** How many `rein/lm/delta` were sent: the server waits for them all (a notification can be overtaken by the answer). */
  deltas?: number;
}

export type LmDelta =
  | { requestId: string; kind: 'text'; text: string }
  | { requestId: string; kind: 'tool_call'; id: string; name: string; input: object };

/** The part of a model the adapter uses (`vscode.LanguageModelChat`). */
export interface LmModel {
  readonly id: string;
  readonly vendor: string;
  readonly family: string;
  readonly name: string;
  sendRequest(messages: unknown[], options: object, token: vscode.CancellationToken): Thenable<{ stream: AsyncIterable<unknown> }>;
}

/** The LM API as the adapter needs it: `vscode.lm` and its message and part classes. */
export interface LmApi {
  selectChatModels(selector?: { vendor?: string; family?: string; id?: string }): Thenable<LmModel[]>;
  userMessage(parts: unknown[]): unknown;
  assistantMessage(parts: unknown[]): unknown;
  textPart(text: string): unknown;
  toolCallPart(id: string, name: string, input: object): unknown;
  toolResultPart(id: string, text: string): unknown;
  toolMode(mode: 'auto' | 'required'): unknown;
  /** The part's content, when it is a text part or a tool call (else undefined). */
  readPart(part: unknown): { text: string } | { id: string; name: string; input: object } | undefined;
}

/** `vendor/family`, an id, or empty (every model) as a `selectChatModels` selector. */
export function modelSelector(model: string): { vendor?: string; family?: string; id?: string } {
  const trimmed = model.trim();
  if (!trimmed) {
    return {};
  }
  const slash = trimmed.indexOf('/');
  if (slash > 0) {
    return { vendor: trimmed.slice(0, slash), family: trimmed.slice(slash + 1) };
  }
  return { id: trimmed };
}

/** Rein's transcript as LM API messages. The API has no system role: the system prompt opens the first user message. */
export function toLmMessages(api: LmApi, params: LmChatParams): unknown[] {
  const out: unknown[] = [];
  let pendingUser: unknown[] = [api.textPart(`<instructions>\n${params.system}\n</instructions>`)];
  const flushUser = (): void => {
    if (pendingUser.length > 0) {
      out.push(api.userMessage(pendingUser));
      pendingUser = [];
    }
  };
  for (const message of params.messages) {
    if (message.role === 'assistant') {
      flushUser();
      const parts: unknown[] = message.text ? [api.textPart(message.text)] : [];
      for (const call of message.toolCalls ?? []) {
        parts.push(api.toolCallPart(call.id, call.name, call.input));
      }
      out.push(api.assistantMessage(parts));
    } else if (message.role === 'tool') {
      // Tool results are user-message parts, right after the assistant's calls.
      pendingUser.push(api.toolResultPart(message.toolCallId, message.isError ? `Error: ${message.text}` : message.text));
    } else {
      pendingUser.push(api.textPart(message.text));
    }
  }
  flushUser();
  return out;
}

export class NoModelError extends Error {}

/** The model `params.model` selects (the first of them); NoModelError when none matches. */
export async function pickModel(api: LmApi, model: string): Promise<LmModel> {
  const models = await api.selectChatModels(modelSelector(model));
  const first = models[0];
  if (!first) {
    throw new NoModelError(model ? `no language model in VS Code matches "${model}"` : 'VS Code offers no language model');
  }
  return first;
}

/**
 * One `rein/lm/chat`: send the request, stream its parts through `send`,
 * answer with the stop reason. A failure of the model is the answer
 * `{stopReason: "error", error}` (the run fails with it); a cancelled
 * token ends the stream.
 */
export async function runChat(
  api: LmApi,
  params: LmChatParams,
  send: (delta: LmDelta) => void,
  token: vscode.CancellationToken,
): Promise<LmChatResult> {
  const model = await pickModel(api, params.model);
  const options: Record<string, unknown> = {
    justification: 'Rein runs the coding task you sent from its panel with this model.',
    tools: params.tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })),
  };
  if (params.tools.length > 0) {
    options.toolMode = api.toolMode(params.toolMode);
  }
  if (params.maxTokens !== undefined) {
    options.modelOptions = { maxTokens: params.maxTokens };
  }
  let calls = 0;
  let sent = 0;
  const deliver = (delta: LmDelta): void => {
    sent += 1;
    send(delta);
  };
  try {
    const response = await model.sendRequest(toLmMessages(api, params), options, token);
    for await (const part of response.stream) {
      if (token.isCancellationRequested) {
        break;
      }
      const read = api.readPart(part);
      if (read === undefined) {
        continue; // a part Rein has no use for (data, thinking)
      }
      if ('text' in read) {
        if (read.text) {
          deliver({ requestId: params.requestId, kind: 'text', text: read.text });
        }
      } else {
        calls += 1;
        deliver({ requestId: params.requestId, kind: 'tool_call', id: read.id, name: read.name, input: read.input });
      }
    }
  } catch (error) {
    if (token.isCancellationRequested) {
      return { stopReason: 'stop', deltas: sent };
    }
    throw error;
  }
  return { stopReason: calls > 0 ? 'tool_use' : 'stop', deltas: sent };
}
