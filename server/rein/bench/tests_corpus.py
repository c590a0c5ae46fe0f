"""``rein bench tests --corpus``: the tests gate on real projects.

Each project is a pinned source distribution from PyPI that ships its test
suite (fetched and cached as for ``rein bench gates --corpus``,
:mod:`rein.bench.corpus`), copied into a temporary git checkout. Its
modules get seeded behaviour bugs (:mod:`rein.bench.tests_seeds`), one per
edit, which no analyzer sees.

The truth of a seed is the project's own full suite: run once with the
seed in a shadow tree, the tests that fail with it and passed in the
pristine tree are the ones it breaks. A seed the suite does not notice
(a surviving mutant) is not counted in recall and the time goal, but it is
judged too (*uncaught*): a blocker there is a false one (precision's
negatives, beside the clean edits), and its verdict is timed
(``edits_verdict_s_p50``: every seeded edit, caught or not). Seeds are
tried in their seeded order until a project has its ``edits`` counted
seeds. Those truth runs are the
expensive part: they are cached per project, seed and interpreter in the
corpus cache (``tests-truth/``), so a second run only measures the gate.

Every counted seed then goes through a :class:`~rein.testgate.gate.TestGate`
built as the session builder builds it, over a
:class:`~rein.disk.disk_workspace.DiskWorkspace` of the checkout:
``before_change``, the seeded text written to the file, ``check``, the
file restored. Measured per project:

- recall: counted seeds with at least one blocker / counted seeds;
- precision: blockers that are tests the seed breaks (fail with it, pass
  without it; a test file that cannot be collected counts when the seed
  breaks one of its tests) / all blockers;
- the test files selected of all the project's test files (median); the
  verdicts that ran only some tests of them, and of those the verdicts
  whose tests were chosen by what they ran at an earlier verdict of the
  same gate (``by_coverage``, :mod:`rein.testgate.picking`; their median
  verdict too);
- the verdict's own time (``verdict_s``, median: its judgement's, from
  its start, ahead or at ``check``, to its end; the issue's goal) and the
  wait at ``check`` after the model's next turn (``wait_s``, ``--turn-s``,
  while the gate judged ahead) against the full suite's
  wall time (the median of its runs after the first: they import the
  bytecode the first wrote, as a person's repeated ``pytest`` does), both
  measured in this run on this machine: the
  pristine suite runs before the verdicts, after every few of them and
  after the last (:class:`~rein.bench.tests_truth.FullSuiteClock`), so both
  are timed under the same load. A blocked verdict runs pytest three times (the
  selection, the failing tests again, their files in the baseline), so the
  verdict on a change that breaks nothing (a comment added to each seeded
  module, at most :data:`CLEAN_MODULES`: one run of the selection) is
  timed too; a blocker there is a false one;
- Rein's CPU (``RUSAGE_SELF``) against its children's (``RUSAGE_CHILDREN``:
  the pytest runs) during the verdicts;
- the repair's verdict: the seeded file restored and checked again by the
  same gate (its shadows kept from the first verdict), which must pass;
- where a verdict's time goes: the median of each phase the gate times
  (:attr:`~rein.testgate.gate.TestGate.timings`: the selection; each run's
  shadow update and pytest), over the blocked verdicts and the clean ones.

One more case per project adds a test file to the checkout before the run
(not by it) with a test that always fails and one that fails only the first
time (a marker file beside the checkout), both importing the seeded module;
a seed is then judged again: neither may block, and the verdict's detail
must name each under its own label (pre-existing, flaky).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from rein.bench.corpus import Project, fetch, make_workspace
from rein.bench.tests_edit import gate_for, judge_edit, not_by_coverage, pytest_runs
from rein.bench.tests_projects import TestProject, choose_projects
from rein.bench.tests_random import random_breaks
from rein.bench.tests_scores import Case, other_edits, print_tests_table, summarize
from rein.bench.tests_seeds import (
    apply,
    candidates,
    choose,
    enclosing,
    extra_tests,
    no_op,
)
from rein.bench.tests_truth import FullSuiteClock, Truths, full_suite, truth_cache_file
from rein.process.runner import SubprocessRunner
from rein.testgate.gate import TestGate
from rein.testgate.runner import RunnerSpec

__all__ = [
    "main_tests",
    "measure_project",
    "print_tests_table",
    "run_tests_corpus",
]

#: A truth run may take this many times the pristine suite (plus a margin).
TRUTH_SLACK = 5.0
EXTRA_TEST = "test_rein_bench_extra.py"
#: At most this many seeded modules also get a comment-only edit (the
#: verdict on a change that breaks nothing: one run of the selection).
CLEAN_MODULES = 10
#: The model's turn after the tool turn that made a change, before the
#: verdict (seconds): the gate judges meanwhile (``--turn-s``). A hosted
#: model takes about 0.5-2 s to the first token of its next message, then
#: writes it (a final message of a few dozen tokens: most of a second
#: more); 1.0 s is the low end of that turn, so the wait is not flattered.
TURN_S = 1.0


def _modules(root: Path, package: str) -> list[str]:
    out: list[str] = []
    for path in sorted((root / package).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        parts = rel.split("/")
        if "tests" in parts or "test" in parts or parts[-1].startswith(("test_", "conftest")):
            continue
        out.append(rel)
    return out


#: How the gate's detail names the pre-existing and the flaky tests.
PRE_EXISTING = "failing before the run too (not blocking)"
FLAKY = "flaky, passed on a re-run (not blocking)"


def _labelled(detail: str, label: str, node: str) -> bool:
    """The gate's ``detail`` names ``node`` under ``label``."""
    return any(
        part.startswith(f"{label}: ") and node in part.removeprefix(f"{label}: ").split(", ")
        for part in detail.split("; ")
    )


