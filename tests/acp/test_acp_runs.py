"""Runs through ``rein acp`` as an editor sees them: edits in its buffers
judged by the real analyzers, plan mode, cancel, permissions, terminals,
steering and a busy session. The real ``rein acp`` over stdio; the model an
``openai`` provider talking HTTP to the mock server, every scenario turn
checking the request it answers (``expect``).

The runs that read only their own session's updates (plan mode, a cancel, a
one-step plan) share one ``rein acp`` and one mock model (:func:`shared`),
each in a session of its own; the others start their own (an editor with
its own permission answers or configuration, or reading all its calls)."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
import pytest_asyncio
from acp import RequestError
from acp.helpers import text_block

from rein.providers.mock_server import MockServer
from tests.acp.conftest import (
    REQUEST_S,
    WORKSPACES,
    Agent,
    Home,
    assert_used_up,
    call,
    load_scenario,
    model_requests,
    prompt_under_way,
    rein_config,
    stall_turn,
    started,
    tool_turn,
    write_config,
)

pytestmark = pytest.mark.e2e

ORIGINAL = '"""Fixture project for the end-to-end gate tests."""\n\n\ndef greet(name: str) -> str:\n    return f"hello {name}"\n'
UNSAVED = "\n\nGREETING = greet('you')\n"
WORK = ["read_file", "edit_file"]


#: A test on the module's shared ``rein acp`` (its event loop is the module's).
on_shared = pytest.mark.asyncio(loop_scope="module")


@dataclass
class Shared:
    """One ``rein acp`` (an editor answering no permission request) on a
    copy of pyproj, with its mock model."""

    agent: Agent
    mock: MockServer
    pyproj: Path

    def model(self) -> MockServer:
        """The mock model, the earlier tests' requests forgotten."""
        self.mock.reset()
        return self.mock

    async def session(self) -> str:
        """A new session of the test's own on pyproj."""
        return (await self.agent.new_session(self.pyproj)).session_id


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Shared]:
    tmp_path = tmp_path_factory.mktemp("acp-runs")
    pyproj = tmp_path / "pyproj"
    shutil.copytree(WORKSPACES / "pyproj", pyproj)
    path = tmp_path / "home"
    path.mkdir()
    mock = MockServer()
    await mock.start()
    try:
        home = Home(path, path / "rein.yaml", path / "storage")
        write_config(home.config_file, rein_config(path, mock.url))
        async with started(pyproj, home) as (agent, _sid):
            yield Shared(agent, mock, pyproj)
    finally:
        await mock.aclose()


def edit(old: str, new: str, path: str = "app.py") -> dict[str, Any]:
    return call("edit_file", path=path, old_string=old, new_string=new)


async def prompt(agent: Agent, session_id: str, text: str) -> str:
    with anyio.fail_after(REQUEST_S):
        answer = await agent.conn.prompt(session_id=session_id, prompt=[text_block(text)])
    return answer.stop_reason


async def held_at_its_permission(agent: Agent, session_id: str, text: str) -> asyncio.Future[str]:
    """Start a prompt whose permission requests the editor holds; return,
    its run still going, once the first one has come (the editor's
    ``release("session/request_permission")`` lets them through)."""
    agent.editor.hold("session/request_permission")
    running = asyncio.ensure_future(prompt(agent, session_id, text))
    await agent.editor.wait_for_call("session/request_permission")
    return running


def contents_text(call: dict[str, Any]) -> str:
    return json.dumps(call.get("content", []))


