"""The scores of the file-set and command cases of ``rein bench gates
--corpus`` (:mod:`rein.bench.gates_structural` runs them): one case's
outcome (:class:`CaseOutcome`), a project's row per kind of case
(:func:`case_rows`: recall, precision, the walls with ``--cold``) and the
printed lines. Counted per kind as the seeded edits are
(:mod:`rein.bench.gates_scores`):

- recall: cases whose first analyzer ``gate_result`` has a blocker among the
  errors the change added (by the command line) / cases;
- precision: blockers among those errors / all analyzer blockers of all the
  case's verdicts (the repair's included: a blocker there is false).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from rein.bench.corpus import Project
from rein.bench.corpus_cases import Case, ErrorKey

__all__ = ["CaseOutcome", "analyzer_wall", "case_rows", "print_cases"]


@dataclass
class CaseOutcome:
    """One case, its truth by the command line, and what Rein's verdicts on
    it said."""

    case: Case
    truth: list[ErrorKey]
    cli_s: float
    caught: bool = False
    true_blockers: int = 0
    false_blockers: list[dict[str, Any]] = field(default_factory=list)
    covered: int = 0
    #: The new-error lines the first verdict did not block (path, line).
    uncovered: list[tuple[str, int]] = field(default_factory=list)
    verdicts: int = 0
    status: str = ""
    wall_s: float | None = None
    #: The analyzer verdicts' statuses and details, in order.
    statuses: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    #: The first verdict's first blocker's path; its blocker count.
    first_blocker: str | None = None
    first_blockers: int = 0
    #: The first repair prompt the model was sent.
    prompt: str | None = None
    #: Seconds by phase: each gate's verdicts (``gate NAME``), the waits on
    #: the analyzers they reported (``waited: WHAT``), the session's start
    #: and its close (the analyzers stopped).
    phases: dict[str, float] = field(default_factory=dict)


def case_rows(
    project: Project, outcomes: list[CaseOutcome], cold: bool, kinds: tuple[str, ...]
) -> list[dict[str, Any]]:
    """One row per kind of ``kinds`` that has cases: recall, precision, the
    blocked and false lines, each case in brief; with ``cold`` the walls
    beside the command line's."""
    rows: list[dict[str, Any]] = []
    for kind in kinds:
        mine = [o for o in outcomes if o.case.kind == kind]
        if not mine:
            continue
        true = sum(o.true_blockers for o in mine)
        blockers = true + sum(len(o.false_blockers) for o in mine)
        expected = sum(len({(p, line) for p, line, _r in o.truth}) for o in mine)
        breaking = [o for o in mine if o.truth]
        clean = [o for o in mine if not o.truth]
        row: dict[str, Any] = {
            "project": f"{project.name}=={project.version}",
            "kind": kind,
            "cold": cold,
            "cases": len(mine),
            # Over the cases that add errors by the command line (None: none does).
            "recall": round(sum(o.caught for o in breaking) / len(breaking), 3)
            if breaking
            else None,
            # The cases that add none, and those of them every verdict passed
            # (nothing blocked, nothing unverified): those judged exactly.
            "clean_cases": len(clean),
            "clean_passed": sum(
                bool(o.statuses) and all(s == "passed" for s in o.statuses) for o in clean
            ),
            "precision": round(true / blockers, 3) if blockers else None,
            "expected_error_lines": expected,
            "expected_error_lines_blocked": sum(o.covered for o in mine),
            "false_blockers": sum(len(o.false_blockers) for o in mine),
            "cases_without_a_verdict": sum(o.verdicts == 0 for o in mine),
            "statuses": sorted({o.status for o in mine}),
            "missed": [o.case.target for o in breaking if not o.caught],
            "false_blocker_samples": [b for o in mine for b in o.false_blockers][:5],
            "cases_detail": [_checks(o) for o in mine],
        }
        if cold:
            walls = [o.wall_s for o in mine if o.wall_s is not None]
            clis = [o.cli_s for o in mine]
            row["wall_s_p50"] = round(statistics.median(walls), 1) if walls else None
            row["cli_s_p50"] = round(statistics.median(clis), 1)
            # The floor's files: the changed files and their importers (at
            # most ``maxImporters`` each), the files the first verdict judges.
            row["cli_files"] = [len(o.case.after_paths) for o in mine]
            row["wall_over_cli"] = [
                round(o.wall_s / o.cli_s, 1) for o in mine if o.wall_s is not None and o.cli_s > 0
            ]
            analyzer = [(o, analyzer_wall(o)) for o in mine]
            row["analyzer_wall_s"] = [round(w, 1) for _o, w in analyzer if w is not None]
            row["analyzer_wall_over_cli"] = [
                round(w / o.cli_s, 1) for o, w in analyzer if w is not None and o.cli_s > 0
            ]
            row["phases_s"] = [{k: round(v, 1) for k, v in sorted(o.phases.items())} for o in mine]
        rows.append(row)
    return rows


def analyzer_wall(o: CaseOutcome) -> float | None:
    """The case's wall without the tests gate's own time (its verdicts'
    ``duration_ms``): what the command-line analyzers' floor compares with
    (the tests gate has its own bench, ``rein bench tests``)."""
    if o.wall_s is None:
        return None
    return o.wall_s - o.phases.get("gate tests", 0.0)


def _checks(o: CaseOutcome) -> dict[str, Any]:
    """One case's verdicts in brief, and what a person reads first: the
    first blocker's file, whether the prompt says how many it left out,
    whether a verdict said it was partial."""
    prompt = o.prompt or ""
    return {
        "target": o.case.target,
        "statuses": o.statuses,
        "first_blocker": o.first_blocker,
        "first_blockers": o.first_blockers,
        "cause_first": o.first_blocker == o.case.after_paths[0] if o.case.after_paths else None,
        "prompt_says_left_out": "not shown here" in prompt,
        "prompt_first_problem": next(
            (line for line in prompt.splitlines() if line.startswith("- ")), None
        ),
        "partial_said": any("partial:" in d for d in o.details),
        "lines_not_blocked": [f"{p}:{line + 1}" for p, line in o.uncovered[:10]],
        "detail_first": o.details[0][:300] if o.details else None,
    }


def print_cases(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        extra = ""
        if row.get("cold"):
            extra = (
                f" wall p50 {row['wall_s_p50']} s, command line (changed files and importers:"
                f" {row['cli_files']}) p50 {row['cli_s_p50']} s,"
                f" wall/command line {row['wall_over_cli']};"
                f" without the tests gate {row['analyzer_wall_s']} s,"
                f" /command line {row['analyzer_wall_over_cli']}"
            )
        clean = (
            f" passed {row['clean_passed']} of {row['clean_cases']} without a new error,"
            if row.get("clean_cases")
            else ""
        )
        print(
            f"{row['project']} {row['kind']}: {row['cases']} cases, recall {row['recall']},"
            f"{clean} precision {row['precision']}, false {row['false_blockers']},"
            f" expected error lines blocked {row['expected_error_lines_blocked']}"
            f"/{row['expected_error_lines']}{extra}"
        )