def _module_name(path: str) -> str:
    dotted = path.removeprefix("src/").removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


async def _special(
    gate: TestGate, root: Path, tests_dir: str, case: Case, turn_s: float
) -> dict[str, Any]:
    """The pre-existing failing test and the flaky one beside a seed."""
    rel = f"{tests_dir}/{EXTRA_TEST}"
    extra = root / rel
    # Beside the checkout: a test's first run leaves it where its re-run
    # (in a shadow made fresh) still finds it.
    marker = root.parent / f"{root.name}-rein-bench-flaky.marker"
    marker.unlink(missing_ok=True)
    seeded = enclosing((root / case.mutation.path).read_text(encoding="utf-8"), case.mutation.line)
    module = _module_name(case.mutation.path)
    extra.write_text(extra_tests(module, marker, seeded), encoding="utf-8")
    pre, flaky = f"{rel}::test_rein_bench_pre_existing", f"{rel}::test_rein_bench_flaky"
    try:
        judged, outcome = await judge_edit(gate, root, case.mutation, case.truth, turn_s=turn_s)
    finally:
        extra.unlink()
        marker.unlink(missing_ok=True)
    return {
        "seed": case.mutation.key,
        "blocked_by_the_seed_only": judged.caught and not judged.false_blockers,
        "pre_existing_reported_not_blocking": _labelled(outcome.detail, PRE_EXISTING, pre)
        and pre not in judged.blockers,
        "flaky_reported_not_blocking": _labelled(outcome.detail, FLAKY, flaky)
        and flaky not in judged.blockers,
        "unverified": judged.unverified,
        "detail": outcome.detail,
    }


@dataclass(slots=True)
class _Verdicts:
    """A project's judged edits: the seeds its suite catches (``cases``), those
    it does not (``uncaught``), the clean edits; the seeds tried, those with
    no truth; the pre-existing and flaky run (``special``)."""

    cases: list[Case] = field(default_factory=list)
    uncaught: list[Case] = field(default_factory=list)
    clean: list[Case] = field(default_factory=list)
    tried: int = 0
    no_truth: int = 0
    special: dict[str, Any] = field(default_factory=dict)


