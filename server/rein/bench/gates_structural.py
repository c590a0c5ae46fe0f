"""The file-set and command cases of ``rein bench gates --corpus`` (a
module deleted, a module renamed, a function renamed by ``sed``) through the
real gate path, and ``--cold``: each case in a fresh session, its wall time
next to the command-line tools' on the changed files and their importers.

The cases and their truth are :mod:`rein.bench.corpus_cases`; their scores
(recall, precision, the rows and the printed lines) are
:mod:`rein.bench.gates_structural_scores`.

With ``--cold`` every case (and two seeded edits, ``seeded-error``) runs in
a session of its own, started for it: the wall time is from the session's
start to the end of the repaired run; the floor is basedpyright plus ruff on
the changed files and their importers after the change (every case's,
the seeded edits' too: the files Rein's first verdict judges), run in the
same process just before; the modules changed have at most
:data:`COLD_MAX_IMPORTERS` importers, and a seeded file's floor takes the
first :data:`COLD_MAX_IMPORTERS` of its importers, as the pool opens them. Each row also gives the wall without the tests gate's
own time (``analyzer_wall_s``, ``analyzer_wall_over_cli``): the floor is the
command-line analyzers', and the tests gate has its own bench.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rein.bench.corpus import KINDS, Project, isolated_interpreter, seed_edit
from rein.bench.corpus_cases import (
    CASE_KINDS,
    Case,
    ErrorKey,
    command_edit_case,
    delete_case,
    direct_importers,
    modules_with_importers,
    new_errors,
    renamable_functions,
    rename_case,
    run_cli,
)
from rein.bench.gates_corpus import _python_files, _quiet, _ScriptedModel
from rein.bench.gates_structural_scores import CaseOutcome, case_rows, print_cases
from rein.disk.importers import ImportIndex

__all__ = ["main_corpus", "plan_cases", "run_cases", "run_structural", "truth"]

#: Cases of each kind per project.
PER_KIND = 2
#: With ``--cold``, a changed module has at most this many importers
#: (``gates.analyzer.maxImporters``' default): the first verdicts check every
#: importer, and the floor is the command line's time on the same files. The
#: most imported modules of a large project (sympy's ``core/basic.py``: 406
#: importers) made a floor of minutes per case, and a partial verdict next to
#: a complete command line compares different work.
COLD_MAX_IMPORTERS = 30


def _texts(root: Path, files: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in files:
        try:
            out[path] = (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out


def _seeded_case(
    path: str,
    text: str,
    kind: str,
    n: int,
    rng: random.Random,
    importers: Sequence[str] = (),
) -> Case | None:
    """One seeded edit of ``path`` written by the model; the command line
    checks it with ``importers`` (``--cold``: the files its first verdict
    judges too; the probes' one-file cases: none)."""
    seeded = seed_edit(path, text, kind, n, rng)
    if seeded is None:
        return None

    def apply(root: Path) -> None:
        (root / path).write_text(seeded.edited, encoding="utf-8")

    def undo(root: Path) -> None:
        (root / path).write_text(text, encoding="utf-8")

    def write(content: str) -> dict[str, Any]:
        return {
            "tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]
        }

    return Case(
        "seeded-error",
        f"{path} ({kind})",
        write(seeded.edited),
        write(text),
        (path, *importers),
        (path, *importers),
        apply,
        undo,
        inserted=(path, seeded.first, seeded.last),
    )


def plan_cases(
    root: Path, project: Project, seed: int, *, seeded: int = 0, max_importers: int | None = None
) -> list[Case]:
    """:data:`PER_KIND` cases of each kind (and ``seeded`` seeded edits);
    the modules changed have at most ``max_importers`` importers when given
    (``--cold``: :data:`COLD_MAX_IMPORTERS`)."""
    rng = random.Random(seed)
    files = _python_files(root, ".")
    texts = _texts(root, files)
    package = [f for f in files if f.startswith(f"{project.package}/")]
    cases: list[Case] = []
    # One index of each kind for every case (built per call, sympy's plan
    # took 258 s: every module's functions were looked at, each with an
    # index of the whole tree of its own).
    index = ImportIndex(files, texts.get)
    direct = direct_importers(files, texts)
    chosen = modules_with_importers(package, files, texts)
    if max_importers is not None:
        chosen = [
            c for c in chosen if len(index.importers(c[0], max_importers + 1)) <= max_importers
        ]

    def importers(path: str) -> list[str]:
        return index.importers(path, 10_000)  # as corpus_cases.importers_of finds them

    def judged(path: str) -> list[str]:
        # A written file's importers its first verdict judges: the first
        # ``max_importers`` of the index's order, as the pool opens them.
        every = index.importers(path, sys.maxsize)
        return every[:max_importers] if max_importers is not None else every

    for path, _direct in chosen[:PER_KIND]:
        cases.append(delete_case(path, texts[path], importers(path)))
    for path, _direct in chosen[PER_KIND : 2 * PER_KIND] or chosen[:PER_KIND]:
        cases.append(rename_case(path, importers(path)))
    edits = 0
    for path, _direct in chosen:
        if edits >= PER_KIND:
            break
        functions = renamable_functions(path, texts[path], files, texts, direct)
        if functions:
            name, _users = functions[0]
            cases.append(command_edit_case(path, texts[path], name, importers(path)))
            edits += 1
    clean = [f for f in package if "/tests/" not in f]
    for i, path in enumerate(rng.sample(clean, min(seeded, len(clean)))):
        case = _seeded_case(path, texts[path], KINDS[i % len(KINDS)], i, rng, judged(path))
        if case is not None:
            cases.append(case)
    return cases


def _scratch(root: Path, into: Path) -> Path:
    """A copy of the tree the command line checks, with Rein's type checking
    mode (``standard``) when the project sets none, and an interpreter of
    its own as the workspace has (:func:`~rein.bench.corpus.isolated_interpreter`)."""
    shutil.copytree(root, into, ignore=shutil.ignore_patterns(".git", ".venv"))
    isolated_interpreter(into)
    pyproject = into / "pyproject.toml"
    configured = (into / "pyrightconfig.json").exists() or (
        pyproject.exists()
        and any(s in pyproject.read_text() for s in ("[tool.pyright]", "[tool.basedpyright]"))
    )
    if not configured:
        (into / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "standard"}))
    return into


