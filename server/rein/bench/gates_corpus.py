"""``rein bench gates --corpus``: the analyzer gate on real projects.

The projects, their cache and the seeded errors are :mod:`rein.bench.corpus`;
the deleted, renamed and ``sed``-edited modules, ``--cold`` and the command
itself are :mod:`rein.bench.gates_structural`.

One :class:`~rein.hosting.headless.HeadlessSession` per project (real ruff
server and basedpyright) stays open across that project's edits. After the
pool's start, the pristine tree's diagnostics sort the project's files into
those with pre-existing errors and those without (and, when the pool did not
open them, those it never analysed). Every seeded edit then goes through the
real gate path: a scripted model writes the file with exactly one new error
(an undefined name, a wrong argument type, a missing import or a syntax
error) inserted between two top-level statements, says done, and, asked to
repair, writes the original back and says done again. The first analyzer
``gate_result`` of the run is the verdict on the seeded error; every later
one (the repair's) should pass.

Measured per project:

- recall: seeded errors with at least one blocker on the seeded lines /
  seeded errors;
- precision: blockers on the seeded lines / all analyzer blockers of all
  verdicts (the repair's verdicts included: a blocker there is false);
- verdict delay: the analyzer ``gate_result`` minus the moment the analyzers
  were last done (see :func:`analyzers_done_at`);
- the analyzers' own time (wall, from the write to their last report) and
  CPU (``/proc/<pid>/stat`` of each analyzer and its children) next to
  Rein's own CPU (``time.process_time`` around the edits);
- the pool's start and the pristine tree's settling time, apart;
- peak RSS (``VmHWM``) of Rein and of each analyzer process.

The verdicts' scores, the goals and the printed table are
:mod:`rein.bench.gates_scores`.

The other languages' projects (:mod:`rein.bench.gates_languages`) go through
the same measurement with their own :class:`SeedPlan`: their files, seeds,
configuration, and a truth from the language's command-line tool (a blocker
on a line it finds a new error on is right too).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from rein.bench.corpus import (
    FULL_CORPUS,
    KINDS,
    SMALL_CORPUS,
    Project,
    SeededEdit,
    fresh_workspace,
    seed_edit,
)
from rein.bench.gates_scores import Verdict, print_table, summarize
from rein.disk.analyzers import AnalyzerPool
from rein.harness.ports import ModelDelta, ModelRequest

__all__ = ["SeedPlan", "analyzers_done_at", "print_table", "run_corpus"]

#: The pristine tree is settled after this long without a report (basedpyright
#: publishes its semantic pass seconds after the first one).
QUIET_S = 10.0


# ----------------------------------------------------------- the measurement


def analyzers_done_at(pool: AnalyzerPool) -> tuple[float | None, str]:
    """When the analyzers last finished, and what that is measured from.

    The pool tracks work-done progress (``last_progress_end_at``, a
    monotonic time per analyzer): the gate's quiet period is meant to start
    there. Without any, the last publishDiagnostics (``last_publish_at``)
    stands in."""
    progress = max((v for v in pool.last_progress_end_at.values() if v is not None), default=None)
    published = max(pool.last_publish_at.values(), default=None)
    if progress is not None:
        # Diagnostics published after the end of the progress still count.
        done = max(progress, published) if published is not None else progress
        return done, "last progress end"
    return published, "last publishDiagnostics"


def _pids(pool: AnalyzerPool) -> dict[str, list[int]]:
    """Each analyzer's process and its descendants."""
    return {name: [pid, *_descendants(pid)] for name, pid in pool.pids().items()}


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                children = Path(f"/proc/{current}/task/{tid}/children").read_text().split()
            except OSError:
                continue
            for child in children:
                found.append(int(child))
                todo.append(int(child))
    return found


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    # utime and stime are fields 14 and 15 (1-based); fields[0] is field 3.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _hwm_mb(pid: int | str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _analyzer_cpu(pids: dict[str, list[int]]) -> float:
    return sum(_cpu_s(p) for group in pids.values() for p in group)


