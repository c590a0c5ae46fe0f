import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registerRunLog, runLogLine, ServerLogReader } from '../../src/log';
import type { EventEnvelope } from '../../src/shared/protocol';
import { EventEmitter } from '../stub/vscode';

function envelope(event: Record<string, unknown>): EventEnvelope {
  return { sessionId: 's1', runId: 'r1', seq: 1, event: event as EventEnvelope['event'] };
}

describe('the output channel', () => {
  it("logs the server's lines at their own level, a traceback at its error's", () => {
    const reader = new ServerLogReader();
    const lines = [
      'a line before any log line',
      '2026-12-04 02:57:00,123 INFO rein.lsp.server: started',
      '2026-12-04 02:57:01,001 WARNING rein.config: rein.approval.command: invalid; using the default',
      '2026-12-04 02:57:02,002 ERROR rein.lsp.features: rein/prompt failed',
      'Traceback (most recent call last):',
      '  File "x.py", line 1',
      '',
      '2026-12-04 02:57:03,003 DEBUG pygls.protocol: sent',
      '2026-12-04 02:57:04,004 CRITICAL rein: out of memory',
    ];
    assert.deepEqual(
      lines.map((line) => reader.line(line)),
      [
        { level: 'info', text: 'a line before any log line' },
        { level: 'info', text: 'rein.lsp.server: started' },
        { level: 'warn', text: 'rein.config: rein.approval.command: invalid; using the default' },
        { level: 'error', text: 'rein.lsp.features: rein/prompt failed' },
        { level: 'error', text: 'Traceback (most recent call last):' },
        { level: 'error', text: '  File "x.py", line 1' },
        undefined,
        { level: 'debug', text: 'pygls.protocol: sent' },
        { level: 'error', text: 'rein: out of memory' },
      ],
    );
  });

  it('logs each run, a failed run (a model error) as an error with its reason, and error events', () => {
    assert.deepEqual(runLogLine(envelope({ type: 'run_start', run_id: 'r1', prompt: 'Fix   calc.py\nplease' })), {
      level: 'info',
      text: 'Run r1 started (session s1): Fix calc.py please',
    });
    assert.deepEqual(runLogLine(envelope({ type: 'run_end', run_id: 'r1', status: 'completed', turns: 1 })), {
      level: 'info',
      text: 'Run r1 completed after 1 turn (session s1)',
    });
    assert.deepEqual(
      runLogLine(envelope({ type: 'run_end', run_id: 'r1', status: 'failed', turns: 0, reason: 'model error: 401 Unauthorized: no API key in OPENAI_API_KEY' })),
      { level: 'error', text: 'Run r1 failed after 0 turns (session s1): model error: 401 Unauthorized: no API key in OPENAI_API_KEY' },
    );
    assert.equal(runLogLine(envelope({ type: 'run_end', run_id: 'r1', status: 'aborted' }))?.level, 'warn');
    assert.deepEqual(runLogLine(envelope({ type: 'error', message: 'hook raised', where: 'after_tool_call', fatal: false })), {
      level: 'warn',
      text: 'Error in after_tool_call (session s1): hook raised',
    });
    assert.equal(runLogLine(envelope({ type: 'turn_start', turn: 1 })), undefined);
  });

  it('writes what the controller receives', () => {
    const events = new EventEmitter<EventEnvelope>();
    const written: string[] = [];
    const output = { info: (t: string) => written.push(`info ${t}`), warn: (t: string) => written.push(`warn ${t}`), error: (t: string) => written.push(`error ${t}`) };
    const context = { subscriptions: [] as { dispose(): void }[] };
    registerRunLog(context as never, { onDidReceiveEvent: events.event as never }, output as never);
    events.fire(envelope({ type: 'run_end', run_id: 'r1', status: 'failed', reason: 'budget: 10 tokens' }));
    events.fire(envelope({ type: 'turn_start', turn: 1 }));
    assert.deepEqual(written, ['error Run r1 failed (session s1): budget: 10 tokens']);
    assert.equal(context.subscriptions.length, 1);
  });
});
