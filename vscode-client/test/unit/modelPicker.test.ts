import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { currentLabel, modelLabel, pickItems, pickModel, type ModelsResult } from '../../src/panel/modelPicker';
import { FakeConnection } from '../fakes';
import { stub } from '../stub/vscode';

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
