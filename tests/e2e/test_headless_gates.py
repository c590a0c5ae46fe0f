"""The gates with the real analyzers (ruff server, basedpyright), headless."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

from rein.config import ReinConfig, load_config
from rein.disk.analyzers import AnalyzerPool
from rein.harness.ports import Mutation
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog

pytestmark = pytest.mark.e2e

BAD = 'def greet(name: str) -> str:\n    return f"hello {nmae}"\n'
GOOD = 'def greet(name: str) -> str:\n    return f"hello {name}"\n'


def edit(old: str, new: str, path: str = "app.py") -> dict:
    return {
        "tool_calls": [
            {"name": "edit_file", "arguments": {"path": path, "old_string": old, "new_string": new}}
        ]
    }


async def run_session(root: Path, script: list[dict], config: ReinConfig | None = None):
    model = ReplayModel(script)
    events = EventLog()
    async with HeadlessSession(root, model, config or ReinConfig(), watch=False) as session:
        session.agent.subscribe(events)
        result = await session.prompt("fix the greeting")
    return result, model, events


async def test_a_real_diagnostic_reaches_the_model_and_the_repair_completes(pyproj: Path) -> None:
    script = [
        edit('return f"hello {name}"', 'return f"hello {nmae}"'),
        {"text": "done"},
        {"expect": {"last_message_contains": "nmae"}, **edit("{nmae}", "{name}")},
        {"text": "fixed the typo"},
    ]
    result, model, events = await run_session(pyproj, script)
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    repair = model.requests[2].messages[-1].content
    # The real analyzers' words, with the position and the surrounding code.
    # Both analyzers see it: one blocker naming both, each in its own words.
    assert "app.py:5:21 error F821 (Ruff, basedpyright): Undefined name `nmae`" in repair
    assert 'also reported by basedpyright reportUndefinedVariable: "nmae" is not defined' in repair
    assert repair.count("- [analyzer]") == 1
    assert '> 5 |     return f"hello {nmae}"' in repair
    # legacy.py's pre-existing error did not block.
    assert all(b.path != "legacy.py" for r in events.of("gate_result") for b in r.blockers)
    assert [r.passed for r in events.of("gate_result")] == [False, True]
    assert (pyproj / "app.py").read_text().endswith('return f"hello {name}"\n')


async def test_basedpyright_takes_part_with_a_type_error_ruff_cannot_see(pyproj: Path) -> None:
    script = [
        edit('return f"hello {name}"', "return len(name)"),
        {"text": "done"},
        {"expect": {"last_message_contains": "reportReturnType"}, **edit("len(name)", "name")},
        {"text": "fixed the return type"},
    ]
    result, model, events = await run_session(pyproj, script)
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    repair = model.requests[2].messages[-1].content
    # Only basedpyright sees a wrong return type.
    assert (
        'app.py:5:12 error reportReturnType (basedpyright): Type "int" is not assignable '
        'to return type "str"'
    ) in repair
    assert "(Ruff)" not in repair
    assert [r.passed for r in events.of("gate_result")] == [False, True]


async def test_an_exhausted_budget_fails_with_the_blockers(pyproj: Path) -> None:
    script = [
        edit('return f"hello {name}"', 'return f"hello {nmae}"'),
        {"text": "done"},
        {"text": "still done"},
    ]
    config = load_config({"harness": {"maxRepairAttempts": 1}})
    result, model, events = await run_session(pyproj, script, config)
    assert result.status == "failed"
    assert result.repair_attempts == 1
    assert result.blockers and all(b.path == "app.py" for b in result.blockers)
    assert any("nmae" in b.message for b in result.blockers)
    assert "remain after 1 repair attempt" in (result.error or "")


async def test_a_new_error_elsewhere_blocks_but_the_old_one_does_not(pyproj: Path) -> None:
    (pyproj / "user.py").write_text("from app import greet\n\nprint(greet('x'))\n")
    script = [
        edit("def greet(name: str) -> str:", "def welcome(name: str) -> str:"),
        {"text": "renamed"},
        {"text": "ok"},
    ]
    config = load_config({"harness": {"maxRepairAttempts": 1}})
    result, model, events = await run_session(pyproj, script, config)
    first = events.of("gate_result")[0]
    assert not first.passed
    paths = {b.path for b in first.blockers}
    assert "user.py" in paths and "legacy.py" not in paths


async def test_a_manifest_change_runs_the_install_once(pyproj: Path) -> None:
    script = [
        edit('version = "0.1.0"', 'version = "0.2.0"', path="pyproject.toml"),
        edit('return f"hello {name}"', 'return f"hello, {name}"'),  # not a manifest
        {"text": "bumped"},
    ]
    config = load_config(
        {
            "gates": {
                "dependencies": {"commands": {"pyproject.toml": "echo installed >> install.log"}}
            }
        }
    )
    result, model, events = await run_session(pyproj, script, config)
    assert result.status == "completed", result.error
    # Started by the manifest change; neither the other edit nor the gate runs it again.
    assert (pyproj / "install.log").read_text().splitlines() == ["installed"]
    dep = [r for r in events.of("gate_result") if r.gate == "dependencies"]
    assert [r.passed for r in dep] == [True]


async def test_a_failing_install_is_a_blocker(pyproj: Path) -> None:
    script = [
        edit('version = "0.1.0"', 'version = "0.2.0"', path="pyproject.toml"),
        {"text": "bumped"},
        {"expect": {"last_message_contains": "no matching distribution"}, "text": "cannot fix"},
    ]
    config = load_config(
        {
            "harness": {"maxRepairAttempts": 1},
            "gates": {
                "dependencies": {
                    "commands": {
                        "pyproject.toml": "echo 'ERROR: no matching distribution' >&2; exit 1"
                    }
                }
            },
        }
    )
    result, model, events = await run_session(pyproj, script, config)
    assert result.status == "failed"
    assert result.blockers[0].gate == "dependencies"


async def test_a_crashed_analyzer_is_restarted_once_and_reported(pyproj: Path) -> None:
    reports: list[str] = []
    changed: list[list[str]] = []
    pool = AnalyzerPool(pyproj, on_report=reports.append, on_diagnostics_changed=changed.append)
    await pool.start()
    try:
        assert await pool.wait_initial(60)
        ruff = next(a for a in pool.analyzers if a.spec.name == "ruff")
        # ruff offers pull diagnostics: the pool asks for them instead of waiting for pushes.
        assert ruff.pull
        assert any(d.code == "F821" for d in (await pool.snapshot(["legacy.py"])).diagnostics)
        restarted = anyio.Event()
        original = pool.analyzer_exited

        async def crashed(analyzer, code):
            await original(analyzer, code)
            restarted.set()

        pool.analyzer_exited = crashed  # type: ignore[method-assign]
        os.kill(ruff.client._server.pid, signal.SIGKILL)  # type: ignore[union-attr]
        with anyio.fail_after(30):
            await restarted.wait()
            await pool.restarts.settled()
        assert any("ruff exited" in r and "restarting it in 0.5 s" in r for r in reports)
        assert ruff.alive and ruff.restarts == 1
        # It still analyses: a new error is reported after a change.
        (pyproj / "app.py").write_text(BAD)
        pool.on_mutation(Mutation(1, ("app.py",)))
        assert await pool.wait_settled(30)
        snap = await pool.snapshot(["app.py"])
        assert any(d.code == "F821" for d in snap.diagnostics)
    finally:
        await pool.stop()


async def test_a_subagents_undefined_name_is_caught_by_the_parents_analyzer_gate(
    pyproj: Path,
) -> None:
    """Issue 16: a child's edit is part of the parent run's record, so the
    parent's analyzer gate blocks on it and the parent gets the repair."""
    script = [
        {
            "tool_calls": [
                {
                    "name": "task",
                    "arguments": {
                        "description": "rename in greet",
                        "prompt": "edit app.py",
                        "tools": ["read_file", "edit_file"],
                    },
                }
            ]
        },
        edit('return f"hello {name}"', 'return f"hello {nmae}"'),  # the child's edit
        {"text": "edited greet"},  # the child's answer
        {"expect": {"last_message_contains": "edited greet"}, "text": "done"},
        {"expect": {"last_message_contains": "nmae"}, **edit("{nmae}", "{name}")},
        {"text": "fixed the child's typo"},
    ]
    result, model, events = await run_session(pyproj, script)
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    assert "subagent" in [m.origin for m in result.mutations]
    assert "Undefined name `nmae`" in model.requests[4].messages[-1].content
    assert [r.passed for r in events.of("gate_result")] == [False, True]
    assert (pyproj / "app.py").read_text().endswith('return f"hello {name}"\n')
