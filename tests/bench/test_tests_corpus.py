"""``rein bench tests --corpus`` scored on a tiny project with real pytest
runs: two seeds the suite catches, one it does not, the pre-existing and
the flaky test."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from rein.bench.tests_corpus import measure_project
from rein.bench.tests_projects import TestProject
from rein.bench.tests_scores import Case, other_edits, summarize
from rein.bench.tests_seeds import Mutation
from rein.bench.tests_truth import Truths

MODULE = """def is_small(x, limit=3):
    return x < limit


def pair(a, b):
    return divmod(a, b)


def spread(a, b):
    if a > b:
        return a - b
    return b - a
"""

TESTS = """from pkg.mod import is_small, pair


def test_small():
    assert is_small(2)
    assert not is_small(3)


def test_pair():
    assert pair(7, 2) == (3, 1)
"""


def test_the_bench_scores_two_seeds_and_the_pre_existing_and_flaky_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tiny project's pytest without this suite's plugins.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    root = tmp_path / "tiny"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(MODULE)
    (root / "tests" / "test_mod.py").write_text(TESTS)
    (root / "tests" / "test_other.py").write_text("def test_alone():\n    assert True\n")
    project = TestProject("tiny", "0", "pkg", "tests", edits=2, tries=4)
    truths = Truths(tmp_path / "truth.json")

    async def main() -> dict:
        # Seed 5's order: spread's seed (no test notices it), then two caught.
        return await measure_project(project, root, seed=5, truths=truths, full_every=2)

    row = anyio.run(main)
    assert (row["seeds"], row["recall"], row["precision"], row["false_blockers"]) == (
        2,
        1.0,
        1.0,
        0,
    )
    # Only the test file importing the seeded module runs.
    assert (row["selected_p50"], row["test_files"], row["run_all"]) == (1, 2, 0)
    assert row["special"]["blocked_by_the_seed_only"]
    assert row["special"]["pre_existing_reported_not_blocking"]
    assert row["special"]["flaky_reported_not_blocking"]
    assert row["goals"]["pre_existing"] and row["goals"]["flaky"]
    # A comment added to the seeded module breaks nothing and blocks nothing.
    assert (row["clean_edits"], row["clean_blockers"], row["clean_unverified"]) == (1, 0, 0)
    # Each seed's file restored, the same gate passes it (the repair's verdict).
    assert (row["repair_blockers"], row["repair_unverified"]) == (0, 0)
    assert row["repair_verdict_s_p50"] is not None
    # The seed no test notices is judged too, and blocks nothing.
    assert (row["survived"], row["uncaught_edits"], row["uncaught_blockers"]) == (1, 1, 0)
    assert (row["uncaught_false_blockers"], row["uncaught_unverified"]) == (0, 0)
    assert row["uncaught_verdict_s_p50"] is not None
    assert row["edits_verdict_s_p50"] is not None and row["goals"]["precision"]
    # Every verdict counted once: two seeds, their two repairs, the seed no
    # test notices, one clean edit.
    assert row["all_verdicts"] == 6 and row["all_verdicts_s_p50"] is not None
    # The pristine suite timed before the verdicts, after the second and
    # after the last: the reference is the median of the two that reuse
    # the first's bytecode.
    assert len(row["full_suite_runs_s"]) == 3 and row["full_suite_failed_runs"] == 0
    later = row["full_suite_runs_s"][1:]
    assert row["full_suite_s"] == pytest.approx(sum(later) / 2, abs=0.011)
    # Where a blocked verdict's time went: the selections and each of its
    # runs, timed (no fresh re-run: each seed's failure was confirmed in
    # the first run's own process), the wait after the first run, how many
    # other runs there were and how many failures were confirmed; every
    # seed narrowed to the tests naming it, and every run by the warm pytest;
    # the gate's own time before the first run, from its end to the verdict.
    runs = {name.partition("_")[0] for name in row["phases_p50"]}
    # and the judgement's own time (judged ahead: no model turn here, so
    # the verdict waited for all of it).
    assert runs == {
        "select",
        "narrow",
        "first",
        "baseline",
        "after",
        "waves",
        "confirmed",
        "own",
        "judgement",
    }
    assert row["turn_s"] == 0.0 and row["judgement_s_p50"] == row["verdict_s_p50"]
    assert row["wait_after_turn_s_p50"] is not None
    assert 0 < row["phases_p50"]["own_before_first"] < row["verdict_s_p50"]
    assert 0 < row["phases_p50"]["first_to_verdict"] < row["verdict_s_p50"]
    assert row["narrowed"] == 2
    assert row["warm_runs"] == row["pytest_runs"] == 4  # each seed's first and baseline
    # The truth of each seed tried is cached, and the project is as it was.
    assert len(json.loads((tmp_path / "truth.json").read_text())) == row["seeds_tried"]
    assert (root / "pkg" / "mod.py").read_text() == MODULE
    assert sorted(p.name for p in (root / "tests").iterdir()) == ["test_mod.py", "test_other.py"]


def test_the_time_goal_is_the_judgements_own_time_never_the_wait_after_a_turn() -> None:
    """The judgement hidden in the model's turn is no faster: the goal (and
    ``verdict_s_p50``, as in every earlier row) is its own time; the wait
    after the turn is its own figure (review26b MEDIUM 1)."""
    seed = Mutation("pkg/mod.py", 1, "constant", "x = 1\n", "x = 2\n")
    case = Case(seed, ["t"], 1.0, blockers=["t"], verdict_s=0.6, wait_s=0.1)
    row = summarize("p", [case], 1.0, 1, 0, 0, {})
    assert (row["verdict_s_p50"], row["verdict_over_full"]) == (0.6, 0.6)
    assert (row["judgement_over_full"], row["wait_over_full"]) == (0.6, 0.1)
    assert row["wait_after_turn_s_p50"] == 0.1
    assert not row["goals"]["time"]


def test_a_blocker_on_a_seed_no_test_notices_is_a_false_one() -> None:
    """The seeds the suite does not notice are precision's negatives: a
    blocker there misses the goal, and their verdicts join the time over
    every seeded edit (the goal stays the caught seeds')."""
    seed = Mutation("pkg/mod.py", 1, "constant", "x = 1\n", "x = 2\n")
    caught = Case(seed, ["t"], 1.0, blockers=["t"], verdict_s=0.6)
    quiet = Case(seed, [], 1.0, verdict_s=0.2)
    row = summarize("p", [caught], 1.0, 2, 1, 0, {})
    other_edits(row, [caught], [quiet], [], 1.0)
    assert row["goals"]["precision"] and row["uncaught_false_blockers"] == 0
    assert (row["edits_verdict_s_p50"], row["edits_over_full"]) == (0.4, 0.4)
    assert row["verdict_over_full"] == 0.6 and not row["goals"]["time"]
    wrong = Case(seed, [], 1.0, blockers=["u"], false_blockers=["u"], verdict_s=0.2)
    row = summarize("p", [caught], 1.0, 2, 1, 0, {})
    other_edits(row, [caught], [wrong], [], 1.0)
    assert not row["goals"]["precision"]
    assert (row["uncaught_blockers"], row["uncaught_false_blocker_samples"]) == (1, ["u"])
