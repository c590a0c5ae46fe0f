"""After a file-set change in a workspace analysed as a whole, the verdict
waits for the changed modules' importers' fresh answers (issue 32 item 1):
the analyzer gate over the analyzer pool, with basedpyright's workspace
mode in process (:class:`~tests.fakes.workspace_analyzer.WorkspaceModeServer`:
it republishes nothing after ``workspace/didChangeWatchedFiles`` until the
test releases it, and answers a pull by checking the file then).

flask's ``delete_file`` of ``sansio/app.py`` under load (docs/performance.md)
blocked 1 of 7 lines, neither stale nor partial: the open importers were
owed a republish for the grace period only (``ENVIRONMENT_GRACE_S``), and
basedpyright had not re-checked them when it passed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from rein.analysis.gate import AnalyzerGate
from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.gating.gate_types import GateOutcome
from rein.harness.gating.gates import GateContext
from rein.harness.ports import Mutation
from tests.fakes.workspace_analyzer import WorkspaceModeServer, pool_over_workspace_mode

UTIL = "def double(x):\n    return 2 * x\n"
USER = "import os\nfrom pkg.util import double\n"
#: A bound on each wait (the waits end on answers, never on time).
BOUND_S = 30.0


@pytest.fixture(autouse=True)
def _no_pull_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake's analysis ends with its answer: the hold after a pull to
    a publishing server (basedpyright's workspace analysis goes on) is
    not waited for here (1 s per verdict of the suite's time)."""
    monkeypatch.setattr("rein.disk.pull_answers.PULL_GRACE_S", 0.0)


async def _session(
    root: Path, files: dict[str, str], settle_s: float = BOUND_S
) -> tuple[AnalyzerPool, WorkspaceModeServer, AnalyzerGate]:
    (root / "pkg").mkdir()
    for path, text in files.items():
        (root / path).write_text(text)
    pool, _, server = await pool_over_workspace_mode(root, int(settle_s * 1000))
    assert await pool.wait_idle(BOUND_S)
    gate = AnalyzerGate(pool, settle_timeout_s=settle_s)
    await gate.on_run_start(0)
    await asyncio.wait_for(gate.baseline_ready(), BOUND_S)
    return pool, server, gate


async def _verdict(
    pool: AnalyzerPool, gate: AnalyzerGate, paths: tuple[str, ...], apply: Callable[[], object]
) -> GateOutcome:
    workspace = DiskWorkspace(pool.root)
    await gate.before_change(paths, workspace)
    apply()
    pool.on_mutation(Mutation(1, paths, "tool"))
    ctx = GateContext(1, frozenset(paths), workspace)
    return await asyncio.wait_for(gate.check(ctx), BOUND_S)


def _blocked(outcome: GateOutcome) -> list[tuple[str, int]]:
    return sorted((b.path, b.line) for b in outcome.blockers)


IMPORTERS = {
    "pkg/__init__.py": "",
    "pkg/util.py": UTIL,
    "pkg/a.py": USER,
    "pkg/b.py": USER,
    "pkg/c.py": USER,
    "pkg/other.py": "import os\n",
}


async def test_a_deleted_modules_importers_all_block(tmp_path: Path) -> None:
    # Old: the importers were owed a republish for the grace period only
    # (passed at once here); the fake had republished nothing, so the
    # verdict read their answers from before the delete: passed.
    pool, server, gate = await _session(tmp_path, IMPORTERS)
    outcome = await _verdict(
        pool, gate, ("pkg/util.py",), lambda: (tmp_path / "pkg/util.py").unlink()
    )
    assert server.watched == [(tmp_path / "pkg/util.py").as_uri()]
    assert _blocked(outcome) == [("pkg/a.py", 1), ("pkg/b.py", 1), ("pkg/c.py", 1)]
    # Only the importers were asked: not the unrelated file.
    assert (tmp_path / "pkg/other.py").as_uri() not in server.pulls


async def test_a_renamed_modules_importers_all_block(tmp_path: Path) -> None:
    pool, _, gate = await _session(tmp_path, IMPORTERS)
    paths = ("pkg/util.py", "pkg/helpers.py")
    outcome = await _verdict(
        pool,
        gate,
        paths,
        lambda: (tmp_path / "pkg/util.py").rename(tmp_path / "pkg/helpers.py"),
    )
    assert _blocked(outcome) == [("pkg/a.py", 1), ("pkg/b.py", 1), ("pkg/c.py", 1)]


