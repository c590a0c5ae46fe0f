"""A cold command's edit is judged with one check of its importers: the
analyzer gate over the analyzer pool, open files only, with basedpyright's
shape in process (:class:`~tests.fakes.pull_analyzer.FileByFileServer`: it
checks a file when it is pulled, against the texts it was shown).

Issue 32 item 7: sympy's command edits took 7-9x the command line's time.
A command's baseline asked the changed file and every importer with the
changed file shown as it was, and the verdict asked them all again as they
are: every importer checked twice. Now the baseline asks the changed file
only; the verdict asks the changed file and the importers as they are, and
then, with the changed file shown as it was, only the importers in which it
found errors ("was this there without the run?"). An importer without
errors is pulled once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rein.analysis.gate import AnalyzerGate
from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.gating.gates import GateContext
from rein.harness.ports import Mutation
from tests.fakes.pull_analyzer import FileByFileServer, pool_over_file_by_file

BEFORE = "def is_random(x):\n    return True\n\n\ndef other(x):\n    return x\n"
AFTER = BEFORE.replace("is_random", "is_random_x")
#: Broken by the command (line 0).
USER = "from pkg.rv import is_random\n"
#: Broken before the run (line 1), and not by the command (line 0).
OLD = "from pkg.rv import other\nfrom pkg.rv import never_was\n"
#: Neither: an importer the command leaves alone.
CLEAN = "from pkg.rv import other\n"
BOUND_S = 30.0


async def _cold_session(root: Path) -> tuple[AnalyzerPool, FileByFileServer, AnalyzerGate]:
    """``pkg/rv.py`` and its three importers, open in basedpyright over the
    fake; the analyzer stays busy (the workspace analysis of a cold start:
    a progress open), so the run-start snapshot is not taken and the gate
    judges file by file."""
    (root / "pkg").mkdir()
    for name, text in {
        "__init__": "",
        "rv": BEFORE,
        "user": USER,
        "old": OLD,
        "clean": CLEAN,
    }.items():
        (root / f"pkg/{name}.py").write_text(text)
    pool, analyzer, server = await pool_over_file_by_file(root)
    assert await pool.wait_idle(BOUND_S)
    analyzer.progress_begin("the workspace analysis")  # never ends here
    return pool, server, AnalyzerGate(pool, settle_timeout_s=BOUND_S)


def _pulled(server: FileByFileServer, root: Path, path: str, since: int) -> int:
    return server.pulls[since:].count((root / path).as_uri())


async def test_a_cold_commands_unaffected_importer_is_checked_once(tmp_path: Path) -> None:
    # Old: clean.py (and every importer) was pulled with rv.py shown as it
    # was, at the command's baseline, and again as it is, at the verdict
    # (3 pulls: the baseline's, its re-pull once the texts were shown
    # again, the verdict's).
    pool, server, gate = await _cold_session(tmp_path)
    workspace = DiskWorkspace(pool.root)
    await gate.on_run_start(0)
    assert gate.baselines.cold() is pool  # judged file by file
    await asyncio.wait_for(gate.before_change((), workspace), BOUND_S)  # `sed -i` is to run
    start = len(server.pulls)
    (pool.root / "pkg/rv.py").write_text(AFTER)
    change = Mutation(1, ("pkg/rv.py",), "external")
    pool.on_mutation(change)
    gate.on_change(change)  # the command's baseline, while the model takes its turn
    outcome = await asyncio.wait_for(
        gate.check(GateContext(1, frozenset({"pkg/rv.py"}), workspace)), BOUND_S
    )
    blocked = [(b.path, b.line) for b in outcome.blockers]
    # Exactly what the command broke; old.py's error was there before it.
    assert blocked == [("pkg/user.py", 0)], outcome.detail
    assert _pulled(server, pool.root, "pkg/clean.py", start) == 1
    # The importers with errors were asked as they were too.
    assert _pulled(server, pool.root, "pkg/old.py", start) > 1
    assert gate.late.keys() == {"pkg/old.py", "pkg/user.py"}
    assert "pkg/clean.py" in gate.baselines.owed.paths  # asked as it was if it ever has errors
    assert "3 importer(s) of the changed files checked" in outcome.detail  # clean.py too
    # A resumed session keeps it a command's (judged with the changed files).
    resumed = AnalyzerGate(pool, settle_timeout_s=BOUND_S)
    resumed.import_state(gate.export_state())
    assert resumed.baselines.owed.commanded == {"pkg/clean.py"}


async def test_an_importer_left_unasked_is_judged_against_the_state_before_the_run(
    tmp_path: Path,
) -> None:
    # clean.py had no error at the first verdict: its baseline was not
    # asked. A second command breaks it; the verdict then asks it with
    # rv.py shown as it was before the run (not before the second command),
    # so its error blocks, as does old.py's new one; old.py's old one not.
    pool, server, gate = await _cold_session(tmp_path)
    workspace = DiskWorkspace(pool.root)
    await gate.on_run_start(0)
    for generation, text in enumerate((AFTER, AFTER.replace("def other", "def other_x")), 1):
        await asyncio.wait_for(gate.before_change((), workspace), BOUND_S)
        (pool.root / "pkg/rv.py").write_text(text)
        change = Mutation(generation, ("pkg/rv.py",), "external")
        pool.on_mutation(change)
        gate.on_change(change)
        outcome = await asyncio.wait_for(
            gate.check(GateContext(generation, frozenset({"pkg/rv.py"}), workspace)), BOUND_S
        )
    blocked = [(b.path, b.line) for b in outcome.blockers]
    assert blocked == [("pkg/clean.py", 0), ("pkg/old.py", 0), ("pkg/user.py", 0)], blocked
    assert outcome.unverified is None, outcome.unverified
    assert "pkg/clean.py" not in gate.baselines.owed.paths


async def test_an_unasked_importer_broken_by_a_later_command_that_deletes_blocks(
    tmp_path: Path,
) -> None:
    # clean.py had no error at the first verdict: it stays owed. A second
    # command deletes rv.py (a changed file) and so breaks clean.py. Its
    # baseline is asked before that command, while rv.py can still be
    # shown as it was: its error blocks (as on main). Old: a command's
    # owed importers were not asked before a later command, and once rv.py
    # was gone clean.py's was "not had": unverified, no blocker, never a
    # repair.
    pool, server, gate = await _cold_session(tmp_path)
    workspace = DiskWorkspace(pool.root)
    await gate.on_run_start(0)
    root = pool.root

    def rename() -> None:
        (root / "pkg/rv.py").write_text(AFTER)

    def delete() -> None:
        (root / "pkg/rv.py").unlink()
        (root / "pkg/user.py").write_text("x = 1\n")

    steps = ((rename, {"pkg/rv.py"}), (delete, {"pkg/rv.py", "pkg/user.py"}))
    for generation, (edit, paths) in enumerate(steps, 1):
        await asyncio.wait_for(gate.before_change((), workspace), BOUND_S)
        edit()
        change = Mutation(generation, tuple(sorted(paths)), "external")
        pool.on_mutation(change)
        gate.on_change(change)
        outcome = await asyncio.wait_for(
            gate.check(GateContext(generation, frozenset(paths), workspace)), BOUND_S
        )
        if generation == 1:
            assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/user.py", 0)]
            assert "pkg/clean.py" in gate.baselines.owed.paths
    blocked = sorted((b.path, b.line) for b in outcome.blockers)
    # old.py's line 1 was broken before the run; its line 0 and clean.py's
    # by the deletion.
    assert blocked == [("pkg/clean.py", 0), ("pkg/old.py", 0)], (blocked, outcome.detail)
    assert outcome.unverified is None, outcome.unverified
