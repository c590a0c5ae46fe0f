import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PREVIEW_LINES, PreviewModel } from '../../src/panel/preview';

describe('PreviewModel', () => {
  it('keeps the last lines, says how many a burst left out, and drops terminal colours', () => {
    const model = new PreviewModel();
    model.apply({ type: 'preview_started', pid: 7, generation: 1, command: 'npm run dev', state: 'running' });
    const many = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n');
    model.apply({ type: 'preview_output', text: many, lines_dropped: 0 });
    model.apply({ type: 'preview_output', text: '\u001b[32mINFO\u001b[0m:     Uvicorn running\r', lines_dropped: 170 });
    const view = model.view();
    assert.equal(view.lines.length, PREVIEW_LINES);
    assert.deepEqual(view.lines.slice(-3), ['line 30', '… 170 lines left out', 'INFO:     Uvicorn running']);
  });

  it('bumps rev on every change and hands out copies', () => {
    const model = new PreviewModel();
    const before = model.rev;
    model.apply({ type: 'preview_output', text: 'a' });
    assert.equal(model.rev, before + 1);
    model.view().lines.push('not mine');
    assert.deepEqual(model.view().lines, ['a']);
  });

  it('shows a failed start with its exit code, a clean exit, and a stop on request', () => {
    const model = new PreviewModel();
    model.apply({ type: 'preview_started', pid: 7, generation: 1, command: 'python app.py' });
    model.apply({ type: 'preview_error', message: 'the preview exited with code 1', lines: ['Traceback (most recent call last):', 'KeyError: x'], state: 'failed', exit_code: 1 });
    let view = model.view();
    assert.deepEqual([view.state, view.pid, view.detail, view.error?.lines.length], ['failed', undefined, 'exit code 1', 2]);
    model.apply({ type: 'preview_started', pid: 8, generation: 2, command: '' });
    view = model.view();
    assert.deepEqual([view.state, view.pid, view.command, view.error, view.detail], ['running', 8, 'python app.py', undefined, undefined]);
    model.apply({ type: 'preview_stopped', reason: 'the program exited', state: 'exited', exit_code: 0 });
    assert.equal(model.view().detail, 'the program exited (exit code 0)');
    model.apply({ type: 'preview_stopped', reason: 'stopped on request', state: 'stopped', exit_code: -15 });
    assert.deepEqual([model.view().state, model.view().detail], ['stopped', 'stopped on request']);
  });

  it('takes rein/preview answers as the truth, with the request in between', () => {
    const model = new PreviewModel();
    assert.equal(model.view().state, 'unknown');
    model.setPending('start');
    assert.equal(model.view().pending, 'start');
    model.setPending(undefined);
    model.applyStatus({ state: 'running', pid: 42, generation: 3, command: 'python -m app', lines: Array.from({ length: 50 }, (_, i) => `l${i}`) });
    let view = model.view();
    assert.deepEqual([view.state, view.pid, view.generation, view.command, view.lines.length, view.lines[0], view.pending], ['running', 42, 3, 'python -m app', PREVIEW_LINES, 'l30', undefined]);
    model.applyStatus({ state: 'failed', generation: null, command: 'python -m app', lines: [], error: 'the preview is busy: another start did not finish within 10 s' });
    view = model.view();
    assert.deepEqual([view.state, view.pid, view.detail], ['failed', undefined, 'the preview is busy: another start did not finish within 10 s']);
    model.requestFailed('restart', 'Connection is disposed.');
    assert.equal(model.view().detail, 'restart failed: Connection is disposed.');
    model.applyStatus(null);
    assert.equal(model.view().state, 'failed', 'no answer changes nothing');
  });

  it('shows the runtime errors a watched start saw, and clears them when a restart comes up', () => {
    const model = new PreviewModel();
    const error = 'the preview printed a runtime error: RuntimeError: lost the database; the preview exited with code 1';
    model.applyStatus({ state: 'exited', lines: ['serving'], up: false, readyBy: 'quiet', runtimeErrors: ['Traceback (most recent call last):', 'RuntimeError: lost the database'], exitCode: 1, error });
    let view = model.view();
    assert.deepEqual([view.state, view.detail, view.error], ['exited', error, { message: error, lines: ['Traceback (most recent call last):', 'RuntimeError: lost the database'] }]);
    model.applyStatus({ state: 'running', pid: 7, lines: ['serving'], up: true, readyBy: 'quiet', runtimeErrors: [] });
    view = model.view();
    assert.deepEqual([view.state, view.pid, view.error], ['running', 7, undefined]);
  });

  it('marks a running preview stopped when the server goes, and leaves an unknown one alone', () => {
    const unknown = new PreviewModel();
    const rev = unknown.rev;
    unknown.serverStopped();
    assert.equal(unknown.rev, rev);
    const model = new PreviewModel();
    model.applyStatus({ state: 'running', pid: 5, lines: [] });
    model.setPending('stop');
    model.serverStopped();
    const view = model.view();
    assert.deepEqual([view.state, view.pid, view.pending, view.detail], ['stopped', undefined, undefined, 'the Rein server stopped']);
  });
});