class _ScriptedModel:
    """The session's model; each edit gets its own replay script."""

    name = "corpus-script"

    def __init__(self) -> None:
        from rein.providers.replay import ReplayModel

        self.inner = ReplayModel([], record=False)
        #: The repair prompts the session sent, in order.
        self.repair_prompts: list[str] = []

    def play(self, turns: list[dict[str, Any]]) -> None:
        from rein.providers.replay import ReplayModel

        self.inner = ReplayModel(turns, record=False)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        from rein.harness.messages import UserMessage

        last = request.messages[-1] if request.messages else None
        if isinstance(last, UserMessage) and last.origin == "repair":
            self.repair_prompts.append(last.content)
        if not request.tools and request.options.tool_choice == "none":
            # A compaction's summary request: answered aside, so it cannot
            # take the script's next turn (the corpus writes whole files).
            from rein.providers.replay import ReplayModel

            return ReplayModel([{"text": "Summary: files were edited."}], record=False).stream(
                request
            )
        return self.inner.stream(request)


def _write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


async def _quiet(pool: AnalyzerPool, quiet_s: float, timeout_s: float) -> bool:
    """Wait until the analyzers owe nothing and published nothing for
    ``quiet_s`` (after their own idle signal)."""
    deadline = time.monotonic() + timeout_s
    await pool.wait_idle(timeout_s)
    while time.monotonic() < deadline:
        last, _basis = analyzers_done_at(pool)
        idle_for = time.monotonic() - (last or 0.0)
        if not pool.pending() and idle_for >= quiet_s:
            return True
        await anyio.sleep(min(0.25, max(0.05, quiet_s - idle_for)))
    return False


