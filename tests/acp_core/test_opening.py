"""``session/resume`` and ``session/fork`` through the SDK's connections
(both were Method not found while Rein kept every session in its store):
resume opens a stored session without replaying it, a fork is a new
session that starts from another's conversation and leaves it alone; both
in the session's own folder only. And the title a first prompt gives the
thread (``session_info_update``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, helpers

from rein.harness.conversation.transcripts import INTERRUPTED
from rein.store import SqliteStore
from rein.store.memory_keys import EXECUTOR_MEMORY, MAIN_MEMORY, PLANNER_MEMORY
from tests.acp_core.conftest import config_for, connected
from tests.acp_core.test_agent import READ_THEN_ANSWER, RUN_TRUE
from tests.fakes.acp_client import FakeAcpClient
from tests.fakes.models import complete_turn, plan_turn


async def _prompted(c: Any, text: str = "what is VALUE?") -> str:
    """A new session that has answered one prompt (READ_THEN_ANSWER)."""
    c.server.load(READ_THEN_ANSWER)
    session_id: str = await c.new()
    answer = await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block(text)])
    assert answer.stop_reason == "end_turn"
    return session_id


def _remembers(answer: str) -> list[dict[str, Any]]:
    """One model turn that answers only when the request holds the first
    session's conversation."""
    return [{"text": answer, "expect": {"messages_contain": ["what is VALUE?", "VALUE is 1."]}}]


async def test_resume_after_a_restart_replays_nothing_and_the_run_goes_on_with_the_history(
    connect: Callable[..., Any], workspace: Path, tmp_path: Path
) -> None:
    async with connect() as c:
        session_id = await _prompted(c)
    async with connect() as again:
        started = await again.conn.initialize(protocol_version=1)
        caps = started.agent_capabilities.session_capabilities
        assert caps.resume is not None and caps.fork is not None
        resumed = await again.conn.resume_session(cwd=str(workspace), session_id=session_id)
        assert resumed.modes.current_mode_id == "agent"
        assert {o.id for o in resumed.config_options} == {"mode", "model"}
        assert again.client.updates == []  # unlike session/load
        again.server.load(_remembers("Still 1."))
        answer = await again.conn.prompt(
            session_id=session_id, prompt=[helpers.text_block("and now?")]
        )
        assert answer.stop_reason == "end_turn" and again.client.texts() == "Still 1."
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        with pytest.raises(RequestError) as other_folder:
            await again.conn.resume_session(cwd=str(elsewhere), session_id=session_id)
        assert other_folder.value.code == -32602 and other_folder.value.data == {"field": "cwd"}
        with pytest.raises(RequestError) as unknown:
            await again.conn.resume_session(cwd=str(workspace), session_id="ses_unknown")
        assert unknown.value.code == -32002


async def test_a_fork_starts_from_the_conversation_and_leaves_the_source_alone(
    connect: Callable[..., Any], workspace: Path, tmp_path: Path
) -> None:
    async with connect() as c:
        source = await _prompted(c)
        forked = await c.conn.fork_session(cwd=str(workspace), session_id=source)
        assert forked.session_id != source
        assert forked.modes.current_mode_id == "agent"
        c.server.load(_remembers("A summary."))
        answer = await c.conn.prompt(
            session_id=forked.session_id, prompt=[helpers.text_block("summarize")]
        )
        assert answer.stop_reason == "end_turn"
        assert c.client.said(forked.session_id) == "A summary."
        listed = await c.conn.list_sessions(cwd=str(workspace))
        assert {s.session_id for s in listed.sessions} == {source, forked.session_id}
        with pytest.raises(RequestError) as unknown:
            await c.conn.fork_session(cwd=str(workspace), session_id="ses_unknown")
        assert unknown.value.code == -32002
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        with pytest.raises(RequestError) as other_folder:
            await c.conn.fork_session(cwd=str(elsewhere), session_id=source)
        assert other_folder.value.data == {"field": "cwd"}
    store = SqliteStore.open(str(c.storage))
    try:
        kept = await store.load_messages(source, MAIN_MEMORY)
        fork = await store.load_messages(forked.session_id, MAIN_MEMORY)
    finally:
        store.close()
    assert "summarize" not in str(kept)
    assert len(fork) == len(kept) + 2  # the source's conversation, then the fork's turn
    assert [m.role for m in fork[: len(kept)]] == [m.role for m in kept]


