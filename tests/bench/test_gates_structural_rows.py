"""The ``--cold`` rows of ``rein bench gates --corpus``: the wall without
the tests gate's own time beside the wall (issue 32 item 7: the floor is the
command-line analyzers')."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.bench.corpus import Project
from rein.bench.corpus_cases import Case
from rein.bench.gates_structural_scores import CaseOutcome, analyzer_wall, case_rows, print_cases


def _case() -> Case:
    def nothing(_root: Path) -> None:
        return None

    return Case("seeded-error", "pkg/a.py", {}, {}, ("pkg/a.py",), ("pkg/a.py",), nothing, nothing)


def test_a_cold_row_gives_the_wall_without_the_tests_gate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    timed = CaseOutcome(
        _case(), [], 2.0, wall_s=12.0, phases={"gate tests": 3.0, "gate analyzer": 7}
    )
    untested = CaseOutcome(_case(), [], 4.0, wall_s=10.0, phases={"gate analyzer": 8.0})
    not_run = CaseOutcome(_case(), [], 1.0)
    assert analyzer_wall(timed) == 9.0
    assert analyzer_wall(untested) == 10.0
    assert analyzer_wall(not_run) is None

    (row,) = case_rows(
        Project("pkg", "1", "pkg", 1), [timed, untested, not_run], True, ("seeded-error",)
    )
    assert row["wall_over_cli"] == [6.0, 2.5]  # the old figures are kept
    assert row["analyzer_wall_s"] == [9.0, 10.0]
    assert row["analyzer_wall_over_cli"] == [4.5, 2.5]
    print_cases([row])
    assert (
        "without the tests gate [9.0, 10.0] s, /command line [4.5, 2.5]" in capsys.readouterr().out
    )


def test_a_warm_row_has_no_walls() -> None:
    (row,) = case_rows(
        Project("pkg", "1", "pkg", 1), [CaseOutcome(_case(), [], 1.0)], False, ("seeded-error",)
    )
    assert "analyzer_wall_s" not in row and "wall_s_p50" not in row