def truth(
    scratch: Path, case: Case, before_runs: dict[tuple[str, ...], list[ErrorKey]] | None = None
) -> tuple[list[ErrorKey], float]:
    """The errors the change adds by the command line, and the command
    line's time on the changed files and their importers after it.

    Before and after are one command line each, on the case's own files in
    the same order: basedpyright's findings in a file can depend on which
    files it checks and in which order (issue 32: django's ``utils/text.py``
    line 121, ``self.output += self.get_starttag_text()``, gets its
    ``reportOperatorIssue`` twice when ``text.py`` comes first on the
    command line and once when it comes after its importers: a slice of one
    run over every case's files counted the second as new, the
    ``capfirst`` case's 12th line, which Rein rightly did not block).
    ``before_runs``: the pristine tree's runs so far by their files (a
    module's deletion and a command edit of it share one: a sympy run is a
    minute at a load of 10)."""
    key = tuple(case.before_paths)
    before = before_runs.get(key) if before_runs is not None else None
    if before is None:
        before = run_cli(scratch, case.before_paths).errors
        if before_runs is not None:
            before_runs[key] = before
    case.apply(scratch)
    try:
        after = run_cli(scratch, case.after_paths)
    finally:
        case.undo(scratch)
    return new_errors(before, after.errors, case.renamed, case.inserted), after.seconds


