"""The tests gate's result in ``rein run``'s text output: the verdict line
carries the gate's detail (how many tests ran and passed, the selection,
the failures that are not the run's), the blockers below it."""

from __future__ import annotations

from rein.harness.events import Blocker, GateResult
from tests.printed import printed

DETAIL = (
    "1 of 2 tests passed; 1 of 3 test files selected (1 of 3 test files reach the change "
    "(1 import a changed file)); failing before the run too (not blocking): "
    "tests/test_mod.py::test_already_broken"
)


def test_a_blocked_tests_gate_shows_its_detail_and_the_failing_test() -> None:
    blocker = Blocker(
        gate="tests",
        message="tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]",
        path="tests/test_mod.py",
        line=4,
        source="tests",
    )
    text = printed(
        GateResult(gate="tests", passed=False, status="blocked", blockers=[blocker], detail=DETAIL)
    )
    assert text.splitlines() == [
        f"    ✗ tests: 1 blocker(s) ({DETAIL})",
        "      tests/test_mod.py:5 error: "
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]",
    ]


def test_a_passed_gate_shows_its_detail_and_one_without_shows_none() -> None:
    text = printed(
        GateResult(gate="tests", passed=True, duration_ms=812, detail="2 of 2 tests passed"),
        GateResult(gate="runtime", passed=True, duration_ms=5),
    )
    assert text.splitlines() == [
        "    ✓ tests passed in 812 ms: 2 of 2 tests passed",
        "    ✓ runtime passed in 5 ms",
    ]


def test_blockers_past_the_eighth_are_counted() -> None:
    """Old (trial31): click's "10 blocker(s)" listed 8, and nothing said
    two were left out."""
    blockers = [
        Blocker(gate="tests", message=f"t.py::test_{n} failed", path="t.py", line=n)
        for n in range(10)
    ]
    lines = printed(
        GateResult(gate="tests", passed=False, status="blocked", blockers=blockers)
    ).splitlines()
    assert len(lines) == 10 and lines[-2].endswith("t.py::test_7 failed")
    assert lines[-1] == "      … and 2 more"
