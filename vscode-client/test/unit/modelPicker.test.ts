import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { ChatViewProvider } from '../../src/panel/chatView';
import { ChatController } from '../../src/panel/controller';
import { EditSnapshots } from '../../src/panel/edits';
import { currentLabel, modelLabel, pickItems, pickModel, type ModelsResult } from '../../src/panel/modelPicker';
import type { HostMessage, WebviewMessage } from '../../src/shared/messages';
import { FakeConnection } from '../fakes';
import { stub, Uri } from '../stub/vscode';

afterEach(() => stub.reset());

const MODELS: ModelsResult = {
  current: { provider: 'openai', model: 'gpt-4.1' },
  models: [
    { provider: 'openai', model: 'gpt-4.1', label: 'gpt-4.1', source: 'config' },
    { provider: 'vscode-lm', model: 'copilot/gpt-4o', label: 'GPT-4o (copilot)', source: 'vscode-lm' },
  ],
};

describe('the model picker', () => {
  it('labels the current model', () => {
    assert.equal(currentLabel(MODELS), 'gpt-4.1 · openai');
    assert.equal(currentLabel({ ...MODELS, current: { provider: 'vscode-lm', model: 'copilot/gpt-4o' } }), 'GPT-4o (copilot)');
    assert.equal(currentLabel({ ...MODELS, current: { provider: 'replay', model: '' } }), 'replay (default model)');
    // The configured vscode-lm model carries the name VS Code gives it.
    const configured: ModelsResult = {
      current: { provider: 'vscode-lm', model: 'rein-test/scripted' },
      models: [{ provider: 'vscode-lm', model: 'rein-test/scripted', label: 'Scripted (rein-test)', source: 'config' }],
    };
    assert.equal(currentLabel(configured), 'Scripted (rein-test)');
  });

  it('marks the current model and where each comes from', () => {
    const items = pickItems(MODELS);
    assert.deepEqual(
      items.map((i) => [i.label, i.description, i.detail]),
      [
        ['gpt-4.1', 'openai · gpt-4.1 (current)', 'From the settings (rein.model)'],
        ['GPT-4o (copilot)', 'vscode-lm · copilot/gpt-4o', 'A language model VS Code offers'],
      ],
    );
  });

  it('switches every session to the chosen model with rein/setModel', async () => {
    const connection = new FakeConnection();
    connection.responders.set('rein/models', () => MODELS);
    connection.responders.set('rein/setModel', () => ({ ok: true }));
    stub.answers.push('GPT-4o (copilot)');
    const label = await pickModel(connection);
    assert.equal(label, 'GPT-4o (copilot)');
    assert.deepEqual(connection.requests.at(-1), { method: 'rein/setModel', params: { provider: 'vscode-lm', model: 'copilot/gpt-4o' } });
    const pick = stub.calls.find((c) => c.kind === 'pick');
    assert.deepEqual(pick?.items, ['gpt-4.1', 'GPT-4o (copilot)']);
  });

  it("switches the panel's session and the sessions made afterwards, and labels that session's model", async () => {
    const connection = new FakeConnection();
    connection.responders.set('rein/models', () => MODELS);
    connection.responders.set('rein/setModel', () => ({ ok: true }));
    stub.answers.push('GPT-4o (copilot)');
    assert.equal(await pickModel(connection, 'session-7'), 'GPT-4o (copilot)');
    assert.deepEqual(connection.requests, [
      { method: 'rein/models', params: { sessionId: 'session-7' } },
      { method: 'rein/setModel', params: { provider: 'vscode-lm', model: 'copilot/gpt-4o', sessionId: 'session-7', newSessions: true } },
    ]);
    assert.equal(await modelLabel(connection, 'session-7'), 'gpt-4.1 · openai');
    assert.deepEqual(connection.requests.at(-1), { method: 'rein/models', params: { sessionId: 'session-7' } });
    // A panel without a session asks for a new session's model.
    await modelLabel(connection, null);
    assert.deepEqual(connection.requests.at(-1), { method: 'rein/models', params: {} });
  });

  it('changes nothing when the person dismisses the list, and says why VS Code models are missing', async () => {
    const connection = new FakeConnection();
    connection.responders.set('rein/models', () => ({ ...MODELS, vscodeLmError: 'no rein/lm/models' }));
    stub.answers.push(undefined);
    assert.equal(await pickModel(connection), undefined);
    assert.deepEqual(connection.methods(), ['rein/models']);
    assert.match(stub.calls.find((c) => c.kind === 'pick')?.message ?? '', /not listed: no rein\/lm\/models/);
  });

  it('has no label from a server without rein/models', async () => {
    const connection = new FakeConnection();
    connection.responders.set('rein/models', () => {
      throw new Error('MethodNotFound');
    });
    assert.equal(await modelLabel(connection), undefined);
  });
});

/** A WebviewView that records what the host posts; `labels()` waits for the next model label. */
class FakeView {
  private listener: ((msg: WebviewMessage) => void) | undefined;
  private waiting: ((label: string) => void) | undefined;
  readonly webview = {
    options: {},
    html: '',
    cspSource: 'c',
    asWebviewUri: (uri: Uri) => uri,
    onDidReceiveMessage: (listener: (msg: WebviewMessage) => void) => {
      this.listener = listener;
      return { dispose: () => undefined };
    },
    postMessage: (message: HostMessage) => {
      if (message.type === 'model') {
        this.waiting?.(message.label);
      }
      return Promise.resolve(true);
    },
  };
  onDidDispose(): { dispose(): void } {
    return { dispose: () => undefined };
  }
  /** The page posts `msg`; resolves with the next model label the host posts. */
  label(send: () => unknown): Promise<string> {
    const next = new Promise<string>((resolve) => (this.waiting = resolve));
    void send();
    return next;
  }
  page(msg: WebviewMessage): void {
    this.listener?.(msg);
  }
}

describe("the panel's model button", () => {
  it('names the model of the session the panel shows, and the picker changes that session', { timeout: 10_000 }, async () => {
    const connection = new FakeConnection();
    const other = { provider: 'vscode-lm', model: 'copilot/gpt-4o' };
    connection.responders.set('rein/models', (params) => (params.sessionId === 'ses-b' ? { ...MODELS, current: other } : MODELS));
    connection.responders.set('rein/session', () => ({ messages: [], status: 'idle' }));
    connection.responders.set('rein/setModel', () => ({ ok: true }));
    const controller = new ChatController(connection, undefined);
    const provider = new ChatViewProvider(Uri.file('/ext') as never, controller, connection, new EditSnapshots());
    const view = new FakeView();
    provider.resolveWebviewView(view as never);
    try {
      // No session yet: a new session's model.
      assert.equal(await view.label(() => view.page({ type: 'ready' })), 'gpt-4.1 · openai');
      // Another session: its model.
      assert.equal(await view.label(() => controller.selectSession('ses-b')), 'GPT-4o (copilot)');
      assert.deepEqual(
        connection.requests.filter((r) => r.method === 'rein/models').at(-1),
        { method: 'rein/models', params: { sessionId: 'ses-b' } },
      );
      // The picker changes the shown session (and the new ones).
      stub.answers.push('gpt-4.1');
      assert.equal(await view.label(() => view.page({ type: 'pickModel' })), 'gpt-4.1 · openai');
      assert.deepEqual(connection.requests.at(-1), {
        method: 'rein/setModel',
        params: { provider: 'openai', model: 'gpt-4.1', sessionId: 'ses-b', newSessions: true },
      });
    } finally {
      provider.dispose();
      controller.dispose();
    }
  });
});