async def test_an_edit_goes_to_the_buffer_a_real_error_is_repaired_and_the_disk_is_untouched(
    pyproj: Path, home: Home, mock: MockServer
) -> None:
    app = pyproj / "app.py"
    assert app.read_text() == ORIGINAL
    await load_scenario(
        mock,
        "typo-repair",
        [
            tool_turn(edit('return f"hello {name}"', 'return f"hello {nmae}"')),
            {"text": "done"},
            # The real analyzers judged the editor's buffer: the model is told.
            tool_turn(
                edit("{nmae}", "{name}"),
                expect={"last_message_contains": "nmae", "messages_contain": ["F821"]},
            ),
            {"text": "fixed the typo"},
        ],
    )
    async with started(pyproj, home) as (agent, sid):
        editor = agent.editor
        editor.open(app, ORIGINAL + UNSAVED)  # typed, not saved
        stop = await prompt(agent, sid, "greet people")

    assert stop == "end_turn"
    # The fix is in the editor's buffer, on top of the unsaved text; the disk
    # was never written.
    assert editor.buffers[str(app)] == ORIGINAL + UNSAVED
    assert app.read_text() == ORIGINAL
    writes = [p["content"] for m, p in editor.calls if m == "fs/write_text_file"]
    assert writes[0] == ORIGINAL.replace("{name}", "{nmae}") + UNSAVED
    assert writes[-1] == ORIGINAL + UNSAVED
    assert any(m == "fs/read_text_file" and p["path"] == str(app) for m, p in editor.calls)

    calls = list(editor.tool_calls(sid).values())
    edits = [c for c in calls if c.get("kind") == "edit"]
    assert len(edits) == 2 and all(c["status"] == "completed" for c in edits)
    diff = next(c for c in edits[0]["content"] if c["type"] == "diff")
    assert diff["path"] == str(app)
    assert "{name}" in diff["oldText"] and "{nmae}" in diff["newText"]
    checks = [c for c in calls if c.get("title", "").startswith("Check:")]
    assert [c["status"] for c in checks][:1] == ["failed"]
    assert "nmae" in contents_text(checks[0])
    assert checks[-1]["status"] == "completed"
    assert any(c.get("title", "").startswith("Repair 1/") for c in calls)
    assert editor.said(sid).endswith("fixed the typo")
    await assert_used_up(mock)


@on_shared
async def test_plan_mode_sends_the_plan_as_updates(shared: Shared) -> None:
    mock, agent = shared.model(), shared.agent
    executor = {"tools_include": [*WORK, "complete_step"], "tools_exclude": ["submit_plan"]}
    steps = [
        {"id": "s1", "description": "Add a docstring to greet"},
        {"id": "s2", "description": "Add farewell()"},
    ]
    await load_scenario(
        mock,
        "plan",
        [
            tool_turn(
                call("submit_plan", steps=steps),
                expect={"tools_include": ["submit_plan"], "tools_exclude": WORK},
            ),
            tool_turn(
                edit(
                    '    return f"hello {name}"', '    """Say hello."""\n    return f"hello {name}"'
                ),
                expect={**executor, "last_message_contains": "Step 1 of 2"},
            ),
            tool_turn(call("complete_step", step_id="s1", success=True, summary="documented")),
            tool_turn(
                call(
                    "write_file",
                    path="bye.py",
                    content='def farewell(name: str) -> str:\n    return f"bye {name}"\n',
                ),
                expect={"last_message_contains": "Step 2 of 2"},
            ),
            tool_turn(call("complete_step", step_id="s2", success=True, summary="farewell added")),
            {
                "expect": {"last_message_contains": "All steps are done", "tools_exclude": WORK},
                "text": "greet() has a docstring and farewell() is new.",
            },
        ],
    )
    sid = await shared.session()
    with anyio.fail_after(REQUEST_S):
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
    await agent.editor.wait_for(sid, lambda u: u["sessionUpdate"] == "current_mode_update")
    stop = await prompt(agent, sid, "Document greet and add a farewell")

    assert stop == "end_turn"
    [mode] = agent.editor.sent(sid, "current_mode_update")
    assert mode["currentModeId"] == "plan"
    plans = [
        [(e["status"], e["content"]) for e in p["entries"]] for p in agent.editor.sent(sid, "plan")
    ]
    assert plans, "no plan update"
    assert all([c for _, c in p] == ["Add a docstring to greet", "Add farewell()"] for p in plans)
    assert ("in_progress", "Add a docstring to greet") in plans[0] + plans[1]
    assert plans[-1] == [("completed", "Add a docstring to greet"), ("completed", "Add farewell()")]
    assert agent.editor.said(sid).endswith("greet() has a docstring and farewell() is new.")
    await assert_used_up(mock)


