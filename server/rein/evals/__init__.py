"""``rein eval``: behavioural evals of the real harness.

Each scenario drives the real Agent, tools and (where it is about them) the
real analyzers and gates, the preview, the plan-act flow or subagents, with
the replay model as the model. A run is scored:
completed, model calls used against a budget, replans, self-repairs,
premature-complete rejections, error events, steering honoured; and the
scenario's own check. Exit code 1 when any scenario fails.

Every scenario declares a *mutation* (:mod:`rein.evals.mutations`): a small
function that sets a switch on the :class:`Rig` turning off the behaviour the
scenario scores. Run mutated (``run_all(mutated=True)``), every scenario must
fail; tests/evals checks it, so a scenario that cannot fail is caught.

Add a scenario: write an ``async def`` in a module of
:mod:`rein.evals.scenarios` that takes a :class:`Rig` and returns an
:class:`Outcome`, and decorate it with ``@scenario(category, budget=...,
mutation=...)`` (from :mod:`rein.evals._registry`). See docs/evals.md.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio

from rein.evals._registry import SCENARIOS, Mutation, Outcome, Rig, _Scenario, scenario

__all__ = [
    "SCENARIOS",
    "Mutation",
    "Outcome",
    "Rig",
    "Score",
    "main",
    "run_all",
    "scenario",
    "score",
]


@dataclass
class Score:
    name: str
    category: str
    passed: bool
    status: str
    model_calls: int
    budget: int
    script_turns: int
    replans: int
    self_repairs: int
    premature_rejections: int
    error_events: int
    steering_honoured: bool | None
    seconds: float
    reason: str = ""


def _count(events: list[Any], type_: str, pred: Callable[[Any], bool] = lambda e: True) -> int:
    return sum(1 for e in events if e.type == type_ and pred(e))


def score(spec: _Scenario, outcome: Outcome, seconds: float) -> Score:
    events = outcome.events
    replans = _count(events, "plan_state", lambda e: e.state == "updating")
    repairs = _count(events, "repair_attempt")
    premature = _count(
        events,
        "tool_call_end",
        lambda e: e.name == "complete_step" and e.is_error and "rejected" in e.content,
    )
    errors = _count(events, "error")
    reasons = []
    if outcome.status != outcome.expect_status:
        reasons.append(f"status {outcome.status}, expected {outcome.expect_status}")
    if outcome.script_turns <= spec.budget:
        reasons.append(
            f"the script has {outcome.script_turns} turns for a budget of {spec.budget}: "
            "no spare turns, so the budget cannot bite"
        )
    if outcome.model_calls > spec.budget:
        reasons.append(f"{outcome.model_calls} model calls, budget {spec.budget}")
    if not outcome.check:
        reasons.append(outcome.why or "the scenario's check failed")
    if outcome.steering_honoured is False:
        reasons.append("steering was not honoured")
    return Score(
        name=spec.name,
        category=spec.category,
        passed=not reasons,
        status=outcome.status,
        model_calls=outcome.model_calls,
        budget=spec.budget,
        script_turns=outcome.script_turns,
        replans=replans,
        self_repairs=repairs,
        premature_rejections=premature,
        error_events=errors,
        steering_honoured=outcome.steering_honoured,
        seconds=round(seconds, 3),
        reason="; ".join(reasons),
    )


async def _run_one(spec: _Scenario, mutated: bool = False) -> Score:
    import tempfile

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"rein-eval-{spec.name}-") as tmp:
        rig = Rig(Path(tmp))
        try:
            if mutated:
                spec.mutation(rig)
            with ExitStack() as stack, anyio.fail_after(120):
                for patch in rig.patches:
                    stack.enter_context(patch)
                outcome = await spec.fn(rig)
        except Exception as exc:
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            return Score(
                name=spec.name,
                category=spec.category,
                passed=False,
                status="crashed",
                model_calls=0,
                budget=spec.budget,
                script_turns=0,
                replans=0,
                self_repairs=0,
                premature_rejections=0,
                error_events=0,
                steering_honoured=None,
                seconds=round(time.monotonic() - started, 3),
                reason=f"the scenario raised: {detail}",
            )
    return score(spec, outcome, time.monotonic() - started)


async def run_all(names: list[str] | None = None, *, mutated: bool = False) -> list[Score]:
    """Run the scenarios (all, or those named) one after another. ``mutated``
    applies each scenario's mutation first: then every scenario must fail."""
    from rein.evals import scenarios  # noqa: F401  (registers the scenarios)

    chosen = [SCENARIOS[n] for n in names] if names else list(SCENARIOS.values())
    return [await _run_one(spec, mutated) for spec in chosen]


def main(scenario_names: list[str] | None, json_path: str | None, mutated: bool = False) -> int:
    """``rein eval``. With ``mutated`` every scenario runs with the behaviour
    it scores switched off and must FAIL: the exit code is 0 only when all
    of them fail (the evals can tell a broken harness from a working one)."""
    from rein.evals import scenarios  # noqa: F401

    unknown = [n for n in scenario_names or [] if n not in SCENARIOS]
    if unknown:
        print(
            f"rein eval: unknown scenario(s): {', '.join(unknown)}; known: {', '.join(SCENARIOS)}",
            file=sys.stderr,
        )
        return 2
    scores = await_all(scenario_names, mutated)
    width = max(len(s.name) for s in scores)
    for s in scores:
        mark = "PASS" if s.passed else "FAIL"
        print(
            f"{mark}  {s.name:<{width}}  {s.category:<9} calls {s.model_calls:>2}/{s.budget:<2} "
            f"(script {s.script_turns:>2}) "
            f"replans {s.replans} repairs {s.self_repairs} premature {s.premature_rejections} "
            f"errors {s.error_events}  {s.seconds:.2f}s" + (f"  -- {s.reason}" if s.reason else "")
        )
    passed = sum(s.passed for s in scores)
    failed = len(scores) - passed
    if mutated:
        print(f"mutated: {failed} failed as they should, {passed} passed although broken")
    else:
        print(f"{passed} passed, {failed} failed")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as handle:
            json.dump(
                {"scores": [asdict(s) for s in scores], "passed": passed, "failed": failed},
                handle,
                indent=2,
            )
    if mutated:
        return 0 if passed == 0 else 1
    return 0 if failed == 0 else 1


def await_all(names: list[str] | None, mutated: bool) -> list[Score]:
    async def run() -> list[Score]:
        return await run_all(names, mutated=mutated)

    return anyio.run(run)
