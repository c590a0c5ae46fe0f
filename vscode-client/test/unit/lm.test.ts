import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { ResponseError } from 'vscode-jsonrpc';
import { modelSelector, runChat, type LmChatParams, type LmDelta } from '../../src/lm/chat';
import { answerChat, CONSENT_KEY, CONSENT_REQUIRED, listModels, LmConsent, registerLanguageModels, vscodeLmApi } from '../../src/lm';
import { FakeConnection, FakeLmApi, FakeLmModel, type FakeLmPart } from '../fakes';
import { CancellationTokenSource, stub } from '../stub/vscode';

afterEach(() => stub.reset());

function params(overrides: Partial<LmChatParams> = {}): LmChatParams {
  return {
    requestId: 'r1',
    sessionId: 's1',
    model: 'test/scripted',
    system: 'You are Rein.',
    messages: [
      { role: 'user', text: 'fix it' },
      { role: 'assistant', text: 'reading', toolCalls: [{ id: 'c1', name: 'read_file', input: { path: 'a.py' } }] },
      { role: 'tool', toolCallId: 'c1', name: 'read_file', text: 'x = 1' },
    ],
    tools: [{ name: 'read_file', description: 'Read a file.', inputSchema: { type: 'object' } }],
    toolMode: 'required',
    maxTokens: 100,
    ...overrides,
  };
}

class Memento {
  readonly values = new Map<string, unknown>();
  get(key: string): unknown {
    return this.values.get(key);
  }
  update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
    return Promise.resolve();
  }
  keys(): string[] {
    return [...this.values.keys()];
  }
}

function scripted(...turns: FakeLmPart[][]): FakeLmModel {
  return new FakeLmModel('scripted-1', 'test', 'scripted', 'Scripted', turns);
}

describe('the vscode-lm adapter', () => {
  it('reads selectors: vendor/family, an id, or every model', () => {
    assert.deepEqual(modelSelector('copilot/gpt-4o'), { vendor: 'copilot', family: 'gpt-4o' });
    assert.deepEqual(modelSelector('gpt-4o-mini'), { id: 'gpt-4o-mini' });
    assert.deepEqual(modelSelector(' '), {});
  });

  it('sends the transcript, tools and tool mode, and streams text and tool calls back', async () => {
    const model = scripted([
      { kind: 'text', value: 'Let me ' },
      { kind: 'data' },
      { kind: 'text', value: 'edit.' },
      { kind: 'call', callId: 'c2', name: 'edit_file', input: { path: 'a.py' } },
    ]);
    const api = new FakeLmApi([model, new FakeLmModel('o', 'test', 'other', 'Other')]);
    const deltas: LmDelta[] = [];
    const result = await runChat(api, params(), (d) => deltas.push(d), new CancellationTokenSource().token);
    assert.deepEqual(result, { stopReason: 'tool_use', deltas: 3 });
    assert.deepEqual(api.selectors, [{ vendor: 'test', family: 'scripted' }]);
    assert.deepEqual(deltas, [
      { requestId: 'r1', kind: 'text', text: 'Let me ' },
      { requestId: 'r1', kind: 'text', text: 'edit.' },
      { requestId: 'r1', kind: 'tool_call', id: 'c2', name: 'edit_file', input: { path: 'a.py' } },
    ]);
    const [request] = model.requests;
    assert.ok(request);
    assert.deepEqual(request.messages, [
      { role: 'user', parts: [{ kind: 'text', value: '<instructions>\nYou are Rein.\n</instructions>' }, { kind: 'text', value: 'fix it' }] },
      { role: 'assistant', parts: [{ kind: 'text', value: 'reading' }, { kind: 'call', callId: 'c1', name: 'read_file', input: { path: 'a.py' } }] },
      { role: 'user', parts: [{ kind: 'result', callId: 'c1', text: 'x = 1' }] },
    ]);
    assert.equal(request.options.toolMode, 'mode:required');
    assert.deepEqual(request.options.tools, [{ name: 'read_file', description: 'Read a file.', inputSchema: { type: 'object' } }]);
    assert.deepEqual(request.options.modelOptions, { maxTokens: 100 });
  });

  it('answers stop for a text-only reply', async () => {
    const api = new FakeLmApi([scripted([{ kind: 'text', value: 'done' }])]);
    const result = await runChat(api, params({ tools: [] }), () => undefined, new CancellationTokenSource().token);
    assert.deepEqual(result, { stopReason: 'stop', deltas: 1 });
  });

  it("cancels the model's request when the server cancels", async () => {
    const model = new FakeLmModel('h', 'test', 'scripted', 'Hanging', [[{ kind: 'text', value: 'working' }]], true);
    const source = new CancellationTokenSource();
    const running = runChat(new FakeLmApi([model]), params(), () => {
      source.cancel();
    }, source.token);
    await running;
    assert.equal(model.cancelled, true);
  });
});

describe('rein/lm/chat and consent', () => {
  it('answers -32001 and asks the person until consent is given, then runs and tells the server', async () => {
    const connection = new FakeConnection();
    const state = new Memento();
    const consent = new LmConsent(state, connection);
    const api = new FakeLmApi([scripted([{ kind: 'text', value: 'hi' }])]);
    const token = new CancellationTokenSource().token as never;
    stub.answers.push('Allow');
    const announced = connection.nextSent('rein/lm/consent');
    await assert.rejects(answerChat(api, consent, connection, params(), token), (error: unknown) => {
      assert.ok(error instanceof ResponseError);
      assert.equal(error.code, CONSENT_REQUIRED);
      return true;
    });
    assert.equal(api.models[0]?.requests.length, 0); // nothing was sent to the model
    await announced;
    assert.equal(state.get(CONSENT_KEY), true);
    assert.deepEqual(connection.notifications.at(-1), { method: 'rein/lm/consent', params: { granted: true } });
    const result = await answerChat(api, consent, connection, params(), token);
    assert.deepEqual(result, { stopReason: 'stop', deltas: 1 });
    assert.deepEqual(
      connection.notifications.filter((n) => n.method === 'rein/lm/delta').map((n) => n.params),
      [{ requestId: 'r1', kind: 'text', text: 'hi' }],
    );
  });

  it('a model that matches nothing is an error answer naming the selector', async () => {
    const connection = new FakeConnection();
    const state = new Memento();
    await state.update(CONSENT_KEY, true);
    const consent = new LmConsent(state, connection);
    const result = await answerChat(new FakeLmApi([]), consent, connection, params({ model: 'copilot/none' }), new CancellationTokenSource().token);
    assert.equal(result.stopReason, 'error');
    assert.match(result.error ?? '', /copilot\/none/);
  });

  it('registers the handlers and lists the models', async () => {
    const connection = new FakeConnection();
    const api = new FakeLmApi([scripted()]);
    const context = { subscriptions: [] as { dispose(): unknown }[], globalState: new Memento() };
    registerLanguageModels(context as never, connection, api);
    assert.deepEqual(await connection.call('rein/lm/models', {}), {
      models: [{ id: 'scripted-1', vendor: 'test', family: 'scripted', name: 'Scripted' }],
    });
    assert.deepEqual(await listModels(undefined), { models: [] });
  });

  it('finds no API in a VS Code without tool calling', () => {
    assert.equal(vscodeLmApi({}), undefined);
  });
});