@on_shared
async def test_a_cancel_mid_run_stops_with_cancelled(shared: Shared) -> None:
    mock, agent = shared.model(), shared.agent
    await load_scenario(mock, "stall", [stall_turn("Let me think")])
    sid = await shared.session()
    running = await prompt_under_way(agent, sid, "take your time")
    await agent.conn.cancel(session_id=sid)
    with anyio.fail_after(REQUEST_S):
        stop = (await running).stop_reason
    # The session is not stuck: the next prompt runs.
    await load_scenario(mock, "after", [{"text": "back again"}])
    again = await prompt(agent, sid, "and now?")

    assert stop == "cancelled"
    assert again == "end_turn"
    assert agent.editor.said(sid).endswith("back again")


@on_shared
async def test_a_cancel_before_the_run_started_cancels_it_and_the_next_prompt_waits(
    shared: Shared, tmp_path: Path
) -> None:
    # A folder of its own: the session's first prompt waits for its
    # analyzers to start before its run, and the cancel comes meanwhile.
    mock, agent = shared.model(), shared.agent
    await load_scenario(mock, "after-cancel", [{"text": "the second prompt's answer"}])
    fresh = tmp_path / "fresh"
    shutil.copytree(WORKSPACES / "pyproj", fresh)
    sid = (await agent.new_session(fresh)).session_id
    on_the_wire = asyncio.Event()

    def seen(event: Any) -> None:
        params = event.message.get("params") or {}
        if event.message.get("method") == "session/prompt" and params.get("sessionId") == sid:
            on_the_wire.set()

    agent.conn._conn.add_observer(seen)
    first = asyncio.ensure_future(prompt(agent, sid, "the first prompt"))
    with anyio.fail_after(REQUEST_S):
        await on_the_wire.wait()  # rein acp reads the cancel after the prompt
    await agent.conn.cancel(session_id=sid)
    # As an editor sends the person's next message: at once, not waiting
    # for the cancelled prompt's answer.
    second = await prompt(agent, sid, "the second prompt")

    assert await first == "cancelled"
    assert second == "end_turn"
    assert agent.editor.said(sid) == "the second prompt's answer"
    assert len(await model_requests(mock)) == 1  # the first prompt never ran


@on_shared
async def test_a_cancel_of_a_prompt_waiting_behind_a_cancelled_one_cancels_it(
    shared: Shared, tmp_path: Path
) -> None:
    # Prompt, cancel, prompt, cancel, as an editor sends them: the second
    # prompt waits for the first's answer (held by its analyzers' start in
    # a folder of its own) when its cancel comes. Defect: the cancel marked
    # only the first, and the second then ran and called the model.
    mock, agent = shared.model(), shared.agent
    await load_scenario(mock, "never", [{"text": "the model was called"}])
    fresh = tmp_path / "fresh"
    shutil.copytree(WORKSPACES / "pyproj", fresh)
    sid = (await agent.new_session(fresh)).session_id
    prompts_seen = 0
    on_the_wire = [asyncio.Event(), asyncio.Event()]

    def seen(event: Any) -> None:
        nonlocal prompts_seen
        params = event.message.get("params") or {}
        if event.message.get("method") == "session/prompt" and params.get("sessionId") == sid:
            on_the_wire[min(prompts_seen, 1)].set()
            prompts_seen += 1

    agent.conn._conn.add_observer(seen)
    answers = []
    for text in ("the first prompt", "the second prompt"):
        answers.append(asyncio.ensure_future(prompt(agent, sid, text)))
        with anyio.fail_after(REQUEST_S):
            await on_the_wire[len(answers) - 1].wait()
        await agent.conn.cancel(session_id=sid)

    assert [await answer for answer in answers] == ["cancelled", "cancelled"]
    assert await model_requests(mock) == []
    assert "the model was called" not in agent.editor.said(sid)


