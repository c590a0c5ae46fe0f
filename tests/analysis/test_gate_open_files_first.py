"""A write in open-files mode (past ``workspaceMaxFiles``) asks the written
file first, as a cold write in workspace mode does
(:mod:`rein.analysis.open_files_first`): its importers are opened, not
asked, before the write; a verdict that blocks on the file's own new errors
never asks them; one that does not asks their baseline with the file shown
as it was, and without it is never a pass."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence

from rein.analysis.gate import AnalyzerGate
from rein.disk.importers import ImportIndex
from rein.harness.gating.gates import GateContext, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from tests.analysis.test_gate_cold_owed import answers_late
from tests.fakes.diagnostics import ColdFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace
from tests.harness.test_gates_truth import diag

A = "def f() -> int:\n    return 1\n"
FILES = {"pkg/a.py": A, "pkg/b.py": "from pkg.a import f\n\nx: int = f()\n", "pkg/d.py": "y = 1\n"}
OLD_B = diag("pkg/b.py", 0, "an error b.py had before the run", code="O")
OWN = diag("pkg/a.py", 2, "a.py's own new error", code="N")
BROKEN_B = diag("pkg/b.py", 2, '"str" is not assignable to "int"', code="R")
CTX_PATHS = frozenset({"pkg/a.py"})


class _OpenFilesOnly(ColdFakeDiagnostics):
    """Only the files opened are analysed (opening a file opens its
    importers), and the run-start analysis is done."""

    def analyses_open_files_only(self) -> bool:
        return True

    async def importer_closure(self, paths: Sequence[str]) -> Collection[str] | None:
        """The real import scan's of the workspace's files now."""
        files = dict(self.texts_now())
        return ImportIndex(sorted(files), files.get).closure(paths)


async def _world() -> tuple[TrackedWorkspace, _OpenFilesOnly, AnalyzerGate]:
    workspace = TrackedWorkspace(FakeWorkspace(dict(FILES)), MutationLog())
    source = _OpenFilesOnly([OLD_B])
    source.file_by_file = True
    source.workspace_analysed.set()
    source.importers = {"pkg/a.py": ["pkg/b.py"]}
    source.texts_now = lambda: workspace.inner.files  # type: ignore[attr-defined]
    gate = AnalyzerGate(source, settle_timeout_s=0.5)
    gates = GatePipeline([gate])

    async def before_change(paths: tuple[str, ...]) -> None:
        await gates.before_change(paths, workspace)

    workspace.before_change(before_change)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    source.log.clear()
    return workspace, source, gate


def _asked_b(log: list[str]) -> list[str]:
    return [e for e in log if e.startswith(("snapshot ", "snapshot_files")) and "pkg/b.py" in e]


async def test_a_write_with_its_own_error_blocks_without_asking_its_importers() -> None:
    """Old: b.py was asked (and waited for) before the write and again at
    the verdict: on sympy 22.6 s and 40.9 s for printing/latex.py's 30."""
    workspace, source, gate = await _world()
    await workspace.write_text("pkg/a.py", A + "z: int = 'x'\n")
    assert source.log == ["ensure_open pkg/a.py", "snapshot pkg/a.py"]
    assert "pkg/b.py" in source.opened  # opened with it, not asked
    source.diagnostics = [OLD_B, OWN]
    outcome = await asyncio.wait_for(gate.check(GateContext(1, CTX_PATHS, workspace)), 5)
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/a.py", 2)], outcome.detail
    assert "1 importer(s) of them not checked yet" in outcome.detail
    assert _asked_b(source.log) == [], source.log
    assert "wait_idle" not in source.log


async def test_without_its_own_error_its_importers_are_judged_against_their_state_before() -> None:
    """b.py's baseline is asked at the verdict with a.py shown as it was:
    its old error does not block, the one the write caused does."""
    workspace, source, gate = await _world()
    await workspace.write_text("pkg/a.py", A.replace("int", "str"))
    source.diagnostics = [OLD_B, BROKEN_B]
    source.counterfactual = [OLD_B]
    outcome = await asyncio.wait_for(gate.check(GateContext(1, CTX_PATHS, workspace)), 5)
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/b.py", 2)], outcome.detail
    assert "snapshot_files_with pkg/a.py -> pkg/b.py" in source.log


async def test_an_importer_whose_state_before_is_not_had_is_never_passed() -> None:
    """The owed ask of b.py's baseline comes back stale: the verdict is
    unverified, naming b.py, not a pass (its error may be the write's)."""
    workspace, source, gate = await _world()
    await workspace.write_text("pkg/a.py", A.replace("return 1", "return 2"))
    answers_late(source)
    source.counterfactual = [OLD_B]
    outcome = await asyncio.wait_for(gate.check(GateContext(1, CTX_PATHS, workspace)), 5)
    assert outcome.blockers == []
    assert outcome.unverified is not None and "pkg/b.py" in outcome.unverified, outcome.detail


def _counterfactual_asks(log: list[str]) -> list[str]:
    return [e for e in log if e.startswith("snapshot_with")]


async def _sed_broke_b(workspace: TrackedWorkspace, source: _OpenFilesOnly) -> GateContext:
    """A command (sed) renamed a.py's ``f`` on disk: b.py breaks."""
    await asyncio.wait_for(workspace.before_command(), 5)
    workspace.inner.files["pkg/a.py"] = A.replace("def f", "def g")  # type: ignore[attr-defined]
    source.diagnostics = [OLD_B, BROKEN_B]
    source.counterfactual = [OLD_B]
    return GateContext(1, CTX_PATHS, workspace)


