/**
 * The panel's line per `hook` event (a hook of the person's setup, in Claude
 * Code's format): what it blocked, added, continued, asked, failed at, or that
 * the workspace's hooks were not run.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PanelState } from '../../src/panel/reducer';
import type { HookActivity } from '../../src/shared/events.generated';

const hook = (outcome: HookActivity['outcome'], extra: Partial<HookActivity> = {}): HookActivity => ({
  type: 'hook',
  event: 'PreToolUse',
  outcome,
  command: 'bash .claude/hooks/no-rm.sh',
  source: '.claude/settings.json',
  message: 'rm -rf is not allowed',
  ...extra,
});

describe('hook events in the panel', () => {
  it('shows one notice per hook event, a block and a failure as warnings', () => {
    const state = new PanelState('s');
    state.apply(hook('blocked', { tool: 'Bash' }));
    state.apply(hook('context', { event: 'UserPromptSubmit', message: 'branch: main' }));
    state.apply(hook('continued', { event: 'Stop', message: 'run the tests' }));
    state.apply(hook('failed', { event: 'PostToolUse', tool: 'Edit', message: 'exit 1: boom' }));
    state.apply(hook('skipped', { event: '(trust)', command: '', message: 'the person did not allow them' }));
    const notices = state.view().items.flatMap((item) => (item.kind === 'notice' ? [[item.level, item.text]] : []));
    assert.deepEqual(notices, [
      ['warning', 'PreToolUse hook on Bash (.claude/settings.json) blocked it: rm -rf is not allowed'],
      ['info', 'UserPromptSubmit hook (.claude/settings.json) added context: branch: main'],
      ['info', 'Stop hook (.claude/settings.json) kept the run going: run the tests'],
      ['warning', 'PostToolUse hook on Edit (.claude/settings.json) failed: exit 1: boom'],
      ['warning', 'Hooks of .claude/settings.json not run: the person did not allow them'],
    ]);
  });
});