@on_shared
async def test_session_close_cancels_the_prompt_and_the_session_leaves_until_loaded(
    shared: Shared,
) -> None:
    mock, agent = shared.model(), shared.agent
    await load_scenario(mock, "stall", [stall_turn("Let me think")])
    sid = await shared.session()
    running = await prompt_under_way(agent, sid, "take your time")
    closed = await agent.raw("session/close", {"sessionId": sid})
    with anyio.fail_after(REQUEST_S):
        stop = (await running).stop_reason
    gone = await _refused(agent.conn.prompt(session_id=sid, prompt=[text_block("still there?")]))
    again = await _refused(agent.raw("session/close", {"sessionId": sid}))
    with anyio.fail_after(REQUEST_S):  # stored: it opens again
        await agent.conn.load_session(cwd=str(shared.pyproj), session_id=sid, mcp_servers=[])
    await load_scenario(mock, "after", [{"text": "back again"}])
    reopened = await prompt(agent, sid, "and now?")

    assert closed == {}
    assert stop == "cancelled"
    assert (gone.code, gone.data) == (-32002, {"sessionId": sid})
    assert again.code == -32002
    assert reopened == "end_turn"
    assert agent.editor.said(sid).endswith("back again")


async def test_a_denied_command_is_a_refusal_the_model_reads(
    pyproj: Path, home: Home, mock: MockServer
) -> None:
    # The person's rules with the editor's terminals, under approval.command
    # "ask" (under the default "sandboxed" a command in the client's terminal,
    # which Rein cannot sandbox, asks every time and no rule is offered).
    write_config(home.config_file, rein_config(home.path, mock.url, approval={"command": "ask"}))
    await load_scenario(
        mock,
        "denied",
        [
            tool_turn(call("run_command", command="rm -rf build")),
            {
                "expect": {"last_role": "tool", "last_message_contains": "the person declined"},
                "text": "I will leave build alone.",
            },
        ],
    )
    async with started(pyproj, home, permissions=["reject_once"]) as (agent, sid):
        stop = await prompt(agent, sid, "clean up")

    assert stop == "end_turn"
    [(session, tool_call, kinds)] = agent.editor.permission_requests
    assert session == sid
    assert kinds == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert "rm -rf build" in json.dumps(tool_call)
    assert tool_call.get("kind") == "execute"
    assert not any(m == "terminal/create" for m, _ in agent.editor.calls)
    [run] = [c for c in agent.editor.tool_calls(sid).values() if c.get("kind") == "execute"]
    assert run["status"] == "failed"
    await assert_used_up(mock)


async def test_allow_always_is_remembered_and_commands_run_in_the_editors_terminals(
    pyproj: Path, home: Home, mock: MockServer
) -> None:
    # The person's rules with the editor's terminals, under approval.command
    # "ask" (under the default "sandboxed" a command in the client's terminal,
    # which Rein cannot sandbox, asks every time and no rule is offered).
    write_config(home.config_file, rein_config(home.path, mock.url, approval={"command": "ask"}))
    await load_scenario(
        mock,
        "always",
        [
            tool_turn(call("run_command", command="echo forty-two")),
            # The same command: allowed without asking again.
            tool_turn(
                call("run_command", command="echo forty-two"),
                expect={"messages_contain": ["forty-two"]},
            ),
            # More than the person saw (issue 30): asked again, and refused.
            tool_turn(call("run_command", command="echo forty-two && touch M")),
            {"expect": {"last_message_contains": "the person declined"}, "text": "done"},
        ],
    )
    async with started(pyproj, home, permissions=["allow_always", "reject_once"]) as (agent, sid):
        stop = await prompt(agent, sid, "compute")

    assert stop == "end_turn"
    asked = [json.dumps(call) for _, call, _ in agent.editor.permission_requests]
    assert len(asked) == 2, asked
    assert "touch M" not in asked[0] and "touch M" in asked[1]
    assert not (pyproj / "M").exists()
    created = [p for m, p in agent.editor.calls if m == "terminal/create"]
    assert len(created) == 2
    assert all(p["cwd"] == str(pyproj) for p in created)
    released = [p["terminal_id"] for m, p in agent.editor.calls if m == "terminal/release"]
    assert len(released) == 2
    # Each run's tool call embedded its live terminal while it ran.
    terminal_ids = {
        item["terminalId"]
        for update in agent.editor.sent(sid, "tool_call_update")
        for item in update.get("content", [])
        if item.get("type") == "terminal"
    }
    assert terminal_ids == set(released)
    await assert_used_up(mock)


