"""How the failing tests of a verdict are judged: by their re-run (a test
that passed there is flaky) and by their run in the shadow of the
workspace before the run (failing there too: pre-existing; else the
run's); and why a verdict has none to judge, or no pass. Used by
:mod:`rein.testgate.gate`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from rein.harness.gating.gate_types import GateOutcome
from rein.testgate.junit import TestResult
from rein.testgate.report import blocker_for
from rein.testgate.runner import TestRun
from rein.testgate.selection import TestSelection
from rein.testgate.shadow import Shadow

__all__ = [
    "against_baseline",
    "broke_import",
    "could_not_judge",
    "judge_failing",
    "not_passed",
    "passed_again",
    "reported",
    "unreachable",
]


def broke_import(result: TestResult, changed: Sequence[str]) -> bool:
    """A test file the run changed does not import: the run's, a blocker at
    once; but not for a module not found (an optional dependency may be
    missing before the run too: the baseline judges it, as it judges any
    file's)."""
    if not result.collection_error or result.file not in changed:
        return False
    return "ModuleNotFoundError" not in result.message


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


def judge_failing(
    failing: Sequence[TestResult],
    again: TestRun,
    then: TestRun,
    unknown: Sequence[str],
    ids: Sequence[str] | None,
    flaky_blocks: bool,
) -> tuple[list[str], list[str], list[TestResult]] | GateOutcome:
    """The first run's ``failing`` tests judged by their re-run (``again``,
    of the node ids ``ids``; None: a custom runner's whole suite) and their
    run before the changes (``then``): (the flaky ones, the pre-existing
    ones, those the run broke), or the unverified outcome when the re-run
    left one out or the baseline could not tell. ``flaky_blocks``: a flaky
    test is judged by the baseline too."""
    if again.unverified is None and ids is not None:
        missing = [i for i in ids if not reported(i, again)]
        if missing:
            again.unverified = (
                f"{len(missing)} of them are missing from its report ({', '.join(missing[:5])})"
            )
    if again.unverified is not None:
        return GateOutcome(unverified=f"the re-run of the failing tests: {again.unverified}")
    passed = [r for r in failing if passed_again(r, again)]
    suspects = [r for r in failing if flaky_blocks or r not in passed]
    pre_existing: list[str] = []
    run_broke: list[TestResult] = []
    if suspects:
        judged = against_baseline(suspects, then, unknown)
        if isinstance(judged, GateOutcome):
            return judged
        pre_existing, run_broke = judged
    return [r.node_id for r in passed], pre_existing, run_broke


def reported(node_id: str, run: TestRun) -> bool:
    """``run``'s report has ``node_id`` (a test, or a file that could not
    be collected: any result of that file), or says the test's file could
    not be collected (its test did not run: it failed again)."""
    return any(
        r.node_id == node_id
        or r.file == node_id
        or (r.collection_error and bool(r.file) and node_id.startswith(f"{r.file}::"))
        for r in run.results
    )


def passed_again(result: TestResult, again: TestRun) -> bool:
    """``result`` is in the re-run's report and passed there (a file that
    could not be collected: all its tests passed)."""
    if result.collection_error:
        mine = [r for r in again.results if r.file == result.file]
        return bool(mine) and all(r.outcome == "passed" for r in mine)
    return any(r.node_id == result.node_id and r.outcome == "passed" for r in again.results)


def not_passed(
    run: TestRun,
    selection: TestSelection,
    pre_existing: Sequence[str],
    python: str,
    max_tests: int | None,
) -> str | None:
    """Why a verdict with no blockers is not "passed": every test that
    ran failed, before the run too; test files left out (maxTests)."""
    ran = [r for r in run.results if r.outcome != "skipped"]
    if ran and all(r.failing for r in ran) and len(pre_existing) == len(ran):
        return (
            f"none of the {len(ran)} tests that ran passed, now or before the run: "
            "they may not run here at all (the project's dependencies missing in "
            f"{python}?)"
        )
    if selection.left_out:
        return (
            f"{selection.left_out} test file(s) the change reaches were not run "
            f"(gates.tests.maxTests: {max_tests})"
        )
    return None


def could_not_judge(
    run: TestRun, selection: TestSelection, changed: Sequence[str], shadow: Shadow
) -> GateOutcome:
    """No verdict from the first run: nothing collected, or trouble. A
    collection error in a test file the run changed is the run's."""
    broken = [r for r in run.results if r.collection_error and r.file in changed]
    if broken:
        return GateOutcome(
            [blocker_for(r, shadow, selection, changed) for r in broken],
            detail=f"{len(broken)} changed test file(s) cannot be collected",
        )
    if run.nothing_collected:
        return GateOutcome(
            detail=f"no tests were collected ({selection.reason or 'the whole suite'})"
        )
    errors = [r.node_id for r in run.results if r.collection_error]
    if errors:
        return GateOutcome(
            unverified=f"pytest could not collect {', '.join(errors)}: {run.unverified}"
        )
    return GateOutcome(unverified=run.unverified)


def unreachable(paths: Sequence[str]) -> str:
    """Why changes under a folder the shadow links to the real one leave
    the verdict unverified."""
    return (
        f"the change to {', '.join(paths)} lies under a symlinked folder (or an environment "
        "folder) that the shadow links to the real one: the shadow cannot hold the change "
        "without writing the workspace, so the tests would not see it"
    )


#: pytest's words when a ``conftest.py`` cannot be imported (exit 4, no report).
_CONFTEST = re.compile(r"ImportError while loading conftest '([^']+)'\.")


def conftest_error(output: str, root: Path) -> TestResult | None:
    """The ``conftest.py`` under ``root`` that pytest could not import, as a
    test file that cannot be collected (its error and traceback), from the
    run's ``output``; None when it says no such thing."""
    found = _CONFTEST.search(output)
    if found is None:
        return None
    try:
        path = Path(found.group(1)).relative_to(root).as_posix()
    except ValueError:
        return None
    text = output[found.end() :].strip()
    errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    return TestResult(
        node_id=path,
        outcome="error",
        message=errors[-1] if errors else "",
        text=text,
        file=path,
        collection_error=True,
    )