async def test_a_created_modules_importers_are_asked_afresh(tmp_path: Path) -> None:
    # A created module satisfies an import that failed before: the
    # importer's error (from before the run) is gone in its fresh answer.
    # Old: the snapshot still held the answer from before the file existed.
    pool, server, gate = await _session(
        tmp_path, {"pkg/__init__.py": "", "pkg/a.py": USER, "pkg/other.py": "import os\n"}
    )
    before = await pool.snapshot(["pkg/a.py"])
    assert [d.line for d in before.diagnostics] == [1]
    outcome = await _verdict(
        pool, gate, ("pkg/util.py",), lambda: (tmp_path / "pkg/util.py").write_text(UTIL)
    )
    assert not outcome.blockers
    after = await pool.snapshot(["pkg/a.py"])
    assert after.diagnostics == () and not after.stale
    assert server.watched == [(tmp_path / "pkg/util.py").as_uri()]


async def test_an_importer_not_answered_within_the_settle_bound_leaves_the_verdict_stale(
    tmp_path: Path,
) -> None:
    # The importers were all clean before: a verdict on the answers from
    # before the delete would pass. One never answers; past the settle
    # bound (short here) the verdict says it may be stale, never "passed"
    # on b.py's answer from before the delete.
    pool, server, gate = await _session(tmp_path, IMPORTERS, settle_s=0.5)
    server.silent.add((tmp_path / "pkg/b.py").as_uri())
    outcome = await _verdict(
        pool, gate, ("pkg/util.py",), lambda: (tmp_path / "pkg/util.py").unlink()
    )
    assert _blocked(outcome) == [("pkg/a.py", 1), ("pkg/c.py", 1)]
    assert outcome.stale
    assert "may be stale" in outcome.detail


async def test_a_module_the_scan_cannot_place_has_every_file_asked(tmp_path: Path) -> None:
    # A stub under typings/ is imported by a name the import scan does not
    # give it: its importers are not known, so every file is asked (the
    # wider path), not only waited for through the grace period.
    pool, server, gate = await _session(tmp_path, IMPORTERS)
    (tmp_path / "typings").mkdir()
    start = len(server.pulls)
    outcome = await _verdict(
        pool,
        gate,
        ("typings/util.pyi",),
        lambda: (tmp_path / "typings/util.pyi").write_text("def double(x: int) -> int: ...\n"),
    )
    assert not outcome.blockers
    assert {(tmp_path / p).as_uri() for p in IMPORTERS} <= set(server.pulls[start:])


async def test_a_module_made_between_runs_and_deleted_by_the_run_is_a_change(
    tmp_path: Path,
) -> None:
    """review28: the pool noted which changed paths were no file at their
    first change since the last validation, so a module the person made
    between runs (the watcher) was "never a file" when the next run deleted
    it: with the run's other change undone, the verdict passed as undone,
    its importer broken. A run that starts afresh starts that count."""
    (tmp_path / "pkg").mkdir()
    for path, text in {"pkg/__init__.py": "", "pkg/other.py": "import os\n"}.items():
        (tmp_path / path).write_text(text)
    pool, _, _server = await pool_over_workspace_mode(tmp_path, int(BOUND_S * 1000))
    assert await pool.wait_idle(BOUND_S)
    gate = AnalyzerGate(pool, settle_timeout_s=BOUND_S)
    (tmp_path / "pkg/util.py").write_text(UTIL)  # the person, before the run
    (tmp_path / "pkg/a.py").write_text(USER)
    pool.on_mutation(Mutation(1, ("pkg/util.py", "pkg/a.py"), "external"))
    assert await pool.wait_idle(BOUND_S)
    await gate.on_run_start(1)
    await asyncio.wait_for(gate.baseline_ready(), BOUND_S)
    workspace = DiskWorkspace(pool.root)
    edits = [
        (("pkg/other.py",), lambda: (tmp_path / "pkg/other.py").write_text("import sys\n")),
        (("pkg/util.py",), lambda: (tmp_path / "pkg/util.py").unlink()),
        (("pkg/other.py",), lambda: (tmp_path / "pkg/other.py").write_text("import os\n")),
    ]
    for generation, (paths, apply) in enumerate(edits, start=2):
        await gate.before_change(paths, workspace)
        apply()
        pool.on_mutation(Mutation(generation, paths, "tool"))
    ctx = GateContext(4, frozenset({"pkg/other.py", "pkg/util.py"}), workspace)
    outcome = await asyncio.wait_for(gate.check(ctx), BOUND_S)
    assert _blocked(outcome) == [("pkg/a.py", 1)], outcome.detail
