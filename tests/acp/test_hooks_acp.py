"""Claude Code hooks through the real ``rein acp``: the workspace's hooks run
after the person allowed them through the client's permission request; then
its PreToolUse hook blocks ``rm -rf`` (the model reads the reason), its
prompt hook adds context, its Stop hook keeps the run going once and a write
outside ``src/`` is denied (the scripted model checks each); when the
client leaves, its SessionEnd hook reads the person's prompt from
``transcript_path``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from acp.helpers import text_block

from rein.providers.mock_server import MockServer
from tests.acp.conftest import (
    REQUEST_S,
    Home,
    assert_used_up,
    load_scenario,
    rein_config,
    started,
    write_config,
)
from tests.bring.hook_workspace import TURNS, ended, hook_repo

pytestmark = pytest.mark.e2e


async def test_the_workspace_s_hooks_run_once_the_client_allowed_them(
    tmp_path: Path, home: Home, mock: MockServer
) -> None:
    root = hook_repo(tmp_path / "ws", sys.executable)
    # No analyzers: this test is about the hooks.
    write_config(
        home.config_file, rein_config(home.path, mock.url, gates={"analyzer": {"enabled": False}})
    )
    await load_scenario(mock, "hooks", TURNS)
    async with started(root, home, permissions=["allow_hooks"]) as (agent, sid):
        with anyio.fail_after(REQUEST_S):
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("tidy up")])
    assert answer.stop_reason == "end_turn"
    [(session, tool_call, kinds)] = agent.editor.permission_requests
    assert session == sid
    assert kinds == ["allow_always", "reject_once"]
    assert "no_rm.sh" in json.dumps(tool_call)
    [shown] = tool_call["content"]  # the commands, where the client shows a request
    assert "no_rm.sh" in shown["content"]["text"]
    await assert_used_up(mock)  # each turn's expectation held: every reason was read
    thought = "".join(u["content"]["text"] for u in agent.editor.sent(sid, "agent_thought_chunk"))
    thoughts = [line for line in thought.splitlines() if " hook (" in line]
    assert [t.split(":")[0] for t in thoughts] == [
        "UserPromptSubmit hook (.claude/settings.json) context",
        "PreToolUse hook (.claude/settings.json) blocked on Bash",
        "PreToolUse hook (.claude/settings.json) blocked on Write",
        "Stop hook (.claude/settings.json) continued",
    ]
    assert (root / "build" / "keep.txt").exists()
    assert not (root / "README.md").exists()
    # The client left and the process ended: the session ended.
    assert ended(root) == [{"event": "SessionEnd", "reason": "other", "prompts": ["tidy up"]}]
