/**
 * The words the extension host's view-model code makes (the reducer's
 * notices and status lines, the cost line, the shared formatting) are in
 * the editor's language once the panel is registered: registerChatPanel
 * hands `vscode.l10n.bundle` to src/shared/l10n.ts. The server's words in
 * them (reasons, paths, ids) stay as sent. A pseudo bundle ("[xx] …" for
 * every string of l10n/bundle.l10n.json) makes the translated text visible.
 */

import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { registerChatPanel } from '../../src/panel/chatView';
import { PanelState } from '../../src/panel/reducer';
import { useBundle } from '../../src/shared/l10n';
import { statusText } from '../../src/statusBar';
import { formatDuration, usageText } from '../../src/shared/viewModel';
import { FakeConnection } from '../fakes';
import { pseudoBundle } from '../helpers';
import { l10n as stubL10n, Uri } from '../stub/vscode';

function notices(state: PanelState): string[] {
  return state.view().items.flatMap((item) => (item.kind === 'notice' ? [item.text] : []));
}

/** A run aborted with two tools unfinished (one retrying), with notices and the header's cost line. */
function runOfEvents(): PanelState {
  const state = new PanelState('s1');
  const events: Record<string, unknown>[] = [
    { type: 'run_start', run_id: 'r1' },
    { type: 'turn_start', turn: 1 },
    { type: 'tool_call_start', tool_call_id: 'c1', name: 'run_command', arguments: { command: 'pytest' } },
    { type: 'tool_retry', tool_call_id: 'c2', name: 'read_file', attempt: 1, max_attempts: 3, reason: 'read_file failed: TimeoutError' },
    {
      type: 'turn_end',
      turn: 1,
      usage: { input_tokens: 1000, output_tokens: 100 },
      run_usage: { input_tokens: 1000, output_tokens: 100 },
      cost: 0.002,
      run_cost: 0.002,
      context: { used: 1000, window: 10000, share: 0.1 },
    },
    { type: 'carried_changes', generations: [2], paths: ['app.py', 'b.py'] },
    { type: 'files_restored', restore_id: 'restore-1', run_id: 'r0', turn: 2, restored: ['a.py', 'b.py'], conflicts: ['c.py'], skipped: [] },
    { type: 'auto_repair', phase: 'finished', uri: 'file:///p/app.py', status: 'failed', reason: 'gates still failing' },
    { type: 'run_end', run_id: 'r1', status: 'aborted', turns: 1, usage: { input_tokens: 1000, output_tokens: 100 } },
  ];
  for (const event of events) {
    state.apply(event as { type: string });
  }
  return state;
}

describe("the host's view-model words with a pseudo-localized bundle", () => {
  afterEach(() => {
    stubL10n.bundle = undefined;
    useBundle(undefined);
  });

  it('are translated once registerChatPanel has the editor bundle, with the values and the server words in place', () => {
    stubL10n.bundle = pseudoBundle();
    const context = { subscriptions: [] as vscode.Disposable[], extensionUri: Uri.file('/ext') };
    registerChatPanel(context as unknown as vscode.ExtensionContext, new FakeConnection());
    try {
      const state = runOfEvents();
      assert.deepEqual(notices(state), [
        '[xx] Validating 2 files an earlier run changed and did not validate: app.py, b.py',
        '[xx] [xx] Restored 2 file(s) to before turn 2 of run r0; kept your changes to c.py',
        '[xx] Auto-repair of app.py: [xx] failed: gates still failing',
      ]);
      const tools = state.view().items.flatMap((item) => (item.kind === 'tool' ? [item.statusText] : []));
      assert.deepEqual(tools, ['[xx] ended with the run ([xx] aborted)', '[xx] ended with the run ([xx] aborted)']);
      const retrying = new PanelState('s1');
      retrying.apply({ type: 'tool_retry', tool_call_id: 'c2', name: 'read_file', attempt: 1, max_attempts: 3, reason: 'read_file failed: TimeoutError' } as { type: string });
      assert.equal(retrying.findTool('c2')?.statusText, '[xx] retry 1 of 3: read_file failed: TimeoutError');
      assert.equal(state.view().header.costLine, '[xx] 1.0k in / 100 out · [xx] 10% of context');
      assert.equal(usageText({ input_tokens: 12_300, output_tokens: 1100, cache_read_tokens: 4000 }), '[xx] 12.3k in · 1.1k out · 4k cached');
      assert.equal(formatDuration(125_000), '[xx] 2 min 5 s');
    } finally {
      for (const disposable of context.subscriptions) {
        disposable.dispose();
      }
    }
  });

  it("translate the status bar item's words, with the values in place", () => {
    stubL10n.bundle = pseudoBundle();
    const idle = new PanelState('s1').view().header;
    assert.equal(statusText({ state: 'running' }, idle).tooltip, '[xx] Rein: idle. Click to open the chat.');
    assert.equal(statusText({ state: 'failed', detail: 'exit 3' }, idle).tooltip, '[xx] Rein: the server keeps stopping (exit 3)');
    assert.equal(statusText({ state: 'starting' }, idle).tooltip, '[xx] Rein: starting the server');
    const running = { ...idle, status: 'running' as const, turn: 3, runUsage: { input_tokens: 12_000, output_tokens: 300 } };
    assert.equal(statusText({ state: 'running' }, running).text, '[xx] $(sync~spin) Rein: turn 3 · 12.3k tokens');
    stubL10n.bundle = undefined;
    assert.equal(statusText({ state: 'running' }, running).text, '$(sync~spin) Rein: turn 3 · 12.3k tokens');
  });

  it('are English without a bundle, and again after one is dropped', () => {
    useBundle(pseudoBundle());
    useBundle(undefined);
    const state = runOfEvents();
    assert.deepEqual(notices(state), [
      'Validating 2 files an earlier run changed and did not validate: app.py, b.py',
      'Restored 2 file(s) to before turn 2 of run r0; kept your changes to c.py',
      'Auto-repair of app.py: failed: gates still failing',
    ]);
    assert.equal(state.view().header.costLine, '1.0k in / 100 out · 10% of context');
    assert.equal(usageText({ input_tokens: 12_300, output_tokens: 1100, estimated: true }), '≈12.3k in · ≈1.1k out');
    assert.equal(formatDuration(840), '840 ms');
  });
});