async def test_rein_steer_reaches_the_running_run_and_a_second_prompt_is_refused(
    pyproj: Path, home: Home, mock: MockServer
) -> None:
    """While a run is held at its permission request: a second prompt on its
    session is refused, an unknown /command is refused, a /command steers."""
    await load_scenario(
        mock,
        "steer",
        [
            tool_turn(call("run_command", command="echo hi")),
            {"expect": {"messages_contain": ["Be brief and keep it short"]}, "text": "ok"},
        ],
    )
    (pyproj / ".claude" / "commands").mkdir(parents=True)
    (pyproj / ".claude" / "commands" / "short.md").write_text("Be brief and $ARGUMENTS\n")
    async with started(pyproj, home, permissions=["allow_once"]) as (agent, sid):
        running = await held_at_its_permission(agent, sid, "say hi")
        busy = await _refused(agent.conn.prompt(session_id=sid, prompt=[text_block("again")]))
        unknown = await _refused(
            agent.conn.ext_method("rein/followUp", {"sessionId": sid, "text": "/nope x"})
        )
        with anyio.fail_after(REQUEST_S):
            # A /command steers as session/prompt would run it: expanded.
            steered = await agent.conn.ext_method(
                "rein/steer", {"sessionId": sid, "text": "/short keep it short"}
            )
        agent.editor.release("session/request_permission")
        stop = await running
        idle = await _refused(
            agent.conn.ext_method("rein/steer", {"sessionId": sid, "text": "too late"})
        )

    assert busy.code == -32600
    assert sid in str(busy) or sid in json.dumps(busy.data)
    assert "running a prompt" in f"{busy} {json.dumps(busy.data)}"
    assert steered == {"delivered": True}
    assert unknown.code == -32602
    assert "text: unknown command /nope; the known commands are: /short" in str(unknown)
    assert stop == "end_turn"
    assert idle.code == -32600
    await assert_used_up(mock)


async def _refused(request: Any) -> RequestError:
    with pytest.raises(RequestError) as info:
        with anyio.fail_after(REQUEST_S):
            await request
    return info.value


@on_shared
async def test_a_one_step_plan_shows_its_answer(shared: Shared) -> None:
    mock, agent = shared.model(), shared.agent
    await load_scenario(
        mock,
        "one-step",
        [
            tool_turn(call("submit_plan", steps=[{"id": "s1", "description": "Look at app.py"}])),
            tool_turn(call("read_file", path="app.py")),
            tool_turn(
                call("complete_step", step_id="s1", success=True, summary="app.py greets people")
            ),
        ],
    )
    sid = await shared.session()
    with anyio.fail_after(REQUEST_S):
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
    stop = await prompt(agent, sid, "What does app.py do?")
    assert stop == "end_turn"
    await assert_used_up(mock)
    assert "app.py greets people" in agent.editor.said(sid)


@on_shared
async def test_a_failed_run_says_its_reason_once(shared: Shared) -> None:
    # Defect: "Rein error (run): X" (the run's fatal error), then "Rein
    # stopped: X" again for every failed prompt.
    mock, agent = shared.model(), shared.agent
    fault = {"kind": "status", "status": 400, "body": "NO-SUCH-MODEL-XYZ"}
    await load_scenario(mock, "refused", [{"fault": fault}])
    sid = await shared.session()
    stop = await prompt(agent, sid, "hello")
    said = agent.editor.said(sid)
    assert stop == "end_turn"
    assert said.count("NO-SUCH-MODEL-XYZ") == 1, said
    assert "Rein error (run): " in said and "Rein stopped" not in said
