"""The person's commands over the real ``rein acp`` with a real ACP client
(issue 37): the session's ``available_commands_update`` lists them, a
prompt ``/name args`` runs one, and an unknown one is refused with the
known ones."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from acp import RequestError
from acp.helpers import text_block

from rein.providers.mock_server import MockServer
from tests.acp.conftest import REQUEST_S, Home, load_scenario, started
from tests.bring.setup_repo import setup_repo


async def test_commands_are_the_agents_available_commands_and_run(
    tmp_path: Path, home: Home, mock: MockServer
) -> None:
    root = setup_repo(tmp_path / "repo")
    await load_scenario(
        mock,
        "setup-command",
        [
            {
                "expect": {"last_message_contains": "Review app.py for style only."},
                "text": "reviewed",
            }
        ],
    )
    # The code under test, where PYTHONPATH names it (a worktree's checkout).
    code = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    async with started(root, home, env=code) as (agent, sid):
        update = await agent.editor.wait_for(
            sid, lambda u: u["sessionUpdate"] == "available_commands_update"
        )
        assert update["availableCommands"] == [
            {
                "name": "file",
                "description": "Review one file for one concern (project:review)",
                "input": {"hint": "FILE CONCERN"},
            },
            {"name": "explain", "description": "Explain a module"},
            # A skill is a command too, as in Claude Code.
            {
                "name": "greeting",
                "description": "Greets people the house way. Use when asked to greet someone.",
            },
        ]
        with anyio.fail_after(REQUEST_S):
            done = await agent.conn.prompt(
                session_id=sid, prompt=[text_block("/file app.py style")]
            )
        assert done.stop_reason == "end_turn"
        assert "reviewed" in agent.editor.said(sid)
        with pytest.raises(RequestError) as refused, anyio.fail_after(REQUEST_S):
            await agent.conn.prompt(session_id=sid, prompt=[text_block("/nope")])
        assert "unknown command /nope; the known commands are: /file, /explain" in str(
            refused.value.data
        ) + str(refused.value)
