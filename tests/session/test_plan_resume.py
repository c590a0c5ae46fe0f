"""A plan-act session resumes in every state after a restart.

Each test runs a ``rein run``-style host (:class:`HeadlessSession`: the disk
workspace, the real tools, a real SQLite store file, a command gate run by a
real subprocess), stops it in some state of the plan, and resumes the session
in a fresh host (a fresh session manager reading the same store file), as
``rein run --resume`` does. The model is one replay script per "process"
(planner and executor share it, in call order)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from rein.config import load_config
from rein.harness import RunResult
from rein.harness.events import Event, GateResult, PlanState, RunStart
from rein.harness.messages import UserMessage
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from tests.fakes.approvals import FakeUserChannel
from tests.fakes.models import StallingModel, complete_turn, plan_turn

#: a.py must not contain the word ERROR: the command gate says so.
CHECK = (
    "import sys\n"
    "text = open('a.py').read() if __import__('os').path.exists('a.py') else ''\n"
    "if 'ERROR' in text:\n"
    "    print('a.py is broken: it contains ERROR')\n"
    "    sys.exit(1)\n"
)

CONFIG = load_config(
    {
        "gates": {
            "analyzer": {"enabled": False},
            "custom": [{"name": "check", "command": f"{sys.executable} check.py"}],
        }
    },
    "test",
)


plan = plan_turn
complete = complete_turn


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def read(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]}


def ask(question: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "ask_user", "arguments": {"question": question}}]}


def host(root: Path, model: Any, resume: str | None = None) -> HeadlessSession:
    return HeadlessSession(
        root,
        model,
        CONFIG,
        analyzers=(),
        user=FakeUserChannel([None]),
        mode="plan",
        watch=False,
        storage=root / ".store",
        resume=resume,
    )


async def prompt_and_abort(h: HeadlessSession, model: StallingModel, text: str) -> RunResult:
    """Prompt; when the model stalls (the turn the test stops at), abort."""
    result: list[RunResult] = []

    async def run() -> None:
        result.append(await h.prompt(text))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(30):
            await model.stalled.wait()
        assert h.session.abort("stopped by the test")
    return result[0]


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "check.py").write_text(CHECK)
    (tmp_path / "b.py").write_text("b = 1\n")
    return tmp_path


def plan_states(events: list[Event]) -> list[str]:
    return [e.state for e in events if isinstance(e, PlanState)]


async def test_the_last_steps_gates_catch_an_earlier_steps_change_after_a_restart(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    first = ReplayModel(
        [
            plan(("s1", "write a.py"), ("s2", "ask which name b.py uses"), ("s3", "check b.py")),
            write("a.py", "x = 'ERROR'\n"),
            complete("s1", summary="wrote a.py"),
            ask("Which name?"),
        ],
        name="first",
    )
    async with host(root, first) as h:
        waiting = await h.prompt("write a.py and b.py")
        assert waiting.status == "waiting", waiting.error
        session_id = h.session.id
    second = ReplayModel(
        [
            {"expect": {"last_message_contains": "The person answered: b"}, **read("b.py")},
            complete("s2", summary="b.py uses b"),
            read("b.py"),
            complete("s3", summary="b.py is fine"),
            # The last step changed nothing, yet its gates ran over step 1's
            # change (restored from the store) and found it broken.
            {"expect": {"last_message_contains": "a.py is broken"}, **write("a.py", "x = 1\n")},
            complete("s3", summary="fixed a.py"),
            {"expect": {"tool_choice": "none"}, "text": "Wrote a.py; b.py was fine."},
        ],
        name="second",
    )
    events: list[Event] = []
    async with host(root, second, resume=session_id) as h:
        h.subscribe(events.append)
        result = await h.prompt("b")
    assert result.status == "completed", result.error
    assert result.text == "Wrote a.py; b.py was fine."
    assert second.index == len(second.script.turns)
    assert [(r.gate, r.passed) for r in events if isinstance(r, GateResult)] == [
        ("check", False),
        ("check", True),
    ]
    assert (root / "a.py").read_text() == "x = 1\n"


async def test_work_before_a_wait_counts_for_the_step_after_a_restart(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    first = ReplayModel(
        [plan(("s1", "read b.py and ask")), read("b.py"), ask("Keep it?")], name="first"
    )
    async with host(root, first) as h:
        waiting = await h.prompt("look at b.py")
        assert waiting.status == "waiting", waiting.error
        session_id = h.session.id
    second = ReplayModel(
        [
            {"expect": {"last_message_contains": "The person answered: yes"}, **complete("s1")},
        ],
        name="second",
    )
    async with host(root, second, resume=session_id) as h:
        result = await h.prompt("yes")
    assert result.status == "completed", result.error
    assert result.text == "done"


async def test_a_plan_interrupted_while_planning_is_planned_again_after_a_restart(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    first = StallingModel(ReplayModel([], name="first"), stall_turn=1)
    async with host(root, first) as h:
        aborted = await prompt_and_abort(h, first, "rename b to c in b.py")
        assert aborted.status == "aborted"
        session_id = h.session.id
    second = ReplayModel(
        [
            {
                "expect": {
                    "tool_choice": "required",
                    "last_message_contains": "rename b to c in b.py",
                    "messages_contain": ["The person adds: go on"],
                },
                **plan(("s1", "rename")),
            },
            write("b.py", "c = 1\n"),
            complete("s1", summary="renamed"),
        ],
        name="second",
    )
    events: list[Event] = []
    async with host(root, second, resume=session_id) as h:
        h.subscribe(events.append)
        result = await h.prompt("go on")
    assert result.status == "completed", result.error
    assert result.text == "renamed"
    # The resumed plan first says where it stands (issue 33, item 9).
    assert plan_states(events) == ["planning", "executing", "completed"]
    assert (root / "b.py").read_text() == "c = 1\n"


async def test_a_plan_interrupted_while_updating_asks_for_the_revision_first_after_a_restart(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    first = StallingModel(
        ReplayModel(
            [
                plan(("s1", "use the old API")),
                read("b.py"),
                complete("s1", success=False, summary="the old API is gone"),
            ],
            name="first",
        ),
        stall_turn=4,  # the planner's revision
    )
    async with host(root, first) as h:
        aborted = await prompt_and_abort(h, first, "migrate b.py")
        assert aborted.status == "aborted"
        assert h.session.flow is not None and h.session.flow.plan.state == "updating"
        session_id = h.session.id
    second = ReplayModel(
        [
            {
                "expect": {
                    "tool_choice": "required",
                    "last_message_contains": "Step s1 failed: the old API is gone",
                    "messages_contain": ["The person adds: use the new one"],
                },
                **plan(("s1b", "use the new API")),
            },
            write("b.py", "b = 2\n"),
            complete("s1b", summary="used the new API"),
        ],
        name="second",
    )
    events: list[Event] = []
    async with host(root, second, resume=session_id) as h:
        h.subscribe(events.append)
        result = await h.prompt("use the new one")
        assert h.session.flow is not None
        plan_now = h.session.flow.plan
    assert result.status == "completed", result.error
    assert result.text == "used the new API"
    # The resumed plan first says where it stands (issue 33, item 9).
    assert plan_states(events) == ["updating", "executing", "completed"]
    assert [(s.id, s.status) for s in plan_now.steps] == [("s1b", "done")]
    assert plan_now.replans == 1


async def test_a_plan_interrupted_while_summarizing_is_summarized_after_a_restart(
    tmp_path: Path,
) -> None:
    root = workspace(tmp_path)
    first = StallingModel(
        ReplayModel(
            [
                plan(("s1", "read b.py"), ("s2", "write b.py")),
                read("b.py"),
                complete("s1", summary="read it"),
                write("b.py", "b = 3\n"),
                complete("s2", summary="wrote it"),
            ],
            name="first",
        ),
        stall_turn=6,  # the summary
    )
    async with host(root, first) as h:
        aborted = await prompt_and_abort(h, first, "update b.py")
        assert aborted.status == "aborted"
        session_id = h.session.id
    second = ReplayModel(
        [
            {
                "expect": {
                    "tool_choice": "none",
                    "last_message_contains": "All steps are done",
                    "messages_contain": ["The person adds: go on", "- s2: wrote it"],
                },
                "text": "Read and wrote b.py.",
            }
        ],
        name="second",
    )
    events: list[Event] = []
    async with host(root, second, resume=session_id) as h:
        h.subscribe(events.append)
        result = await h.prompt("go on")
    assert result.status == "completed", result.error
    assert result.text == "Read and wrote b.py."
    # The resumed plan first says where it stands (issue 33, item 9).
    assert plan_states(events) == ["summarizing", "completed"]


async def test_the_plan_s_task_is_the_person_s_words_and_the_context_comes_before_it(
    tmp_path: Path,
) -> None:
    # Defect: a fresh plan session's bootstrap context was joined into the
    # task: rein run printed "▶ run ...: Task: Context for this session
    # (gathered automatically):", and the plan (its events, the store) held
    # the whole context as its task.
    root = workspace(tmp_path)
    model = ReplayModel(
        [plan(("s1", "read b.py")), read("b.py"), complete("s1"), {"text": "b.py is read."}],
        name="plan",
    )
    events: list[Event] = []
    async with host(root, model) as h:
        h.subscribe(events.append)
        result = await h.prompt("read b.py")
        flow = h.session.flow
        assert flow is not None and flow.plan.task == "read b.py"
    assert result.status == "completed", result.error
    starts = [e.prompt for e in events if isinstance(e, RunStart)]
    assert starts[0] == "Task: read b.py\n\nMake the plan now and submit it with submit_plan."
    # The planner still reads the context first, as a message of its own.
    first = [m for m in model.requests[0].messages if isinstance(m, UserMessage)]
    assert [m.origin for m in first[:2]] == ["bootstrap", "prompt"]
    assert first[0].content.startswith("Context for this session (gathered automatically):")
    assert first[1].content == starts[0]
