"""The API end-to-end level of the testing pyramid: the real ``rein serve``
over stdio (pytest-lsp), its model an ``openai`` provider talking real HTTP
to ``rein mock-server`` (in-process here), the editor played by the test
client with a real analyzer (ruff). Each test loads its scenario through the
mock's control API (``POST /mock/scenario``), switching scenarios between
prompts, and asserts on the ``rein/event`` stream, the editor's buffers and
the disk.

Every scenario turn carries an ``expect`` on the request it answers (the tools
offered, the text sent): a scripted model follows its script whatever it is
asked, so the contract is checked at the wire. Every test ends with the
scenario used up exactly, every request answered.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_lsp import LanguageClient

from rein.providers.mock_server import MockServer
from tests.fakes.editor import Editor
from tests.lsp.conftest import editing, serve_fixture

pytestmark = pytest.mark.e2e

#: The executor's work tools that a plan step needs here; the planner has none.
WORK = ["read_file", "edit_file"]


@serve_fixture()
async def client(
    lsp_client: LanguageClient, workspace: Path, tmp_path: Path
) -> AsyncIterator[LanguageClient]:
    # The mock starts here, on the test's event loop (a pytest-lsp fixture
    # cannot take an async fixture); the `mock` fixture hands it to the test.
    mock = MockServer()
    await mock.start()
    lsp_client.mock = mock  # type: ignore[attr-defined]
    settings = {
        "storagePath": str(tmp_path / "storage"),
        # apiKeyEnv "": the mock needs no key, and no real key is ever read.
        "model": {
            "provider": "openai",
            "baseUrl": mock.url + "/v1",
            "model": "mock-model",
            "apiKeyEnv": "",
        },
        # A bound, not a wait: the verdict comes when ruff publishes (slow on a loaded machine).
        "gates": {"analyzer": {"quietPeriodMs": 100, "maxWaitMs": 30000}},
    }
    async with editing(
        Editor(lsp_client, workspace), settings, analyzer=True, initialization_options=settings
    ):
        yield lsp_client
    await mock.aclose()


@pytest.fixture
def mock(client: LanguageClient) -> MockServer:
    return client.mock  # type: ignore[attr-defined,no-any-return]


# ----------------------------------------------------------------- helpers


async def load_scenario(mock: MockServer, name: str, turns: list[dict[str, Any]]) -> None:
    """Switch the mock's scenario through its control API, as a person or a
    CI job would (no restart)."""
    async with httpx.AsyncClient(base_url=mock.url) as http:
        reply = await http.post("/mock/scenario", json={"script": {"name": name, "turns": turns}})
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"file": None, "name": name, "index": 0, "turns": len(turns)}


async def assert_used_up(mock: MockServer) -> None:
    """Every turn of the current scenario was asked for, and answered."""
    async with httpx.AsyncClient(base_url=mock.url) as http:
        state = (await http.get("/mock/scenario")).json()
        requests = (await http.get("/mock/requests")).json()["requests"]
    assert state["index"] == state["turns"], state
    outcomes = [(r["turn"], r["outcome"]) for r in requests]
    assert all(outcome == "completed" for _, outcome in outcomes), outcomes


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def planner_turn(steps: list[tuple[str, str]], **expect: Any) -> dict[str, Any]:
    """A planner turn: it is offered submit_plan and no work tool, and must call one."""
    return {
        "expect": {
            "tools_include": ["submit_plan"],
            "tools_exclude": [*WORK, "complete_step"],
            "tool_choice": "required",
            **expect,
        },
        "tool_calls": [call("submit_plan", steps=[{"id": i, "description": d} for i, d in steps])],
    }


def executor_turn(*calls: dict[str, Any], **expect: Any) -> dict[str, Any]:
    """An executor turn: it has the work tools and complete_step, never submit_plan."""
    return {
        "expect": {"tools_include": [*WORK, "complete_step"], "tools_exclude": ["submit_plan"]}
        | expect,
        "tool_calls": list(calls),
    }


def edit(old: str, new: str, path: str = "app.py") -> dict[str, Any]:
    return call("edit_file", path=path, old_string=old, new_string=new)


def events_of(editor: Editor, session_id: str, kind: str) -> list[dict[str, Any]]:
    return [
        e["event"]
        for e in editor.events
        if e["sessionId"] == session_id and e["event"]["type"] == kind
    ]


async def prompt(editor: Editor, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await editor.client.protocol.send_request_async("rein/prompt", params)
    return result


# ------------------------------------------------------------------- tests


async def test_plan_mode_two_steps_a_failed_step_and_a_replan(
    editor: Editor, mock: MockServer, workspace: Path
) -> None:
    editor.open("app.py")
    await load_scenario(
        mock,
        "plan-replan",
        [
            planner_turn(
                [("s1", "Add a docstring to greet"), ("s2", "Add farewell() next to goodbye()")],
                last_message_contains="Make the plan now",
            ),
            executor_turn(
                edit(
                    '    return f"hello {name}"', '    """Say hello."""\n    return f"hello {name}"'
                ),
                last_message_contains="Step 1 of 2 — s1",
            ),
            executor_turn(
                call("complete_step", step_id="s1", success=True, summary="greet has a docstring")
            ),
            # s2: the function it names does not exist; the edit fails and the step with it.
            executor_turn(
                edit("def goodbye(", "def farewell("), last_message_contains="Step 2 of 2 — s2"
            ),
            executor_turn(
                call("complete_step", step_id="s2", success=False, summary="there is no goodbye()"),
                last_role="tool",
                messages_contain=["old_string"],
            ),
            # The planner revises what is left, told which step failed and why.
            planner_turn(
                [("s3", "Add farewell() at the end of app.py")],
                last_message_contains="Step s2 failed: there is no goodbye()",
            ),
            executor_turn(
                edit(
                    "    return greet(name).upper()\n",
                    "    return greet(name).upper()\n\n\n"
                    "def farewell(name: str) -> str:\n"
                    '    return f"bye {name}"\n',
                ),
                last_message_contains="s3: Add farewell() at the end of app.py",
            ),
            executor_turn(
                call("complete_step", step_id="s3", success=True, summary="farewell() added")
            ),
            {
                "expect": {"last_message_contains": "All steps are done", "tools_exclude": WORK},
                "text": "greet() has a docstring and farewell() is new.",
            },
        ],
    )

    result = await prompt(editor, text="Document greet and add a farewell", mode="plan")

    assert result["status"] == "completed", result
    assert result["text"] == "greet() has a docstring and farewell() is new."
    assert len(result["generations"]) == 2
    sid = result["sessionId"]
    states = [e["state"] for e in events_of(editor, sid, "plan_state")]
    assert states == ["planning", "executing", "updating", "executing", "summarizing", "completed"]
    updates = events_of(editor, sid, "plan_updated")
    assert [u["reason"] for u in updates] == [
        "planned",
        "step_started",
        "step_done",
        "step_started",
        "step_failed",
        "revised",
        "step_started",
        "step_done",
    ]
    failed = {s["id"]: (s["status"], s["summary"]) for s in updates[4]["steps"]}
    assert failed == {
        "s1": ("done", "greet has a docstring"),
        "s2": ("failed", "there is no goodbye()"),
    }
    # The revision replaces the failed step and what followed it.
    final = {s["id"]: (s["status"], s["summary"]) for s in updates[-1]["steps"]}
    assert final == {"s1": ("done", "greet has a docstring"), "s3": ("done", "farewell() added")}
    # The failed edit was a result the model read, not a crash.
    ends = events_of(editor, sid, "tool_call_end")
    failed_edits = [e for e in ends if e["name"] == "edit_file" and e["is_error"]]
    assert len(failed_edits) == 1
    # No gate ran before the plan's last step; the last gate result came
    # after the last edit (over both changes) and passed.
    stream = [e["event"] for e in editor.events if e["sessionId"] == sid]
    s1_done = next(i for i, e in enumerate(stream) if e.get("reason") == "step_done")
    assert [e for e in stream[:s1_done] if e["type"] == "gate_result"] == []
    last_edit = max(i for i, e in enumerate(editor.events) if e["event"].get("name") == "edit_file")
    after = [e["event"] for e in editor.events[last_edit:] if e["event"]["type"] == "gate_result"]
    assert [(g["gate"], g["status"]) for g in after] == [("analyzer", "passed")]
    # Both edits reached the editor's buffer through workspace/applyEdit, and the disk.
    text = editor.docs["app.py"][1]
    assert '    """Say hello."""\n    return f"hello {name}"' in text
    assert text.endswith('def farewell(name: str) -> str:\n    return f"bye {name}"\n')
    assert (workspace / "app.py").read_text() == text
    assert len(editor.applied) == 2
    await assert_used_up(mock)


async def test_plan_mode_ask_user_waits_then_resumes_with_the_answer(
    editor: Editor, mock: MockServer, workspace: Path
) -> None:
    editor.open("app.py")
    editor.ask_answer = None  # the person dismisses the question: the run waits
    await load_scenario(
        mock,
        "ask-waits",
        [
            planner_turn([("s1", "Change the greeting to the person's choice")]),
            executor_turn(call("ask_user", question="Which greeting: hi or hey?")),
        ],
    )

    waiting = await prompt(editor, text="Change the greeting", mode="plan")

    assert waiting["status"] == "waiting", waiting
    assert waiting["error"] == "waiting for the person's answer: Which greeting: hi or hey?"
    sid = waiting["sessionId"]
    assert [e["state"] for e in events_of(editor, sid, "plan_state")][-1] == "waiting"
    assert editor.applied == []
    await assert_used_up(mock)

    # The answer comes as the next prompt of the session, with another scenario.
    await load_scenario(
        mock,
        "ask-resumes",
        [
            # The answer is the ask_user call's result: the executor goes on with it.
            executor_turn(
                edit("hello {name}", "hey {name}"),
                last_role="tool",
                messages_contain=["hey"],
                messages_exclude=["Continue step"],
            ),
            executor_turn(
                call("complete_step", step_id="s1", success=True, summary="greeting is hey")
            ),
        ],
    )
    seen = len(editor.events)

    resumed = await prompt(editor, text="hey", sessionId=sid, mode="plan")

    assert resumed["status"] == "completed", resumed
    assert resumed["sessionId"] == sid
    assert resumed["text"] == "greeting is hey"  # one step: no summary turn
    later = [e["event"] for e in editor.events[seen:] if e["sessionId"] == sid]
    # The resumed plan first says where it stands (issue 33, item 9).
    assert [e["state"] for e in later if e["type"] == "plan_state"] == [
        "waiting",
        "executing",
        "completed",
    ]
    assert editor.docs["app.py"][1].count("hey {name}") == 1
    assert "hey {name}" in (workspace / "app.py").read_text()
    await assert_used_up(mock)


async def test_a_subagent_reads_and_edits_for_its_parent(
    editor: Editor, mock: MockServer, workspace: Path
) -> None:
    editor.open("app.py")
    await load_scenario(
        mock,
        "subagent",
        [
            # The parent delegates.
            {
                "expect": {"tools_include": ["task", "edit_file"]},
                "tool_calls": [
                    call(
                        "task",
                        description="Rename shout to yell",
                        prompt="In app.py rename the function shout to yell.",
                        tools=["read_file", "edit_file"],
                    )
                ],
            },
            # The child: its own context (the parent's prompt only), its own tools.
            {
                "expect": {
                    "last_message_contains": "rename the function shout to yell",
                    "messages_exclude": ["Rename shout everywhere"],
                    "tools_include": ["read_file", "edit_file"],
                    "tools_exclude": ["task", "write_file"],
                },
                "tool_calls": [call("read_file", path="app.py")],
            },
            {"tool_calls": [edit("def shout(", "def yell(")]},
            {"text": "Renamed shout to yell in app.py."},
            # The parent gets the child's answer as the task result.
            {
                "expect": {"last_role": "tool", "last_message_contains": "Renamed shout to yell"},
                "text": "Done: shout is now yell.",
            },
        ],
    )

    result = await prompt(editor, text="Rename shout everywhere")

    assert result["status"] == "completed", result
    assert result["text"] == "Done: shout is now yell."
    sid = result["sessionId"]
    activity = events_of(editor, sid, "subagent_activity")
    assert {a["name"] for a in activity} == {"Rename shout to yell"}
    assert len({a["child_id"] for a in activity}) == 1
    inner = [a["event"] for a in activity]
    child_tools = [e["name"] for e in inner if e["type"] == "tool_call_end"]
    assert child_tools == ["read_file", "edit_file"]
    assert inner[-1]["type"] == "agent_end"
    task_end = [e for e in events_of(editor, sid, "tool_call_end") if e["name"] == "task"]
    assert len(task_end) == 1 and not task_end[0]["is_error"]
    # The child's edit went through the editor, and the parent's gates checked it.
    assert "def yell(name: str)" in editor.docs["app.py"][1]
    assert "def yell(name: str)" in (workspace / "app.py").read_text()
    assert len(editor.applied) == 1
    assert [g["status"] for g in events_of(editor, sid, "gate_result")] == ["passed"]
    await assert_used_up(mock)