async def _verdicts(
    gate: TestGate,
    project: TestProject,
    root: Path,
    spec: RunnerSpec,
    truths: Truths,
    pristine: set[str],
    limit: float,
    seed: int,
    say: Any,
    clock: FullSuiteClock,
    turn_s: float,
) -> _Verdicts:
    """The seeds' verdicts, the pre-existing and flaky run, the clean edits
    (the warm pytest started first: every verdict is a session's later one),
    the pristine suite timed between them by ``clock``."""
    runner = SubprocessRunner(str(root))
    if not await gate.warm_ready(60):
        say(f"{project.name}: the warm pytest did not start; pytest runs cold")
    judged = _Verdicts()
    cases, uncaught = judged.cases, judged.uncaught
    tried = no_truth = 0
    for mutation in choose(candidates(root, _modules(root, project.package)), seed):
        if len(cases) >= project.edits or tried >= project.tries:
            break
        tried += 1
        known = truths.get(mutation.key)
        if known is None:
            text = apply((root / mutation.path).read_text(encoding="utf-8"), mutation)
            failing, wall, why = await full_suite(runner, spec, root, {mutation.path: text}, limit)
            known = {"broken": sorted(failing - pristine), "wall_s": round(wall, 3), "why": why}
            truths.put(mutation.key, known)
        if known.get("why"):
            no_truth += 1
            continue
        if not known["broken"]:
            # No test of the project notices it: the gate's verdict must not
            # block either (a blocker is a false one), and it is a verdict a
            # person waits for all the same.
            case, _outcome = await judge_edit(
                gate, root, mutation, list(known.get("sometimes", [])), turn_s=turn_s
            )
            if case.false_blockers:
                await random_breaks(case, known, runner, spec, root, limit, say)
                truths.put(mutation.key, known)
            uncaught.append(case)
            say(
                f"  {mutation.key}: no test of the suite notices it; {len(case.blockers)} "
                f"blockers in {case.verdict_s:.2f} s ({pytest_runs(case)})"
                + (f", false: {case.false_blockers}" if case.false_blockers else "")
            )
            continue
        truth = [*known["broken"], *known.get("sometimes", [])]
        case, _outcome = await judge_edit(gate, root, mutation, truth, repair=True, turn_s=turn_s)
        if case.false_blockers:
            await random_breaks(case, known, runner, spec, root, limit, say)
            truths.put(mutation.key, known)
        case.truth, case.truth_s = list(known["broken"]), float(known["wall_s"])
        cases.append(case)
        say(
            f"  {mutation.key}: {len(case.truth)} broken, "
            f"{'caught' if case.caught else 'MISSED'} in {case.verdict_s:.2f} s "
            f"({pytest_runs(case)}; repair {case.repair_s or 0:.2f} s)"
            + (f", false: {case.false_blockers}" if case.false_blockers else "")
            # Why a seed was missed, or not chosen by coverage: the gate's own words.
            + ("" if case.caught else f"; broken: {case.truth[:3]}; detail: {case.detail}")
            + (f"; {not_by_coverage(case.detail)}" if case.caught and not case.by_coverage else "")
        )
        await clock.after(len(cases), limit)
    judged.tried, judged.no_truth = tried, no_truth
    if cases:
        judged.special = await _special(gate, root, project.tests, cases[0], turn_s)
    for path in sorted({c.mutation.path for c in cases})[:CLEAN_MODULES]:
        case, _outcome = await judge_edit(gate, root, no_op(root, path), [], turn_s=turn_s)
        judged.clean.append(case)
        say(f"  {path} (a comment added): {len(case.blockers)} blockers in {case.verdict_s:.2f} s")
    await clock.run(limit)
    return judged