async def _run_one(session: Any, model: _ScriptedModel, outcome: CaseOutcome, root: Path) -> None:
    from rein.harness import Event
    from rein.harness.events import GateResult, GateWaiting

    case = outcome.case
    current: list[GateResult] = []
    waiting: dict[str, float] = {}
    phases = outcome.phases

    def on_event(event: Event) -> None:
        if isinstance(event, GateResult):
            key = f"gate {event.gate}"
            phases[key] = phases.get(key, 0.0) + event.duration_ms / 1000
            if event.gate == "analyzer":
                current.append(event)
        elif isinstance(event, GateWaiting):
            # Where the gate waited on the analyzers (each wait past a second).
            key = f"waited: {event.message.removeprefix('the analyzers: ')}"
            if event.phase == "begin":
                waiting[key] = time.monotonic()
            elif key in waiting:
                phases[key] = phases.get(key, 0.0) + time.monotonic() - waiting.pop(key)

    unsubscribe = session.subscribe(on_event)
    try:
        session.agent.reset()
        prompts = len(model.repair_prompts)
        model.play([case.change, {"text": "done"}, case.repair, {"text": "repaired"}])
        result = await session.prompt(f"change {case.target}")
        outcome.status = result.status
        if not _restored(root, case):
            # The gate let the change through: undo it with one more run.
            model.play([case.repair, {"text": "reverted"}])
            await session.prompt(f"revert {case.target}")
    finally:
        unsubscribe()
    if len(model.repair_prompts) > prompts:
        outcome.prompt = model.repair_prompts[prompts]
    outcome.statuses = [e.status for e in current]
    outcome.details = [e.detail for e in current]
    if current:
        outcome.first_blockers = len(current[0].blockers)
        outcome.first_blocker = current[0].blockers[0].path if current[0].blockers else None
    expected = {(path, line) for path, line, _rule in outcome.truth}
    reached: set[tuple[str, int]] = set()
    outcome.verdicts = len(current)
    for index, event in enumerate(current):
        for b in event.blockers:
            key = (b.path, b.line)
            if index == 0 and key in expected:
                outcome.true_blockers += 1
                outcome.caught = True
                reached.add(key)
            else:
                outcome.false_blockers.append(
                    {
                        "verdict": index,
                        "path": b.path,
                        "line": b.line,
                        "code": b.code,
                        "message": b.message[:160],
                    }
                )
    outcome.covered = len(reached)
    outcome.uncovered = sorted(expected - reached)


def _restored(root: Path, case: Case) -> bool:
    """The case's files are as committed (nothing changed, gone or new)."""
    paths = sorted({*case.before_paths, *case.after_paths})
    out = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", *paths],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return not out.strip()


async def _session(root: Path, model: _ScriptedModel) -> Any:
    from rein.config import ReinConfig
    from rein.harness.config import AnalyzerGateConfig, GatesConfig, TestsGateConfig
    from rein.hosting.headless import HeadlessSession
    from rein.tools.settings import ApprovalSettings

    # Commands allowed; the disk watched, as in `rein run` (a command's
    # changes reach the analyzers through the watcher).
    # A loaded machine's slow analyzers must not make the baselines and
    # verdicts stale (the bench measures the time they take). The bench
    # judges the analyzer gate alone: no test suites run (the workspace's
    # own interpreter has no pytest, corpus.isolated_interpreter).
    gates = GatesConfig(
        analyzer=AnalyzerGateConfig(settle_timeout_ms=900_000),
        tests=TestsGateConfig(enabled=False),
    )
    config = ReinConfig(approval=ApprovalSettings(command="allow"), gates=gates)
    return HeadlessSession(root, model, config, watch=True)


async def run_cases(
    project: Project,
    root: Path,
    scratch_dir: Path,
    seed: int,
    cold: bool,
    log: Any,
    plan: Callable[[Path], list[Case]] | None = None,
    kinds: tuple[str, ...] = (*CASE_KINDS, "seeded-error"),
) -> list[dict[str, Any]]:
    """Every case of ``project`` (``plan``'s, else :func:`plan_cases`'s): in
    one session, or each in its own (``cold``). One row per kind."""
    if plan is not None:
        cases = plan(root)
    else:
        cases = plan_cases(
            root,
            project,
            seed,
            seeded=2 if cold else 0,
            max_importers=COLD_MAX_IMPORTERS if cold else None,
        )
    scratch = _scratch(root, scratch_dir)
    outcomes: list[CaseOutcome] = []
    before_runs: dict[tuple[str, ...], list[ErrorKey]] = {}
    for case in cases:
        errors, cli_s = truth(scratch, case, before_runs)
        if not errors and plan is None:
            log(
                f"{project.name} {case.kind} {case.target}: no new errors by the command line, skipped"
            )
            continue
        # The probes keep such a case (issue 32's cases all count): it is
        # judged exactly when every verdict passes with nothing unverified.
        outcomes.append(CaseOutcome(case, errors, cli_s))
    model = _ScriptedModel()
    if cold:
        for outcome in outcomes:
            started = time.monotonic()
            async with await _session(root, model) as session:
                outcome.phases["session start"] = time.monotonic() - started
                await _run_one(session, model, outcome, root)
                closing = time.monotonic()
            outcome.wall_s = time.monotonic() - started
            outcome.phases["session close"] = time.monotonic() - closing
            _log(project, outcome, log)
    else:
        async with await _session(root, model) as session:
            # Warm: the whole workspace analysed before the first case (a
            # session defers it until a verdict needs it).
            await session.pool.analyse_workspace()
            await _quiet(session.pool, 2.0, 900)
            # The probes (``plan``) count the pristine tree's errors, except
            # in a large workspace (its analyzers check open files only).
            if plan is not None and not session.pool.large:
                pre = await _pre_existing(session.pool, scratch, root, project)
                log(f"{project.name} pre-existing: {json.dumps(pre)}")
            for outcome in outcomes:
                await _run_one(session, model, outcome, root)
                await _quiet(session.pool, 0.5, 120)
                _log(project, outcome, log)
    return case_rows(project, outcomes, cold, kinds)