def _python_files(root: Path, package: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--", f"{package}/*.py", f"{package}/**/*.py"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return sorted({p for p in out.split("\0") if p})


@dataclass(frozen=True)
class SeedPlan:
    """What a project's edits are made of: its files, the seeding of one
    error, the configuration its session runs with and, for a language
    with a command-line checker, the truth: the lines of an edited file
    that tool finds new errors on (a blocker there is right, too)."""

    files: Callable[[Path], list[str]]
    seed: Callable[[str, str, str, int, random.Random, str], SeededEdit | None]
    kinds: tuple[str, ...] = KINDS
    config: Any = None
    truth: Callable[[SeededEdit], set[int]] | None = None


def python_plan(project: Project) -> SeedPlan:
    return SeedPlan(lambda root: _python_files(root, project.package), seed_edit)


async def _measure(
    project: Project, root: Path, edits: int, seed: int, log: Any, plan: SeedPlan | None = None
) -> dict[str, Any]:
    from rein.config import ReinConfig
    from rein.harness import Event
    from rein.harness.config import GatesConfig, TestsGateConfig
    from rein.harness.events import GateResult
    from rein.hosting.headless import HeadlessSession

    plan = plan or python_plan(project)
    model = _ScriptedModel()
    rng = random.Random(seed)
    started = time.monotonic()
    # The analyzer gate judged alone: the workspace's own interpreter has
    # no pytest (corpus.isolated_interpreter), so no tests gate.
    config = plan.config or ReinConfig(gates=GatesConfig(tests=TestsGateConfig(enabled=False)))
    session = HeadlessSession(root, model, config, watch=False)
    async with session:
        startup_s = time.monotonic() - started
        pool = session.pool
        # Warm: the whole workspace analysed first (a session defers it).
        await pool.analyse_workspace()
        settled = await _quiet(pool, QUIET_S, 900)
        settled_s = time.monotonic() - started - (QUIET_S if settled else 0.0)
        log(f"{project.name}: pool started in {startup_s:.1f} s, settled in {settled_s:.1f} s")
        pristine = await pool.snapshot(None)
        errors: dict[str, int] = {}
        for d in pristine.diagnostics:
            if d.severity == 1:
                errors[d.path] = errors.get(d.path, 0) + 1
        analysed = {p for a in pool.analyzers for p in a.diagnostics}
        files = plan.files(root)
        categories = {
            "pre-existing errors": [f for f in files if errors.get(f)],
            "no errors": [f for f in files if not errors.get(f) and f in analysed],
            "not analysed": [f for f in files if f not in analysed],
        }
        pools = {k: rng.sample(v, len(v)) for k, v in categories.items() if v}
        order = [k for k in categories if k in pools]
        planned: list[SeededEdit] = []
        n = 0
        # Round robin over the categories; a category whose files are all
        # used starts over with other kinds of error (httpx has 23 files).
        fresh = {k: list(v) for k, v in pools.items()}
        attempts = 0
        while len(planned) < edits and pools and attempts < 20 * edits:
            attempts += 1
            category = order[n % len(order)]
            n += 1
            if not pools[category]:
                pools[category] = rng.sample(fresh[category], len(fresh[category]))
            path = pools[category].pop()
            text = (root / path).read_text(encoding="utf-8")
            kind = plan.kinds[len(planned) % len(plan.kinds)]
            seeded = plan.seed(path, text, kind, n, rng, category)
            if seeded is not None:
                planned.append(seeded)

        current: list[GateResult] = []
        stamps: dict[str, float] = {}

        def on_event(event: Event) -> None:
            if isinstance(event, GateResult) and event.gate == "analyzer":
                done, _basis = analyzers_done_at(pool)
                stamps[f"verdict{len(current)}"] = time.monotonic()
                if done is not None:
                    stamps[f"done{len(current)}"] = done
                current.append(event)

        def on_mutation(mutation: Any) -> None:
            stamps.setdefault("write", time.monotonic())

        session.subscribe(on_event)
        session.mutations.subscribe(on_mutation)
        pids = _pids(pool)
        cpu_analyzers0 = _analyzer_cpu(pids)
        cpu_rein0 = time.process_time()
        results: list[Verdict] = []
        for i, seeded in enumerate(planned):
            current.clear()
            stamps.clear()
            # Each edit is a task of its own, as a person starting a new
            # conversation would give it (the session's validation state stays).
            session.agent.reset()
            # The errors the file has before the edit (a file a large
            # workspace's pool had not opened at start is classified by
            # them; the gate closes what it opened once the edit is undone).
            await pool.ensure_open([seeded.path], importers=False)
            await _quiet(pool, 0.5, 120)
            before = await pool.snapshot([seeded.path])
            prior_errors = sum(d.severity == 1 for d in before.diagnostics)
            truth = plan.truth(seeded) if plan.truth else set()
            model.play(
                [
                    _write(seeded.path, seeded.edited),
                    {"text": "done"},
                    _write(seeded.path, seeded.original),
                    {"text": "repaired"},
                ]
            )
            result = await session.prompt(f"edit {seeded.path}")
            verdict = Verdict(
                seeded, status=result.status, verdicts=len(current), prior_errors=prior_errors
            )
            if plan.truth:
                verdict.confirmed = any(seeded.first <= line < seeded.last for line in truth)
            if (root / seeded.path).read_text(encoding="utf-8") != seeded.original:
                # The gate let the error through. Did the analyzers report it
                # after the verdict (a verdict taken too early)? Then put the
                # file back (and let that verdict count too).
                await _quiet(pool, 1.0, 120)
                later = await pool.snapshot([seeded.path])
                verdict.late = any(
                    seeded.first <= d.line < seeded.last and d.severity == 1
                    for d in later.diagnostics
                )
                model.play([_write(seeded.path, seeded.original), {"text": "reverted"}])
                await session.prompt(f"revert {seeded.path}")
            for index, event in enumerate(current):
                # The gate names at most a few blockers; its detail says how many.
                counted = re.search(r"(\d+) blocking", event.detail)
                if counted and int(counted.group(1)) > len(event.blockers):
                    verdict.cut += 1
                verdict.stale += event.stale
                seen: set[tuple[Any, ...]] = set()
                for b in event.blockers:
                    key = (b.path, b.line, b.character, b.message)
                    on_seeded = (
                        index == 0
                        and b.path == seeded.path
                        and b.line is not None
                        and seeded.first <= b.line < seeded.last
                    )
                    # An error the command-line tool finds too (a syntax
                    # error's sequel) is right, though not the seeded one.
                    right = (
                        index == 0 and b.path == seeded.path and b.line in truth and not on_seeded
                    )
                    if (b.path, b.line, b.character) in {k[:3] for k in seen}:
                        verdict.duplicates += 1
                    seen.add(key)
                    if right:
                        verdict.right_elsewhere += 1
                    elif on_seeded:
                        verdict.seeded_blockers += 1
                        verdict.caught = True
                    else:
                        verdict.other_blockers.append(
                            {
                                "verdict": index,
                                "path": b.path,
                                "line": b.line,
                                "code": b.code,
                                "source": b.source,
                                "message": b.message[:160],
                            }
                        )
            if "verdict0" in stamps and "done0" in stamps:
                verdict.delay_ms = (stamps["verdict0"] - stamps["done0"]) * 1000
                if "write" in stamps:
                    verdict.analyzer_ms = (stamps["done0"] - stamps["write"]) * 1000
            await _quiet(pool, 0.5, 120)
            results.append(verdict)
            log(
                f"{project.name} {i + 1}/{len(planned)} {seeded.kind} {seeded.path} "
                f"({verdict.category}): caught={verdict.caught} "
                f"false={len(verdict.other_blockers)} delay={verdict.delay_ms}"
            )
        rein_cpu = time.process_time() - cpu_rein0
        pids = _pids(pool)
        analyzer_cpu = _analyzer_cpu(pids) - cpu_analyzers0
        analyzer_rss = {
            name: round(sum(_hwm_mb(p) for p in group), 1) for name, group in pids.items()
        }
        _done, basis = analyzers_done_at(pool)
        analyzers = "+".join(pool.names())
    return summarize(
        project,
        results,
        {
            "analyzers": analyzers,
            "files": len(files),
            "pool_files_opened": len(pool.files),
            "files_by_category": {k: len(v) for k, v in categories.items()},
            "pool_start_s": round(startup_s, 1),
            "baseline_settled_s": round(settled_s, 1),
            "baseline_settled": settled,
            "pristine_errors": sum(errors.values()),
            "delay_basis": basis,
            "rein_cpu_s": round(rein_cpu, 2),
            "analyzer_cpu_s": round(analyzer_cpu, 2),
            "rein_rss_peak_mb": round(_hwm_mb("self"), 1),
            "analyzer_rss_peak_mb": analyzer_rss,
        },
    )


def run_corpus(
    projects: Iterable[Project],
    *,
    edits: int | None = None,
    seed: int = 14,
    log: Any = None,
) -> list[dict[str, Any]]:
    """Measure every project; ``edits`` overrides each project's count."""
    say = log or (lambda message: print(message, file=sys.stderr, flush=True))
    rows: list[dict[str, Any]] = []
    for project in projects:
        with fresh_workspace(project, "rein-corpus") as root:
            count = edits if edits is not None else project.edits
            rows.append(anyio.run(_measure, project, root, count, seed, say))
    return rows


# ----------------------------------------------------------------- the command


def _parse_projects(spec: str | None) -> list[Project]:
    if not spec:
        return list(FULL_CORPUS)
    known = {p.name: p for p in (*FULL_CORPUS, *SMALL_CORPUS)}
    out: list[Project] = []
    for item in spec.split(","):
        name, _, version = item.strip().partition("==")
        base = known.get(name)
        if base is None and not version:
            raise SystemExit(f"unknown corpus project {name!r}: give NAME==VERSION")
        out.append(
            Project(
                name,
                version or base.version,  # type: ignore[union-attr]
                base.package if base else name,
                base.edits if base else 10,
            )
        )
    return out