async def measure_project(
    project: TestProject,
    root: Path,
    *,
    seed: int = 34,
    truths: Truths | None = None,
    full_every: int | None = None,
    log: Any = None,
    turn_s: float = 0.0,
) -> dict[str, Any]:
    """The bench on one project checked out at ``root`` (see the module
    docstring); ``full_every``: verdicts between the timed runs of the
    pristine suite (None: :class:`FullSuiteClock`'s default)."""
    say = log or (lambda message: None)
    spec = RunnerSpec(python=sys.executable)
    truths = truths or Truths(None)
    clock = FullSuiteClock(root, spec, project.edits, full_every)
    try:
        pristine = await clock.run()
        if pristine is None:
            raise RuntimeError(
                f"{project.name}: the pristine suite could not run: {clock.failures}"
            )
        first_s = clock.walls[0]
        say(f"{project.name}: full suite {first_s:.2f} s, {len(pristine)} failing before any seed")
        limit = first_s * TRUTH_SLACK + 30
        gate = gate_for(root, spec)
        try:
            judged = await _verdicts(
                gate, project, root, spec, truths, pristine, limit, seed, say, clock, turn_s
            )
        finally:
            await gate.close()
    finally:
        clock.close()
    full_s = clock.median
    say(f"{project.name}: full suite p50 {full_s:.2f} s of {len(clock.walls)} runs")
    row = summarize(
        f"{project.name}=={project.version}",
        judged.cases,
        full_s,
        judged.tried,
        len(judged.uncaught),
        judged.no_truth,
        judged.special,
    )
    row["turn_s"] = turn_s
    row["full_suite_runs_s"] = [round(w, 2) for w in clock.walls]
    row["full_suite_first_s"] = round(first_s, 2)
    row["full_suite_failed_runs"] = len(clock.failures)
    other_edits(row, judged.cases, judged.uncaught, judged.clean, full_s)
    return row


@contextlib.contextmanager
def _addopts(options: str) -> Iterator[None]:
    """``PYTEST_ADDOPTS`` with ``options`` added, for the block."""
    if not options:
        yield
        return
    was = os.environ.get("PYTEST_ADDOPTS")
    os.environ["PYTEST_ADDOPTS"] = f"{was} {options}" if was else options
    try:
        yield
    finally:
        if was is None:
            del os.environ["PYTEST_ADDOPTS"]
        else:
            os.environ["PYTEST_ADDOPTS"] = was


def run_tests_corpus(
    projects: list[TestProject], *, seed: int = 34, log: Any = None, turn_s: float = 0.0
) -> list[dict[str, Any]]:
    say = log or (lambda message: print(message, file=sys.stderr, flush=True))
    rows: list[dict[str, Any]] = []
    for project in projects:
        source = fetch(Project(project.name, project.version, project.package, project.edits))
        with tempfile.TemporaryDirectory(prefix=f"rein-tests-bench-{project.name}-") as tmp:
            root = make_workspace(source, Path(tmp) / project.name)
            truths = Truths(truth_cache_file(project.name, project.version))
            measure = functools.partial(
                measure_project, seed=seed, truths=truths, log=say, turn_s=turn_s
            )
            with _addopts(project.addopts):
                rows.append(anyio.run(measure, project, root))
    return rows


def main_tests(args: Any) -> int:
    """``rein bench tests --corpus [--projects NAME,...] [--edits N] [--turn-s S]``.

    ``--turn-s`` (default :data:`TURN_S`): the model's turn between the tool
    turn that made a change and the verdict, during which the gate judges
    ahead (:mod:`rein.testgate.ahead`): it sets the wait after the turn
    (``wait_after_turn_s_p50``, ``wait_over_full``); the verdict's figures
    and the time goal are the judgement's own either way."""
    # The projects' suites run without this interpreter's own pytest plugins.
    os.environ.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    rows: list[dict[str, Any]] = []
    for project in choose_projects(args.projects, args.edits):
        turn_s = TURN_S if args.turn_s is None else float(args.turn_s)
        row = run_tests_corpus([project], turn_s=turn_s)[0]
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
    if not args.json:
        print_tests_table(rows)
    missed = any(not ok for row in rows for ok in row["goals"].values())
    return 1 if missed and args.strict else 0
