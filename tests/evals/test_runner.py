"""The eval runner's scoring and CLI (the scenarios themselves run in `make test` via `rein eval`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from rein.evals import Outcome, _Scenario, score
from tests.forkserver import REIN


async def _noop(rig):  # pragma: no cover - never called
    raise AssertionError


def _no_switch(rig):  # pragma: no cover - never called
    raise AssertionError


def test_a_run_over_budget_or_with_the_wrong_status_fails() -> None:
    spec = _Scenario("x", "agent", budget=2, fn=_noop, mutation=_no_switch)
    assert score(spec, Outcome("completed", 2, script_turns=4), 0.1).passed
    over = score(spec, Outcome("completed", 3, script_turns=4), 0.1)
    assert not over.passed and over.reason == "3 model calls, budget 2"
    wrong = score(spec, Outcome("failed", 1, script_turns=4), 0.1)
    assert not wrong.passed and wrong.reason == "status failed, expected completed"
    steer = score(spec, Outcome("completed", 1, script_turns=4, steering_honoured=False), 0.1)
    assert not steer.passed and steer.reason == "steering was not honoured"
    check = score(
        spec, Outcome("completed", 1, script_turns=4, check=False, why="the edit did not land"), 0.1
    )
    assert not check.passed and check.reason == "the edit did not land"


def test_a_script_without_spare_turns_beyond_the_budget_fails() -> None:
    spec = _Scenario("x", "agent", budget=2, fn=_noop, mutation=_no_switch)
    exact = score(spec, Outcome("completed", 2, script_turns=2), 0.1)
    assert not exact.passed
    assert exact.reason == (
        "the script has 2 turns for a budget of 2: no spare turns, so the budget cannot bite"
    )
    assert exact.script_turns == 2
    assert score(spec, Outcome("completed", 2, script_turns=3), 0.1).passed


def test_rein_eval_runs_named_scenarios_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    proc = subprocess.run(
        [
            *REIN,
            "eval",
            "--scenario",
            "steering-honoured",
            "--scenario",
            "plan-premature-complete-rejected",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "2 passed, 0 failed"
    data = json.loads(out.read_text())
    assert [s["name"] for s in data["scores"]] == [
        "steering-honoured",
        "plan-premature-complete-rejected",
    ]
    assert data["scores"][0]["model_calls"] == 2 and data["scores"][0]["budget"] == 2
    bad = subprocess.run(
        [*REIN, "eval", "--scenario", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "unknown scenario" in bad.stderr


def test_every_category_has_a_scenario() -> None:
    from rein.evals import (
        SCENARIOS,
        scenarios,  # noqa: F401
    )

    assert {s.category for s in SCENARIOS.values()} == {
        "agent",
        "gates",
        "preview",
        "plan-act",
        "subagent",
    }