async def _pre_existing(pool: Any, scratch: Path, root: Path, project: Project) -> dict[str, Any]:
    """The pristine tree's errors by Rein's analyzers and by the command line
    on every Python file (issue 32: a src layout's counts must be equal)."""
    files = _python_files(root, ".")
    snap = await pool.snapshot(None)
    rein = Counter(d.path for d in snap.diagnostics if d.severity == 1 and d.path in files)
    cli = Counter(path for path, _line, _rule in run_cli(scratch, files).errors)
    differ = sorted(p for p in {*rein, *cli} if rein[p] != cli[p])
    return {
        "project": f"{project.name}=={project.version}",
        "kind": "pre-existing",
        "files": len(files),
        "rein_errors": sum(rein.values()),
        "cli_errors": sum(cli.values()),
        "files_that_differ": [(p, rein[p], cli[p]) for p in differ[:20]],
    }


def _log(project: Project, o: CaseOutcome, log: Any) -> None:
    wall = f" wall={o.wall_s:.1f}s cli={o.cli_s:.1f}s" if o.wall_s is not None else ""
    log(
        f"{project.name} {o.case.kind} {o.case.target}: caught={o.caught} "
        f"expected={len(o.truth)} covered={o.covered} false={len(o.false_blockers)}{wall}"
    )


def run_structural(
    projects: list[Project], *, cold: bool, seed: int = 14, log: Any = None
) -> list[dict[str, Any]]:
    """The cases of every project, warm (one session) or ``cold``."""

    import anyio

    from rein.bench.corpus import fresh_workspace

    say = log or (lambda message: print(message, file=sys.stderr, flush=True))
    rows: list[dict[str, Any]] = []
    for project in projects:
        with fresh_workspace(project, "rein-cases") as root:
            scratch = root.parent / "scratch"
            rows += anyio.run(run_cases, project, root, scratch, seed, cold, say)
    return rows


def main_corpus(args: Any) -> int:
    """``rein bench gates --corpus [--cold]``: the seeded edits (not with
    ``--cold``) and then the cases of this module."""
    from rein.bench.gates_corpus import _parse_projects, print_table, run_corpus
    from rein.bench.gates_languages import pick_languages, run_languages

    languages, python = pick_languages(args.projects)
    projects = _parse_projects(python) if python != "" else []
    cold = bool(args.cold)
    edits = int(args.edits) if args.edits else None
    seeded = [] if cold else run_corpus(projects, edits=edits)
    # The other languages' projects: seeded edits only (not with --cold).
    seeded += [] if cold else run_languages(languages, edits=edits, required=bool(args.projects))
    cases = run_structural(projects, cold=cold)
    if args.json:
        for row in [*seeded, *cases]:
            print(json.dumps(row))
    else:
        if seeded:
            print_table(seeded)
        print_cases(cases)
    missed = any(not ok for row in seeded for ok in row["goals"].values()) or any(
        row["recall"] != 1.0 or row["precision"] != 1.0 for row in cases
    )
    return 1 if missed and args.strict else 0