async def test_a_command_is_judged_file_by_file_after_the_run_start_snapshot() -> None:
    """Old: the run-start snapshot was taken (as in most sessions, which
    run a command after it), so the verdict took the whole-snapshot path:
    a.py and b.py asked as they were, then as they are, then b.py's new
    errors asked about as they were again and confirmed as they are (on
    sympy, 51-57 s for ``is_random`` against the command line's 15-18).
    Now as a cold command's: a.py asked as it was, a.py and b.py as they
    are, then b.py (an error) as it was; no counterfactual question."""
    workspace, source, gate = await _world()
    ctx = await _sed_broke_b(workspace, source)
    outcome = await asyncio.wait_for(gate.check(ctx), 5)
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/b.py", 2)], outcome.detail
    assert "read_texts" in source.log
    assert [e for e in source.log if e.startswith("snapshot")] == [
        "snapshot_files_with pkg/a.py -> pkg/a.py",
        "snapshot pkg/a.py pkg/b.py",
        "snapshot_files_with pkg/a.py -> pkg/b.py",
    ]
    assert _counterfactual_asks(source.log) == []


async def test_a_commands_changes_stay_file_by_file_until_validated() -> None:
    """The repair verdict after the command is judged file by file too (no
    wait for the analyzers' quiet, no whole snapshot); once validated, a
    write that breaks b.py is judged as before: its own errors first, then
    the whole snapshot and the counterfactual question."""
    workspace, source, gate = await _world()
    ctx = await _sed_broke_b(workspace, source)
    await asyncio.wait_for(gate.check(ctx), 5)
    # The model puts the name back with a tool write.
    await workspace.write_text("pkg/a.py", A)
    source.diagnostics = [OLD_B]
    source.log.clear()
    again = await asyncio.wait_for(gate.check(GateContext(2, CTX_PATHS, workspace)), 5)
    assert (again.blockers, again.unverified) == ([], None), again.detail
    assert "snapshot *" not in source.log and "wait_idle" not in source.log, source.log
    gate.on_validated(2)
    await workspace.write_text("pkg/a.py", A.replace("int", "str"))
    source.diagnostics = [OLD_B, BROKEN_B]
    source.log.clear()
    later = await asyncio.wait_for(gate.check(GateContext(3, CTX_PATHS, workspace)), 5)
    assert [(b.path, b.line) for b in later.blockers] == [("pkg/b.py", 2)], later.detail
    assert "snapshot *" in source.log, source.log
    assert _counterfactual_asks(source.log) == ["snapshot_with pkg/a.py -> pkg/b.py"]


#: An error b.py has without the run's changes too, which an as-was answer
#: asked before the as-is question left out (basedpyright's order of
#: inference: on sympy 16 of a command edit's 36 importer errors).
ORDER_B = diag("pkg/b.py", 2, "an error of the order of inference", code="X")


async def test_a_command_that_changes_nothing_keeps_a_writes_verdict_where_it_was() -> None:
    """review33: a.py written (b.py owed), then ``pytest`` (nothing
    changed): b.py is asked as it was before the command, without the order
    error. Old (the first per_file): the command alone moved the verdict to
    the file-by-file path, which never asked b.py's error again: it blocked.
    Now the verdict is the whole snapshot's, and its counterfactual drops it."""
    workspace, source, gate = await _world()
    await workspace.write_text("pkg/a.py", A.replace("return 1", "return 2"))
    source.counterfactual = [OLD_B]
    await asyncio.wait_for(workspace.before_command(), 5)
    source.diagnostics = [OLD_B, ORDER_B]
    source.counterfactual = [OLD_B, ORDER_B]
    outcome = await asyncio.wait_for(gate.check(GateContext(1, CTX_PATHS, workspace)), 5)
    assert (outcome.blockers, outcome.unverified) == ([], None), outcome.detail
    assert "snapshot *" in source.log


async def test_an_importer_baselined_before_a_commands_verdict_is_asked_again_after_it() -> None:
    """review33: a.py written (b.py owed, asked as it was before the
    command), then a command changes d.py: the verdict is file by file, and
    b.py's error new to its baseline is asked about as it was once more,
    after the as-is question (the counterfactual, file by file): the order
    error is there then too, and does not block."""
    workspace, source, gate = await _world()
    await workspace.write_text("pkg/a.py", A.replace("return 1", "return 2"))
    source.counterfactual = [OLD_B]
    await asyncio.wait_for(workspace.before_command(), 5)
    assert gate.late["pkg/b.py"] == (OLD_B,)
    workspace.inner.files["pkg/d.py"] = "y = 2\n"  # type: ignore[attr-defined]
    source.diagnostics = [OLD_B, ORDER_B]
    source.counterfactual = [OLD_B, ORDER_B]
    source.log.clear()
    ctx = GateContext(1, frozenset({"pkg/a.py", "pkg/d.py"}), workspace)
    outcome = await asyncio.wait_for(gate.check(ctx), 5)
    assert (outcome.blockers, outcome.unverified) == ([], None), outcome.detail
    assert "snapshot *" not in source.log  # file by file
    assert _counterfactual_asks(source.log) == ["snapshot_with pkg/a.py pkg/d.py -> pkg/b.py"]
    assert "1 error(s) in unchanged files are there without the run's changes too" in (
        outcome.detail
    )
