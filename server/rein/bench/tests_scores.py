"""The scores of ``rein bench tests --corpus`` (:mod:`rein.bench.tests_corpus`):
one judged seed (:class:`Case`), a project's row of figures and goals
(:func:`summarize`, :func:`phases_p50`; :func:`other_edits`: the seeds no
test notices, the clean edits, every verdict), and the printed table."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from rein.bench.table import print_columns
from rein.bench.tests_seeds import Mutation

__all__ = [
    "GOAL_PRECISION",
    "GOAL_RECALL",
    "GOAL_TIME_RATIO",
    "Case",
    "other_edits",
    "phases_p50",
    "print_tests_table",
    "summarize",
]

#: The issue's goals (issue 34).
GOAL_RECALL = 0.9
GOAL_PRECISION = 1.0
GOAL_TIME_RATIO = 1 / 3


@dataclass(slots=True)
class Case:
    """One seeded edit judged by the gate, beside its truth (the full suite)."""

    mutation: Mutation
    truth: list[str]
    truth_s: float
    blockers: list[str] = field(default_factory=list)
    false_blockers: list[str] = field(default_factory=list)
    unverified: str | None = None
    selected: int = 0
    total: int = 0
    run_all: bool = False
    #: The verdict's own time: its judgement's, from its start (ahead or at
    #: ``check``) to its end; with no judgement (the verdict said so at
    #: once), the time at ``check``. With no model turn, the gate's time at
    #: ``check``, as every row before ``--turn-s`` measured it.
    verdict_s: float = 0.0
    #: The wait at ``check`` after the model's turn (``--turn-s``): the
    #: judgement ahead hides in that turn what it can.
    wait_s: float = 0.0
    self_cpu_s: float = 0.0
    child_cpu_s: float = 0.0
    detail: str = ""
    #: The gate's phases (name -> seconds).
    phases: dict[str, float] = field(default_factory=dict)
    #: The repair's verdict (the file restored, the same gate): its time,
    #: blockers (false ones) and why it was unverified.
    repair_s: float | None = None
    repair_blockers: int = 0
    repair_unverified: str | None = None
    #: The verdict ran only some tests of its files: those naming what the
    #: change reaches, or (``by_coverage``) those that ran a changed function.
    narrowed: bool = False
    #: The verdict chose its tests by what they ran at an earlier verdict.
    by_coverage: bool = False
    #: Its pytest runs that the warm pytest ran.
    warm_runs: int = 0

    @property
    def caught(self) -> bool:
        return bool(self.blockers)


def phases_p50(cases: list[Case]) -> dict[str, float]:
    """The median of each phase over the cases that had it."""
    names = sorted({name for c in cases for name in c.phases}, key=_phase_order)
    return {
        name: round(statistics.median(c.phases[name] for c in cases if name in c.phases), 3)
        for name in names
    }


def _phase_order(name: str) -> tuple[int, str]:
    run = name.partition("_")[0]
    return ({"select": 0, "first": 1, "rerun": 2, "baseline": 3}.get(run, 4), name)


def summarize(
    project: str,
    cases: list[Case],
    full_s: float,
    tried: int,
    survived: int,
    no_truth: int,
    special: dict[str, Any],
) -> dict[str, Any]:
    blockers = sum(len(c.blockers) for c in cases)
    false = sum(len(c.false_blockers) for c in cases)
    verdict = statistics.median(c.verdict_s for c in cases) if cases else None
    self_cpu = sum(c.self_cpu_s for c in cases)
    child_cpu = sum(c.child_cpu_s for c in cases)
    recall = round(sum(c.caught for c in cases) / len(cases), 3) if cases else None
    precision = round((blockers - false) / blockers, 3) if blockers else None
    ratio = round(verdict / full_s, 2) if verdict is not None and full_s else None
    wait = statistics.median(c.wait_s for c in cases) if cases else None
    repairs = [c.repair_s for c in cases if c.repair_s is not None]
    covered = [c.verdict_s for c in cases if c.by_coverage]
    return {
        "project": project,
        "seeds_tried": tried,
        "seeds": len(cases),
        "survived": survived,
        "no_truth": no_truth,
        "kinds": {
            k: sum(c.mutation.kind == k for c in cases)
            for k in sorted({c.mutation.kind for c in cases})
        },
        "recall": recall,
        "precision": precision,
        "blockers": blockers,
        "false_blockers": false,
        "unverified": sum(c.unverified is not None for c in cases),
        "test_files": cases[0].total if cases else None,
        "selected_p50": statistics.median(c.selected for c in cases) if cases else None,
        "run_all": sum(c.run_all for c in cases),
        "narrowed": sum(c.narrowed for c in cases),
        "by_coverage": sum(c.by_coverage for c in cases),
        "by_coverage_verdict_s_p50": round(statistics.median(covered), 2) if covered else None,
        "warm_runs": sum(c.warm_runs for c in cases),
        "pytest_runs": sum(n.endswith("_pytest") for c in cases for n in c.phases),
        "verdict_s_p50": round(verdict, 2) if verdict is not None else None,
        "full_suite_s": round(full_s, 2),
        "truth_s_p50": round(statistics.median(c.truth_s for c in cases), 2) if cases else None,
        "verdict_over_full": ratio,
        # The same figure by the name that says what it is: the goal's.
        "judgement_s_p50": round(verdict, 2) if verdict is not None else None,
        "judgement_over_full": ratio,
        "wait_after_turn_s_p50": round(wait, 2) if wait is not None else None,
        "wait_over_full": round(wait / full_s, 2) if wait is not None and full_s else None,
        "phases_p50": phases_p50(cases),
        "repair_verdict_s_p50": round(statistics.median(repairs), 2) if repairs else None,
        "repair_blockers": sum(c.repair_blockers for c in cases),
        "repair_unverified": sum(c.repair_unverified is not None for c in cases),
        "rein_cpu_s": round(self_cpu, 2),
        "children_cpu_s": round(child_cpu, 2),
        "rein_cpu_pct": round(100 * self_cpu / (self_cpu + child_cpu), 1)
        if self_cpu + child_cpu
        else None,
        "missed": [c.mutation.key for c in cases if not c.caught],
        "false_blocker_samples": [b for c in cases for b in c.false_blockers][:5],
        "unverified_samples": [c.unverified for c in cases if c.unverified][:3],
        "special": special,
        "goals": {
            "recall": recall is not None and recall >= GOAL_RECALL,
            # A repaired file that still blocks is a false blocker too.
            "precision": precision is not None
            and precision >= GOAL_PRECISION
            and not any(c.repair_blockers for c in cases),
            # The judgement's own time, never the wait after a modelled turn.
            "time": ratio is not None and ratio <= GOAL_TIME_RATIO,
            "pre_existing": bool(special.get("pre_existing_reported_not_blocking")),
            "flaky": bool(special.get("flaky_reported_not_blocking")),
        },
    }


def _p50(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def _over(seconds: float | None, full_s: float) -> float | None:
    return round(seconds / full_s, 2) if seconds is not None and full_s else None


def other_edits(
    row: dict[str, Any],
    cases: list[Case],
    uncaught: list[Case],
    clean: list[Case],
    full_s: float,
) -> None:
    """Into ``row``, beside the caught seeds' figures: the seeds no test of
    the suite notices (``uncaught``: a blocker there is a false one), the
    clean edits (a comment added: the same), the verdict time over every
    seeded edit, caught or not (``edits_*``), and over every verdict a
    person waits for (``all_*``: the seeds', their repairs', the clean
    edits'). The time goal stays the caught seeds' (:func:`summarize`)."""
    for name, judged in (("uncaught", uncaught), ("clean", clean)):
        row[f"{name}_edits"] = len(judged)
        row[f"{name}_blockers"] = sum(len(c.blockers) for c in judged)
        row[f"{name}_unverified"] = sum(c.unverified is not None for c in judged)
        row[f"{name}_verdict_s_p50"] = _p50([c.verdict_s for c in judged])
        row[f"{name}_wait_after_turn_s_p50"] = _p50([c.wait_s for c in judged])
        row[f"{name}_over_full"] = _over(row[f"{name}_verdict_s_p50"], full_s)
        row[f"{name}_phases_p50"] = phases_p50(judged)
    # A blocker on a seed nothing catches: false, unless the seed breaks it
    # at random (tests_random: then it is in the seed's truth).
    row["uncaught_false_blockers"] = sum(len(c.false_blockers) for c in uncaught)
    row["uncaught_false_blocker_samples"] = [b for c in uncaught for b in c.false_blockers][:5]
    row["goals"]["precision"] = (
        row["goals"]["precision"]
        and row["clean_blockers"] == 0
        and row["uncaught_false_blockers"] == 0
    )
    seeded = [c.verdict_s for c in (*cases, *uncaught)]
    row["edits_verdict_s_p50"] = _p50(seeded)
    row["edits_over_full"] = _over(row["edits_verdict_s_p50"], full_s)
    every = [c.verdict_s for c in (*cases, *uncaught, *clean)]
    every += [c.repair_s for c in cases if c.repair_s is not None]
    row["all_verdicts"] = len(every)
    row["all_verdicts_s_p50"] = _p50(every)
    row["all_over_full"] = _over(row["all_verdicts_s_p50"], full_s)


_TABLE = (
    ("project", "project"),
    ("seeds", "seeds"),
    ("tried", "seeds_tried"),
    ("recall", "recall"),
    ("precision", "precision"),
    ("false", "false_blockers"),
    ("selected p50", "selected_p50"),
    ("test files", "test_files"),
    ("verdict p50 s", "verdict_s_p50"),
    ("full suite s", "full_suite_s"),
    ("ratio", "verdict_over_full"),
    ("wait p50 s", "wait_after_turn_s_p50"),
    ("wait ratio", "wait_over_full"),
    ("uncaught", "uncaught_edits"),
    ("uncaught false", "uncaught_false_blockers"),
    ("edits p50 s", "edits_verdict_s_p50"),
    ("edits ratio", "edits_over_full"),
    ("clean p50 s", "clean_verdict_s_p50"),
    ("clean ratio", "clean_over_full"),
    ("repair p50 s", "repair_verdict_s_p50"),
    ("all p50 s", "all_verdicts_s_p50"),
    ("all ratio", "all_over_full"),
    ("rein cpu %", "rein_cpu_pct"),
)


def print_tests_table(rows: list[dict[str, Any]]) -> None:
    print_columns(_TABLE, rows)
    for row in rows:
        special = row["special"]
        failed = [k for k, ok in row["goals"].items() if not ok]
        print(
            f"{row['project']}: survived {row['survived']}, no truth {row['no_truth']}, "
            f"unverified {row['unverified']}, whole suite {row['run_all']}x, "
            f"per test {row['narrowed']}x (by coverage {row['by_coverage']}x), "
            f"warm pytest runs {row['warm_runs']} of "
            f"{row['pytest_runs']}; "
            f"pre-existing ok {special.get('pre_existing_reported_not_blocking')}, "
            f"flaky ok {special.get('flaky_reported_not_blocking')}; "
            f"missed {row['missed']}; goals missed: {', '.join(failed) or 'none'}"
        )
        walls = row.get("full_suite_runs_s") or []
        if walls:
            print(
                f"  full suite p50 {row['full_suite_s']} s of {len(walls)} runs between the "
                f"verdicts ({min(walls)}-{max(walls)} s; the first {row['full_suite_first_s']} s); "
                f"verdict p50 {row['verdict_s_p50']} s (by coverage "
                f"{row['by_coverage_verdict_s_p50']} s), clean {row.get('clean_verdict_s_p50')} s"
            )
        for label, key in (("blocked", "phases_p50"), ("clean", "clean_phases_p50")):
            phases = ", ".join(f"{k} {v:.2f}" for k, v in row.get(key, {}).items())
            print(f"  {label} verdict phases p50 (s): {phases or 'none'}")
