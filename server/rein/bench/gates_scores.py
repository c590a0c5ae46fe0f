"""The scores of ``rein bench gates --corpus`` (:mod:`rein.bench.gates_corpus`):
one seeded edit's verdicts judged (:class:`Verdict`), a project's row of
figures and goals (:func:`summarize`), and the printed table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rein.bench.corpus import Project, SeededEdit
from rein.bench.table import print_columns

__all__ = ["GOAL_CPU_PCT", "GOAL_DELAY_P95_MS", "Verdict", "print_table", "summarize"]

#: Goals from issue 14.
GOAL_DELAY_P95_MS = 150.0
GOAL_CPU_PCT = 5.0


def _pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return round(ordered[index], 1)


@dataclass
class Verdict:
    """One seeded edit and what the gate's verdicts on it said."""

    edit: SeededEdit
    caught: bool = False
    seeded_blockers: int = 0
    other_blockers: list[dict[str, Any]] = field(default_factory=list)
    duplicates: int = 0
    delay_ms: float | None = None
    analyzer_ms: float | None = None
    verdicts: int = 0
    status: str = ""
    #: Missed by the verdict, but the analyzers reported it afterwards.
    late: bool = False
    #: Blockers off the seeded lines on errors the command-line tool finds.
    right_elsewhere: int = 0
    #: Verdicts that named fewer blockers than they counted.
    cut: int = 0
    #: Verdicts taken on diagnostics the analyzers had not refreshed in time.
    stale: int = 0
    #: Errors the file had before the edit (a file a large workspace's pool
    #: had not opened at start is classified by this).
    prior_errors: int | None = None
    #: The command-line tool found an error on the seeded lines (None: no
    #: such tool for the language).
    confirmed: bool | None = None

    @property
    def category(self) -> str:
        if self.edit.category != "not analysed" or self.prior_errors is None:
            return self.edit.category
        return "pre-existing errors" if self.prior_errors else "no errors"


def summarize(project: Project, results: list[Verdict], extra: dict[str, Any]) -> dict[str, Any]:
    """A project's row: its figures, the missed seeds, the false blockers
    and which goals were met (``extra``: the measurement's own figures)."""
    # With a command-line truth, only the seeds it confirms are counted
    # for recall (every seed so far was).
    counted = [r for r in results if r.confirmed is not False]
    seeded = len(counted)
    caught = sum(r.caught for r in counted)
    on_seeded = sum(r.seeded_blockers + r.right_elsewhere for r in results)
    others = [b for r in results for b in r.other_blockers]
    blockers = on_seeded + len(others)
    delays = [r.delay_ms for r in results if r.delay_ms is not None]
    analyzer_ms = [r.analyzer_ms for r in results if r.analyzer_ms is not None]
    verdicts = sum(r.verdicts for r in results) or 1
    rein_cpu = extra["rein_cpu_s"]
    analyzer_cpu = extra["analyzer_cpu_s"]
    cpu_pct = round(100 * rein_cpu / analyzer_cpu, 1) if analyzer_cpu > 0 else None
    out: dict[str, Any] = {
        "project": f"{project.name}=={project.version}",
        "edits": len(results),
        # Files the pool had not analysed at start are classified by the
        # errors they had just before the edit.
        "edits_by_category": {
            c: sum(r.category == c for r in results) for c in sorted({r.category for r in results})
        },
        "recall": round(caught / seeded, 3) if seeded else None,
        "precision": round(on_seeded / blockers, 3) if blockers else None,
        "blockers": blockers,
        "false_blockers": len(others),
        "right_blockers_off_the_seeded_lines": sum(r.right_elsewhere for r in results),
        "seeds_the_cli_confirmed": (
            None
            if all(r.confirmed is None for r in results)
            else sum(bool(r.confirmed) for r in results)
        ),
        "missed_reported_after_the_verdict": sum(r.late for r in results),
        "verdicts_with_blockers_cut": sum(r.cut for r in results),
        "stale_verdicts": sum(r.stale for r in results),
        # The script went wrong (no gate ran on the seeded write): a bench
        # defect, never to be read as a gate that missed the error.
        "edits_without_a_verdict": sum(r.verdicts == 0 for r in results),
        "false_blockers_in_the_edited_file": sum(
            b["path"] == r.edit.path for r in results for b in r.other_blockers
        ),
        "duplicate_blockers": sum(r.duplicates for r in results),
        "verdict_delay_ms_p50": _pct(delays, 0.5),
        "verdict_delay_ms_p95": _pct(delays, 0.95),
        "analyzer_ms_p50": _pct(analyzer_ms, 0.5),
        "analyzer_ms_p95": _pct(analyzer_ms, 0.95),
        "verdicts": verdicts,
        "rein_cpu_ms_per_verdict": round(1000 * rein_cpu / verdicts, 1),
        "rein_cpu_pct_of_analyzers": cpu_pct,
        **extra,
        "missed": [
            {
                "path": r.edit.path,
                "kind": r.edit.kind,
                "category": r.category,
                "reported_after_the_verdict": r.late,
                "blockers_cut": r.cut > 0,
            }
            for r in results
            if not r.caught
        ],
        "false_blocker_samples": others[:10],
    }
    p95 = out["verdict_delay_ms_p95"]
    out["goals"] = {
        "precision": out["precision"] == 1.0,
        "recall": out["recall"] == 1.0,
        "verdict_delay_p95": p95 is not None and p95 <= GOAL_DELAY_P95_MS,
        "rein_cpu": cpu_pct is not None and cpu_pct <= GOAL_CPU_PCT,
    }
    return out


_TABLE = (
    ("project", "project"),
    ("edits", "edits"),
    ("recall", "recall"),
    ("precision", "precision"),
    ("false", "false_blockers"),
    ("delay p50", "verdict_delay_ms_p50"),
    ("delay p95", "verdict_delay_ms_p95"),
    ("analyzers p50", "analyzer_ms_p50"),
    ("rein cpu %", "rein_cpu_pct_of_analyzers"),
    ("start s", "pool_start_s"),
    ("settled s", "baseline_settled_s"),
    ("rein MB", "rein_rss_peak_mb"),
)


def print_table(rows: list[dict[str, Any]]) -> None:
    print_columns(_TABLE, rows)
    for row in rows:
        rss = ", ".join(f"{k} {v} MB" for k, v in row["analyzer_rss_peak_mb"].items())
        failed = [k for k, ok in row["goals"].items() if not ok]
        print(
            f"{row['project']}: delay measured from the {row['delay_basis']}; "
            f"analyzer peak RSS {rss}; goals missed: {', '.join(failed) or 'none'}"
        )
