"""How the failing tests of a verdict are judged: by their re-run (a test
that passed there is flaky) and by their run in the shadow of the
workspace before the run (failing there too: pre-existing; else the
run's). Used by :mod:`rein.testgate.gate`."""

from __future__ import annotations

from collections.abc import Sequence

from rein.harness.gating.gate_types import GateOutcome
from rein.testgate.junit import TestResult
from rein.testgate.runner import TestRun

__all__ = ["against_baseline", "passed_again", "reported"]


def against_baseline(
    suspects: Sequence[TestResult], then: TestRun, unknown: Sequence[str]
) -> tuple[list[str], list[TestResult]] | GateOutcome:
    """The failing tests judged by their run before the changes (``then``):
    (the names of those failing there too, those the run broke), or the
    unverified outcome when that could not be told (``unknown``: changed
    files whose earlier text is not known)."""
    if then.unverified is not None:
        return GateOutcome(unverified=f"the run before the changes (baseline): {then.unverified}")
    failing_then = {r.node_id for r in then.failing}
    # A test file that could not be imported then: its tests failed too.
    failing_then |= {r.file for r in then.failing if r.collection_error and r.file}
    pre_existing = [
        r.node_id for r in suspects if r.node_id in failing_then or r.file in failing_then
    ]
    if pre_existing and unknown:
        return GateOutcome(
            unverified=f"{len(pre_existing)} failing test(s) failed before the run too, "
            f"but the earlier text of {', '.join(unknown)} is not known (a command "
            "changed it), so the baseline may not be the state before the run"
        )
    return pre_existing, [r for r in suspects if r.node_id not in pre_existing]


def reported(node_id: str, run: TestRun) -> bool:
    """``run``'s report has ``node_id`` (a test, or a file that could not
    be collected: any result of that file)."""
    return any(r.node_id == node_id or r.file == node_id for r in run.results)


def passed_again(result: TestResult, again: TestRun) -> bool:
    """``result`` is in the re-run's report and passed there (a file that
    could not be collected: all its tests passed)."""
    if result.collection_error:
        mine = [r for r in again.results if r.file == result.file]
        return bool(mine) and all(r.outcome == "passed" for r in mine)
    return any(r.node_id == result.node_id and r.outcome == "passed" for r in again.results)