async def test_a_fork_of_a_stored_session_loads_after_a_restart(
    connect: Callable[..., Any], workspace: Path
) -> None:
    async with connect() as c:
        source = await _prompted(c)
    async with connect() as again:
        await again.conn.initialize(protocol_version=1)
        forked = await again.conn.fork_session(cwd=str(workspace), session_id=source)
    async with connect() as third:
        await third.conn.initialize(protocol_version=1)
        await third.conn.load_session(cwd=str(workspace), session_id=forked.session_id)
        assert third.client.texts("user_message_chunk") == "what is VALUE?"
        assert third.client.texts() == "Reading it.VALUE is 1."


async def test_a_fork_of_a_running_session_starts_from_its_last_step(
    workspace: Path, tmp_path: Path, mock_server: Any
) -> None:
    client = FakeAcpClient(permissions=["reject_once"], held=["session/request_permission"])
    # The command is asked about (approval.command "ask"; sandboxed, the
    # default, it would run unasked and the source's next model turn would
    # race the fork's for the script's second turn) and the held question
    # keeps the source at its tool call.
    config = config_for(mock_server, approval={"command": "ask"})
    store = tmp_path / "store"
    async with connected(workspace, store, mock_server, client=client, config=config) as c:
        c.server.load(
            [
                RUN_TRUE,
                {"text": "Forked.", "expect": {"messages_contain": ["run it", INTERRUPTED]}},
                {"text": "Done.", "expect": {"messages_exclude": ["the fork's"]}},
            ]
        )
        source = await c.new()
        running = await c.prompt_to_its_tool_call(source)
        await client.wait_for_call("session/request_permission")
        forked = await c.conn.fork_session(cwd=str(workspace), session_id=source)
        answer = await c.conn.prompt(
            session_id=forked.session_id, prompt=[helpers.text_block("the fork's question")]
        )
        assert answer.stop_reason == "end_turn"
        assert client.said(forked.session_id) == "Forked."
        client.release("session/request_permission")
        assert (await asyncio.wait_for(running, 30)).stop_reason == "end_turn"
        assert client.said(source) == "Done."


async def test_the_first_prompt_titles_the_thread_once(connect: Callable[..., Any]) -> None:
    # session_info_update (stable in ACP v1): the title session/list shows.
    async with connect() as c:
        session_id = await _prompted(c)
        c.server.load([{"text": "again"}])
        await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("and again")])
        [info] = c.client.sent(session_id, "session_info_update")
        assert info["title"] == "what is VALUE?" and info["updatedAt"]
        kinds = [u["sessionUpdate"] for u in c.client.sent(session_id)]
        assert kinds.index("session_info_update") > kinds.index("tool_call")  # after the run's


async def test_a_fork_of_a_plan_carries_the_plan_and_says_it_cannot_answer_the_question(
    connect: Callable[..., Any],
) -> None:
    async with connect() as c:
        c.server.load(
            [
                plan_turn(("s1", "find out which file, then read it")),
                {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Which file?"}}]},
                # The fork's prompt is no answer: the executor reads that the
                # question went unanswered, and its step goes on.
                {
                    "tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}],
                    "expect": {
                        "messages_contain": ["Not answered here", "Which file?", "go on"],
                        "messages_exclude": ["The person answered"],
                    },
                },
                complete_turn("s1", summary="read app.py"),
            ]
        )
        source = await c.new()
        await c.conn.set_session_mode(session_id=source, mode_id="plan")
        asked = await c.conn.prompt(session_id=source, prompt=[helpers.text_block("fix it")])
        assert asked.stop_reason == "end_turn" and "Which file?" in c.client.said(source)
        forked = await c.conn.fork_session(cwd=str(c.root), session_id=source)
        fork = forked.session_id
        assert forked.modes.current_mode_id == "plan"
        told = await c.client.wait_update(lambda u: "Not answered here" in str(u))
        assert "Which file?" in str(told)
        [plan] = c.client.sent(fork, "plan")
        assert [e["content"] for e in plan["entries"]] == ["find out which file, then read it"]
        went_on = await c.conn.prompt(session_id=fork, prompt=[helpers.text_block("go on")])
        assert went_on.stop_reason == "end_turn"
        store = SqliteStore.open(str(c.storage))
        try:
            kept = await store.memory_state(fork, PLANNER_MEMORY)
            waits = await store.memory_state(source, EXECUTOR_MEMORY)
        finally:
            store.close()
        # The fork's plan is stored with it; the source still waits on its question.
        assert [s["id"] for s in kept["steps"]] == ["s1"]
        assert waits.get("waiting_for") is not None
