"""ReinAcpAgent through the SDK's connections: a prompt's updates and stop
reason, cancel, bad input answered with errors naming what was wrong, modes,
the extension methods, session/list and session/load after a restart."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, helpers
from acp.schema import ClientCapabilities, FileSystemCapabilities, McpServerStdio, SseMcpServer

from rein.providers.mock_server import MockServer
from rein.store import SqliteStore
from tests.acp_core.conftest import config_for, connected
from tests.fakes.acp_client import FakeAcpClient, FakeTerminal
from tests.fakes.models import complete_turn, plan_turn

#: The tests' real stdio MCP server.
TOOLBOX = Path(__file__).resolve().parents[1] / "mcp_servers" / "toolbox.py"

READ_THEN_ANSWER = [
    {
        "text": "Reading it.",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}, "id": "c1"}],
        "expect": {"tools_include": ["read_file", "edit_file", "run_command"]},
    },
    {
        "text": "VALUE is 1.",
        "expect": {"last_role": "tool", "last_message_contains": "VALUE = 1"},
    },
]


async def test_a_prompt_streams_its_updates_and_ends_the_turn(
    connect: Callable[..., Any], workspace: Path
) -> None:
    async with connect() as c:
        c.server.load(READ_THEN_ANSWER)
        session_id = await c.new()
        response = await c.conn.prompt(
            session_id=session_id, prompt=[helpers.text_block("what is VALUE?")]
        )
        assert response.stop_reason == "end_turn"
        assert c.client.texts() == "Reading it.VALUE is 1."
        [start] = c.client.of("tool_call")
        assert (start.tool_call_id, start.title, start.kind, start.status) == (
            "c1",
            "Read app.py",
            "read",
            "in_progress",
        )
        assert start.locations[0].path == str(workspace / "app.py")
        assert start.raw_input == {"path": "app.py"}
        [end] = [u for u in c.client.of("tool_call_update") if u.status is not None]
        assert end.status == "completed" and "VALUE = 1" in end.content[0].content.text
        # Every update arrived before the answer, in the order of the run.
        kinds = [u.session_update for _, u in c.client.updates]
        assert kinds.index("tool_call") < kinds.index("tool_call_update")
        assert {sid for sid, _ in c.client.updates} == {session_id}


RUN_TRUE: dict[str, Any] = {
    "tool_calls": [{"name": "run_command", "arguments": {"command": "true"}, "id": "r1"}]
}
"""A model turn that runs ``true``, which asks the client for permission."""

EDIT_APP = [
    {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {
                    "path": "app.py",
                    "old_string": "VALUE = 1",
                    "new_string": "VALUE = 2",
                },
                "id": "e1",
            }
        ]
    },
    {"text": "Changed."},
]


async def test_an_edit_is_a_diff_of_the_file_before_and_after(
    connect: Callable[..., Any], workspace: Path
) -> None:
    async with connect() as c:
        c.server.load(EDIT_APP)
        session_id = await c.new()
        response = await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("bump")])
        assert response.stop_reason == "end_turn"
        [start] = c.client.of("tool_call")
        assert (start.title, start.kind) == ("Edit app.py", "edit")
        [end] = [u for u in c.client.of("tool_call_update") if u.status == "completed"]
        [diff] = end.content
        assert diff.type == "diff" and diff.path == str(workspace / "app.py")
        assert (diff.old_text, diff.new_text) == ("VALUE = 1\n", "VALUE = 2\n")


async def test_with_the_clients_fs_the_edit_goes_into_its_buffer(
    connect: Callable[..., Any], workspace: Path
) -> None:
    async with connect() as c:
        c.server.load(EDIT_APP)
        app = str(workspace / "app.py")
        c.client.buffers[app] = "VALUE = 1\n# unsaved\n"
        session_id = await c.new(
            ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
        )
        response = await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("bump")])
        assert response.stop_reason == "end_turn"
        assert c.client.buffers[app] == "VALUE = 2\n# unsaved\n"
        assert (workspace / "app.py").read_text() == "VALUE = 1\n"  # not saved: disk untouched
        assert [p["session_id"] for p in c.client.params("fs/write_text_file")] == [session_id]
        [end] = [u for u in c.client.of("tool_call_update") if u.status == "completed"]
        [diff] = end.content
        assert (diff.old_text, diff.new_text) == (
            "VALUE = 1\n# unsaved\n",
            "VALUE = 2\n# unsaved\n",
        )


async def test_with_the_clients_terminal_the_command_shows_there(
    connect: Callable[..., Any],
) -> None:
    client = FakeAcpClient(terminals=[FakeTerminal(["ok\n"])], permissions=["allow_once"])
    async with connect(client=client) as c:
        c.server.load(
            [
                {
                    "tool_calls": [
                        {"name": "run_command", "arguments": {"command": "echo ok"}, "id": "r1"}
                    ]
                },
                {"text": "Ran.", "expect": {"last_message_contains": "ok"}},
            ]
        )
        session_id = await c.new(ClientCapabilities(terminal=True))
        response = await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("run")])
        assert response.stop_reason == "end_turn"
        [create] = client.params("terminal/create")
        assert create["session_id"] == session_id
        [permission] = client.params("session/request_permission")
        assert permission["tool_call"].tool_call_id == "r1"
        shown = [u for u in client.of("tool_call_update") if u.content and u.status is None]
        assert shown[0].content[0].type == "terminal"
        terminal_id = shown[0].content[0].terminal_id
        [end] = [u for u in client.of("tool_call_update") if u.status == "completed"]
        assert end.content[0].type == "terminal" and end.content[0].terminal_id == terminal_id


async def test_cancel_ends_the_prompt_with_cancelled(
    connect: Callable[..., Any], workspace: Path, mock_server: MockServer
) -> None:
    client = FakeAcpClient(hang=["session/request_permission"])
    # Asked about, so the unanswered question holds the run (sandboxed, the
    # default, the command would run unasked and could end the run first).
    config = config_for(mock_server, approval={"command": "ask"})
    async with connect(client=client, config=config) as c:
        c.server.load(
            [
                RUN_TRUE,
                {"text": "never asked for"},
            ]
        )
        session_id = await c.new()
        prompt = await c.prompt_to_its_tool_call(session_id)
        [started] = client.of("tool_call")
        assert (started.kind, started.title) == ("execute", "Run `true`")
        # A second prompt meanwhile: the session is busy.
        with pytest.raises(RequestError) as busy:
            await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("again")])
        assert busy.value.code == -32600 and session_id in str(busy.value)
        await c.conn.cancel(session_id=session_id)
        response = await asyncio.wait_for(prompt, 30)
        assert response.stop_reason == "cancelled"
        # Cancel of nothing and of an unknown session: no crash, still serving.
        await c.conn.cancel(session_id=session_id)
        await c.conn.cancel(session_id="ses_nope")
        listed = await c.conn.list_sessions(cwd=str(workspace))
        assert session_id in [s.session_id for s in listed.sessions]


async def test_an_unknown_session_is_named(connect: Callable[..., Any]) -> None:
    async with connect() as c:
        await c.conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as error:
            await c.conn.prompt(session_id="ses_missing", prompt=[helpers.text_block("hi")])
        assert error.value.code == -32002
        assert error.value.data == {"sessionId": "ses_missing"}
        assert "ses_missing" in str(error.value)


@pytest.mark.parametrize(
    ("cwd", "problem"),
    [
        pytest.param("relative/dir", "not an absolute path", id="relative"),
        pytest.param("/no/such/folder/here", "not an existing folder", id="missing"),
    ],
)
async def test_a_bad_cwd_is_invalid_params_naming_cwd(
    connect: Callable[..., Any], cwd: str, problem: str
) -> None:
    async with connect() as c:
        await c.conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as error:
            await c.conn.new_session(cwd=cwd)
        assert error.value.code == -32602
        assert error.value.data == {"field": "cwd"} and problem in str(error.value)


async def test_malformed_requests_name_the_field(connect: Callable[..., Any]) -> None:
    async with connect() as c:
        session_id = await c.new()
        with pytest.raises(RequestError) as missing:
            await c.raw("session/prompt", {"prompt": [{"type": "text", "text": "hi"}]})
        assert missing.value.code == -32602
        assert ["sessionId"] in [list(e["loc"]) for e in missing.value.data["errors"]]
        with pytest.raises(RequestError) as image:
            await c.raw(
                "session/prompt",
                {
                    "sessionId": session_id,
                    "prompt": [
                        {"type": "text", "text": "look"},
                        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                    ],
                },
            )
        assert image.value.code == -32602 and image.value.data == {"field": "prompt[1]"}
        with pytest.raises(RequestError) as mode:
            await c.conn.set_session_mode(session_id=session_id, mode_id="yolo")
        assert mode.value.code == -32602 and mode.value.data == {"field": "modeId"}


async def test_set_mode_switches_the_session_and_says_so(connect: Callable[..., Any]) -> None:
    async with connect() as c:
        await c.conn.initialize(protocol_version=1)
        new = await c.conn.new_session(cwd=str(c.root))
        assert new.modes.current_mode_id == "agent"
        assert [m.id for m in new.modes.available_modes] == ["agent", "plan", "explain"]
        assert [o.id for o in new.config_options] == ["mode", "model"]
        assert new.config_options[1].current_value == "mock-1"
        await c.conn.set_session_mode(session_id=new.session_id, mode_id="explain")
        [update] = c.client.of("current_mode_update")
        assert update.current_mode_id == "explain"
        # A client that shows the config options sees it too.
        [options] = c.client.of("config_option_update")
        assert [o.current_value for o in options.config_options] == ["explain", "mock-1"]
        c.server.load(
            [{"text": "It is 1.", "expect": {"tools_exclude": ["edit_file", "write_file"]}}]
        )
        response = await c.conn.prompt(
            session_id=new.session_id, prompt=[helpers.text_block("what is VALUE?")]
        )
        assert response.stop_reason == "end_turn"
        assert c.client.texts() == "It is 1."


async def test_the_model_option_changes_the_model_of_the_next_turn(
    connect: Callable[..., Any],
) -> None:
    async with connect() as c:
        session_id = await c.new()
        answer = await c.conn.set_config_option(
            config_id="model", session_id=session_id, value="mock-2"
        )
        assert answer.config_options[1].current_value == "mock-2"
        assert [o.value for o in answer.config_options[1].options] == ["mock-1", "mock-2"]
        c.server.load([{"text": "ok"}])
        response = await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("hi")])
        assert response.stop_reason == "end_turn" and c.client.texts() == "ok"
        assert c.server.requests[-1].body["model"] == "mock-2"


async def test_steer_and_follow_up_need_a_running_prompt(connect: Callable[..., Any]) -> None:
    async with connect() as c:
        session_id = await c.new()
        for method in ("rein/steer", "rein/followUp"):
            with pytest.raises(RequestError) as idle:
                await c.conn.ext_method(method, {"sessionId": session_id, "text": "faster"})
            assert idle.value.code == -32600 and "not running a prompt" in str(idle.value)
        with pytest.raises(RequestError) as no_text:
            await c.conn.ext_method("rein/steer", {"sessionId": session_id})
        assert no_text.value.data == {"field": "text"}


async def test_steer_reaches_the_running_prompt(
    connect: Callable[..., Any], mock_server: MockServer
) -> None:
    client = FakeAcpClient(permissions=["reject_once"], held=["session/request_permission"])
    # The command is asked about (approval.command "ask"; sandboxed, the
    # default, it would run unasked) and the held question keeps the run there.
    config = config_for(mock_server, approval={"command": "ask"})
    async with connect(client=client, config=config) as c:
        c.server.load(
            [
                RUN_TRUE,
                {"text": "Steered.", "expect": {"messages_contain": ["use pathlib"]}},
            ]
        )
        session_id = await c.new()
        prompt = await c.prompt_to_its_tool_call(session_id)
        answer = await c.conn.ext_method(
            "rein/steer", {"sessionId": session_id, "text": "use pathlib"}
        )
        assert answer == {"delivered": True}
        client.release("session/request_permission")
        assert (await asyncio.wait_for(prompt, 30)).stop_reason == "end_turn"
        assert c.client.texts() == "Steered."
        [end] = [u for u in c.client.of("tool_call_update") if u.status is not None]
        assert end.status == "failed"  # the person rejected the command


async def test_a_missing_key_offers_an_auth_method_and_refuses_sessions(
    connect: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    async with connect() as c:
        init = await c.conn.initialize(protocol_version=1)
        [method] = init.auth_methods
        assert method.id == "env:OPENAI_API_KEY" and "OPENAI_API_KEY" in method.description
        assert init.agent_capabilities.load_session is True
        assert init.agent_capabilities.prompt_capabilities.embedded_context is True
        assert init.agent_capabilities.prompt_capabilities.image is False
        with pytest.raises(RequestError) as refused:
            await c.conn.new_session(cwd=str(c.root))
        assert refused.value.code == -32000 and "OPENAI_API_KEY" in str(refused.value)
        with pytest.raises(RequestError):
            await c.conn.authenticate(method_id="env:OPENAI_API_KEY")
        monkeypatch.setenv("OPENAI_API_KEY", "now-set")
        await c.conn.authenticate(method_id="env:OPENAI_API_KEY")
        assert (await c.conn.new_session(cwd=str(c.root))).session_id.startswith("ses_")


async def test_a_failed_run_says_why_and_ends_the_turn(
    workspace: Path, tmp_path: Path, mock_server: Any
) -> None:
    config = config_for(mock_server, harness={"maxModelTurnsPerRun": 1})
    async with connected(workspace, tmp_path / "store", mock_server, config=config) as c:
        c.server.load(READ_THEN_ANSWER)
        session_id = await c.new()
        response = await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("go")])
        assert response.stop_reason == "max_turn_requests"


async def test_load_after_a_restart_replays_the_transcript(
    connect: Callable[..., Any], workspace: Path
) -> None:
    async with connect() as c:
        c.server.load(READ_THEN_ANSWER)
        session_id = await c.new()
        await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("what is VALUE?")])
    async with connect() as again:
        await again.conn.initialize(protocol_version=1)
        listed = await again.conn.list_sessions(cwd=str(workspace))
        assert [s.session_id for s in listed.sessions] == [session_id]
        assert listed.sessions[0].title == "what is VALUE?"
        loaded = await again.conn.load_session(cwd=str(workspace), session_id=session_id)
        assert loaded.modes.current_mode_id == "agent"
        kinds = [u.session_update for _, u in again.client.updates]
        assert kinds == [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "agent_message_chunk",
        ]
        assert again.client.texts("user_message_chunk") == "what is VALUE?"
        [call] = again.client.of("tool_call")
        assert (call.tool_call_id, call.status) == ("c1", "completed")
        with pytest.raises(RequestError) as unknown:
            await again.conn.load_session(cwd=str(workspace), session_id="ses_unknown")
        assert unknown.value.code == -32002


async def test_a_client_that_leaves_mid_run_leaves_the_session_loadable(
    connect: Callable[..., Any], workspace: Path, mock_server: MockServer
) -> None:
    client = FakeAcpClient(hang=["session/request_permission"])
    # Asked about, so the unanswered question holds the run (sandboxed, the
    # default, the command would run unasked and could end the run first).
    config = config_for(mock_server, approval={"command": "ask"})
    async with connect(client=client, config=config) as c:
        c.server.load(
            [
                {**RUN_TRUE, "text": "Running it."},
            ]
        )
        session_id = await c.new()
        prompt = await c.prompt_to_its_tool_call(session_id)
    # Leaving closed the client's end: the agent saw end of input, aborted
    # the run and closed its hosts (connected() waited for it, bounded).
    assert c.agent_task.done() and c.agent_task.exception() is None
    prompt.cancel()
    async with connect() as again:
        await again.conn.initialize(protocol_version=1)
        await again.conn.load_session(cwd=str(workspace), session_id=session_id)
        assert again.client.texts("user_message_chunk") == "run it"
        assert again.client.texts() == "Running it."
        [call] = again.client.of("tool_call")
        assert call.tool_call_id == "r1" and call.status == "failed"
        # The loaded session runs again.
        again.server.load([{"text": "Back."}])
        response = await again.conn.prompt(
            session_id=session_id, prompt=[helpers.text_block("go on")]
        )
        assert response.stop_reason == "end_turn"


async def test_the_clients_mcp_servers_are_offered_and_called(
    connect: Callable[..., Any], workspace: Path
) -> None:
    client = FakeAcpClient(permissions=["allow_once"])
    async with connect(client=client) as c:
        c.server.load(
            [
                {
                    "tool_calls": [
                        {"name": "mcp__box__echo", "arguments": {"text": "hi there"}, "id": "m1"}
                    ],
                    "expect": {"tools_include": ["mcp__box__echo"]},
                },
                {"text": "Echoed.", "expect": {"last_message_contains": "hi there"}},
            ]
        )
        init = await c.conn.initialize(protocol_version=1)
        assert init.agent_capabilities.mcp_capabilities.http is True
        new = await c.conn.new_session(
            cwd=str(workspace),
            mcp_servers=[
                McpServerStdio(name="box", command=sys.executable, args=[str(TOOLBOX)], env=[])
            ],
        )
        response = await c.conn.prompt(
            session_id=new.session_id, prompt=[helpers.text_block("echo")]
        )
        assert response.stop_reason == "end_turn" and c.client.texts() == "Echoed."
        [start] = c.client.of("tool_call")
        assert (start.title, start.kind) == ("box: echo", "other")
        with pytest.raises(RequestError) as sse:
            await c.conn.new_session(
                cwd=str(workspace),
                mcp_servers=[SseMcpServer(type="sse", name="s", url="http://x", headers=[])],
            )
        assert sse.value.data == {"field": "mcpServers[0]"}


async def test_plan_mode_sends_the_plan_as_it_moves(connect: Callable[..., Any]) -> None:
    def read(path: str) -> dict[str, Any]:
        return {"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]}

    async with connect() as c:
        c.server.load(
            [
                plan_turn(("s1", "read app.py"), ("s2", "read it again")),
                read("app.py"),
                complete_turn("s1", summary="read"),
                read("app.py"),
                complete_turn("s2", summary="read again"),
                {"text": "Read it twice."},
            ]
        )
        session_id = await c.new()
        await c.conn.set_session_mode(session_id=session_id, mode_id="plan")
        response = await c.conn.prompt(
            session_id=session_id, prompt=[helpers.text_block("read app.py twice")]
        )
        assert response.stop_reason == "end_turn"
        plans = [[(e.content, e.status) for e in u.entries] for u in c.client.of("plan")]
        assert plans[0] == [("read app.py", "pending"), ("read it again", "pending")]
        assert ("read app.py", "in_progress") in plans[1]
        assert plans[-1] == [("read app.py", "completed"), ("read it again", "completed")]


async def test_a_question_is_said_and_the_next_prompt_answers_it(
    connect: Callable[..., Any],
) -> None:
    async with connect() as c:
        c.server.load(
            [
                {
                    "tool_calls": [
                        {"name": "ask_user", "arguments": {"question": "Which file?"}, "id": "q1"}
                    ]
                },
                {
                    "text": "Thanks.",
                    "expect": {"last_role": "tool", "last_message_contains": "app.py"},
                },
            ]
        )
        session_id = await c.new()
        first = await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("fix it")])
        assert first.stop_reason == "end_turn"
        assert "Which file?" in c.client.texts()
        second = await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("app.py")])
        assert second.stop_reason == "end_turn" and c.client.texts().endswith("Thanks.")


async def test_a_mode_switch_keeps_the_transcript_across_a_restart(
    connect: Callable[..., Any], workspace: Path
) -> None:
    async with connect() as c:
        c.server.load(READ_THEN_ANSWER)
        session_id = await c.new()
        await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("what is VALUE?")])
        await c.conn.set_session_mode(session_id=session_id, mode_id="plan")
    async with connect() as again:
        await again.conn.initialize(protocol_version=1)
        loaded = await again.conn.load_session(cwd=str(workspace), session_id=session_id)
        assert loaded.modes.current_mode_id == "plan"
        assert again.client.texts("user_message_chunk") == "what is VALUE?"
        assert again.client.texts() == "Reading it.VALUE is 1."


async def test_a_second_folder_does_not_mark_the_first_folders_run_interrupted(
    connect: Callable[..., Any], workspace: Path, tmp_path: Path, mock_server: MockServer
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    client = FakeAcpClient(hang=["session/request_permission"])
    # The command is asked about (approval.command "ask"; sandboxed, the
    # default, it runs unasked and the run could end before the cancel).
    config = config_for(mock_server, approval={"command": "ask"})
    async with connect(client=client, config=config) as c:
        c.server.load([{"tool_calls": [{"name": "run_command", "arguments": {"command": "true"}}]}])
        session_id = await c.new()
        prompt = await c.prompt_to_its_tool_call(session_id)
        await c.conn.new_session(cwd=str(other), mcp_servers=[])
        store = SqliteStore.open(str(c.storage))
        try:
            record = await store.get_session(session_id)
        finally:
            store.close()
        assert record is not None and record.status == "running"
        await c.conn.cancel(session_id=session_id)
        assert (await asyncio.wait_for(prompt, 30)).stop_reason == "cancelled"


async def test_an_answer_no_turn_streamed_is_said(connect: Callable[..., Any]) -> None:
    async with connect() as c:
        c.server.load(
            [
                plan_turn(("s1", "look at app.py")),
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
                complete_turn("s1", summary="app.py sets VALUE"),
            ]
        )
        session_id = await c.new()
        await c.conn.set_session_mode(session_id=session_id, mode_id="plan")
        response = await c.conn.prompt(
            session_id=session_id, prompt=[helpers.text_block("what does app.py do?")]
        )
        assert response.stop_reason == "end_turn"
        assert c.client.texts().strip() == "app.py sets VALUE"


async def test_a_session_loads_only_in_its_own_folder(
    connect: Callable[..., Any], workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    async with connect() as c:
        session_id = await c.new()
        with pytest.raises(RequestError) as live:
            await c.conn.load_session(cwd=str(other), session_id=session_id, mcp_servers=[])
        assert live.value.data == {"field": "cwd"} and str(workspace) in str(live.value)
        c.server.load([{"text": "hi"}])
        await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("hello")])
    async with connect() as again:
        await again.conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as stored:
            await again.conn.load_session(cwd=str(other), session_id=session_id, mcp_servers=[])
        assert stored.value.code == -32602 and stored.value.data == {"field": "cwd"}


async def test_a_follow_up_runs_after_the_prompt_it_was_queued_on(
    connect: Callable[..., Any], mock_server: MockServer
) -> None:
    client = FakeAcpClient(permissions=["reject_once"], held=["session/request_permission"])
    # Asked about, so the held question keeps the run at its tool call (as
    # test_steer_reaches_the_running_prompt).
    config = config_for(mock_server, approval={"command": "ask"})
    async with connect(client=client, config=config) as c:
        c.server.load(
            [
                RUN_TRUE,
                {"text": "Done."},
                {"text": "Listed.", "expect": {"last_message_contains": "then list the files"}},
            ]
        )
        session_id = await c.new()
        prompt = await c.prompt_to_its_tool_call(session_id)
        answer = await c.conn.ext_method(
            "rein/followUp", {"sessionId": session_id, "text": "then list the files"}
        )
        assert answer == {"queued": True}
        client.release("session/request_permission")
        assert (await asyncio.wait_for(prompt, 30)).stop_reason == "end_turn"
        assert c.client.texts() == "Done.Listed."


async def test_session_list_pages_newest_first(
    connect: Callable[..., Any], workspace: Path
) -> None:
    async with connect() as c:
        first = await c.new()
        made = [first] + [
            (await c.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            for _ in range(54)
        ]
        page = await c.conn.list_sessions(cwd=str(workspace))
        assert len(page.sessions) == 50 and page.next_cursor == "50"
        rest = await c.conn.list_sessions(cwd=str(workspace), cursor=page.next_cursor)
        assert len(rest.sessions) == 5 and rest.next_cursor is None
        listed = [s.session_id for s in page.sessions + rest.sessions]
        assert sorted(listed) == sorted(made)
        stamps = [s.updated_at for s in page.sessions + rest.sessions]
        assert stamps == sorted(stamps, reverse=True)
        with pytest.raises(RequestError) as bad:
            await c.conn.list_sessions(cwd=str(workspace), cursor="next please")
        assert bad.value.data == {"field": "cursor"}


async def test_a_mode_chosen_during_a_prompt_applies_to_the_next(
    connect: Callable[..., Any], mock_server: MockServer
) -> None:
    client = FakeAcpClient(permissions=["reject_once"], held=["session/request_permission"])
    # Asked about, so the held question keeps the run at its tool call (as
    # test_steer_reaches_the_running_prompt).
    config = config_for(mock_server, approval={"command": "ask"})
    async with connect(client=client, config=config) as c:
        c.server.load(
            [
                {**RUN_TRUE, "expect": {"tools_include": ["edit_file"]}},
                {"text": "Done."},
                {"text": "Explained.", "expect": {"tools_exclude": ["edit_file", "run_command"]}},
            ]
        )
        session_id = await c.new()
        prompt = await c.prompt_to_its_tool_call(session_id)
        await c.conn.set_session_mode(session_id=session_id, mode_id="explain")
        [said] = client.of("current_mode_update")
        assert said.current_mode_id == "explain"
        client.release("session/request_permission")
        assert (await asyncio.wait_for(prompt, 30)).stop_reason == "end_turn"
        response = await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("why?")])
        assert response.stop_reason == "end_turn"
        assert c.client.texts() == "Done.Explained."
