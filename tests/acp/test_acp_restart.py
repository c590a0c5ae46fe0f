"""Sessions outlive ``rein acp``: a restart loads and replays a stored
session, and an editor that goes away mid-run leaves the session stored and
loadable. Two real ``rein acp`` processes over one HOME, one after the other
(one test: each process serves both cases)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import anyio
import pytest
import yaml
from acp.helpers import text_block

from rein.providers.mock_server import MockServer
from tests.acp.conftest import (
    REQUEST_S,
    Home,
    call,
    load_scenario,
    model_requests,
    prompt_under_way,
    rein_config,
    running_agent,
    stall_turn,
    started,
    tool_turn,
    write_config,
)
from tests.fakes.acp_client import FakeAcpClient

pytestmark = pytest.mark.e2e


async def test_sessions_outlive_the_process_a_finished_one_and_one_left_mid_run(
    pyproj: Path, home: Home, mock: MockServer
) -> None:
    """One ``rein acp`` runs a session to its end, then a second one whose
    editor goes away mid-run; a second ``rein acp`` loads both: the first
    replays its transcript and goes on with its history, the second holds
    the interrupted prompt."""
    await load_scenario(
        mock,
        "first",
        [tool_turn(call("read_file", path="app.py")), {"text": "app.py greets people."}],
    )
    async with started(pyproj, home) as (agent, sid):
        with anyio.fail_after(REQUEST_S):
            await agent.conn.prompt(session_id=sid, prompt=[text_block("What does app.py do?")])
        await load_scenario(mock, "stall", [stall_turn("Working on it")])
        gone = (await agent.new_session(pyproj)).session_id
        running = await prompt_under_way(agent, gone, "Rename greet")
        running.cancel()  # the editor stops waiting and closes the pipe
        with contextlib.suppress(asyncio.CancelledError):
            await running
        first = agent
    # stdin closed mid-run: rein acp aborted the run and exited by itself.
    assert first.process.returncode == 0, first.log()

    editor = FakeAcpClient(pyproj, run_commands=True)
    async with running_agent(editor, home, name="second") as agent:
        await agent.initialize()
        with anyio.fail_after(REQUEST_S):
            await agent.conn.load_session(cwd=str(pyproj), session_id=gone, mcp_servers=[])
            await agent.conn.load_session(cwd=str(pyproj), session_id=sid, mcp_servers=[])
        # Replayed before the answer, so all there now, in order.
        kinds = [u["sessionUpdate"] for u in editor.sent(sid)]
        user = "".join(u["content"]["text"] for u in editor.sent(sid, "user_message_chunk"))
        reads = [c for c in editor.tool_calls(sid).values() if c.get("kind") == "read"]
        replayed_text = editor.said(sid)

        # The loaded session goes on with its history.
        await load_scenario(
            mock,
            "second",
            [
                {
                    "expect": {
                        "messages_contain": ["What does app.py do?", "app.py greets people."],
                        "last_message_contains": "And then?",
                    },
                    "text": "Nothing else.",
                }
            ],
        )
        with anyio.fail_after(REQUEST_S):
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("And then?")])

    assert "What does app.py do?" in user
    assert kinds.index("user_message_chunk") < kinds.index("tool_call")
    assert kinds.index("tool_call") < kinds.index("agent_message_chunk")
    assert len(reads) == 1 and reads[0]["status"] == "completed"
    assert replayed_text == "app.py greets people."
    assert answer.stop_reason == "end_turn"
    # "first" answered twice, "stall" cut when its editor left, "second" answered.
    outcomes = [(r["turn"], r["outcome"]) for r in await model_requests(mock)]
    assert outcomes == [(1, "completed"), (2, "completed"), (1, "disconnected"), (1, "completed")]
    interrupted = "".join(u["content"]["text"] for u in editor.sent(gone, "user_message_chunk"))
    assert "Rename greet" in interrupted


async def test_an_editor_gone_while_it_is_asked_ends_the_run_without_another_model_turn(
    pyproj: Path, home: Home, tmp_path: Path
) -> None:
    """Found with a TypeScript-SDK client: the permission request failed
    ("Connection closed") before the run was aborted, so the run took the
    refusal for the tool's result and asked the model again, with no one
    left to see the answer (the replay model answers at once)."""
    script = tmp_path / "asked.yaml"
    turns = [tool_turn(call("run_command", command="echo hi")), {"text": "unseen"}]
    script.write_text(yaml.safe_dump({"turns": turns}))
    config = rein_config(home.path, "http://unused")
    config["model"] = {"provider": "replay", "script": str(script), "apiKeyEnv": ""}
    write_config(home.config_file, config)
    async with started(pyproj, home, permissions=["allow_once"]) as (agent, sid):
        agent.editor.hold("session/request_permission")
        running = asyncio.ensure_future(
            agent.conn.prompt(session_id=sid, prompt=[text_block("say hi")])
        )
        await agent.editor.wait_for_call("session/request_permission")
        running.cancel()  # the editor stops waiting and closes the pipe
        with contextlib.suppress(asyncio.CancelledError):
            await running
        gone = agent
    assert gone.process.returncode == 0, gone.log()

    editor = FakeAcpClient(pyproj)
    async with running_agent(editor, home, name="second") as agent:
        await agent.initialize()
        with anyio.fail_after(REQUEST_S):
            await agent.conn.load_session(cwd=str(pyproj), session_id=sid, mcp_servers=[])
    [command] = editor.tool_calls(sid).values()
    assert command["status"] == "failed"
    assert "unseen" not in editor.said(sid)  # no model turn after the editor left
