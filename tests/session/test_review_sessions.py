"""Review mode in a session built by ``rein run``'s assembly (HeadlessSession:
disk workspace, SQLite stores): a plan's executor steps are runs of their
own, each leaving its files pending with a ``review_pending`` event; a
session not in review mode leaves nothing pending."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rein.config import load_config
from rein.harness.events import Event, ReviewPending
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {"name": "edit_file", "arguments": {"path": path, "old_string": old, "new_string": new}}
        ]
    }


def _complete(step: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {
                "name": "complete_step",
                "arguments": {"step_id": step, "success": True, "summary": "ok"},
            }
        ]
    }


PLAN = [
    {
        "tool_calls": [
            {
                "name": "submit_plan",
                "arguments": {
                    "steps": [
                        {"id": "s1", "description": "change a.py"},
                        {"id": "s2", "description": "change b.py"},
                    ]
                },
            }
        ]
    },
    _edit("a.py", "a = 1", "a = 2"),
    _complete("s1"),
    _edit("b.py", "b = 1", "b = 2"),
    _complete("s2"),
    {"text": "Changed a.py and b.py."},
]


async def _run(tmp_path: Path, write: str, mode: str, turns: list[dict[str, Any]]) -> Any:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.py").write_text("a = 1\n")
    (root / "b.py").write_text("b = 1\n")
    config = load_config(
        {
            "storagePath": str(tmp_path / "store"),
            "gates": {"analyzer": {"enabled": False}},
            "approval": {"write": write},
        },
        "test",
    )
    events: list[Event] = []
    async with HeadlessSession(
        root, ReplayModel(turns), config, analyzers=(), mode=mode, watch=False,
        storage=str(tmp_path / "store"),
    ) as host:  # fmt: skip
        host.subscribe(events.append)
        result = await host.prompt("change both")
        assert result.status == "completed", result.error
        session = host.session
        assert session.reviewer is not None
        runs = await session.reviewer.runs()
        return events, session.last_reviews, runs, (root / "a.py").read_text()


async def test_each_executor_step_of_a_plan_leaves_its_files_pending(tmp_path: Path) -> None:
    events, reviews, runs, a_text = await _run(tmp_path, "review", "plan", PLAN)
    assert a_text == "a = 2\n"  # applied
    pending = [e for e in events if isinstance(e, ReviewPending)]
    assert [e.paths for e in pending] == [["a.py"], ["b.py"]]
    assert len({e.run_id for e in pending}) == 2
    assert [(run_id, [f.path for f in files]) for run_id, files in runs] == [
        (pending[0].run_id, ["a.py"]),
        (pending[1].run_id, ["b.py"]),
    ]
    assert reviews == {"a.py": "pending", "b.py": "pending"}


async def test_without_review_mode_nothing_is_pending(tmp_path: Path) -> None:
    events, reviews, runs, a_text = await _run(
        tmp_path, "allow", "agent", [_edit("a.py", "a = 1", "a = 2"), {"text": "done"}]
    )
    assert a_text == "a = 2\n"
    assert not [e for e in events if isinstance(e, ReviewPending)]
    assert reviews == {} and runs == []
