"""A cold session's first change does not wait for the whole-workspace
analysis (issue 32 item 7): the changed file and its importers are
baselined and judged file by file, with the real ruff and basedpyright,
while basedpyright still analyses the rest of the package; once the
whole-workspace snapshot is taken it serves the next verdict, without
taking the change's breakage past the importers (it was taken after the
change) for pre-existing. A command's change in the same run (seen after
it ran) is judged file by file too, from the texts read before it ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.analysis.gate import AnalyzerGate
from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.gating.gate_types import GateContext
from rein.harness.ports import Mutation, Writes

pytestmark = pytest.mark.e2e

#: Modules nothing changed imports: enough that basedpyright's analysis of
#: the whole package takes seconds, far longer than two files' checks.
FILLERS = 30

UTIL = 'OLD: int = "pre-existing"\n\n\ndef helper(a: int) -> int:\n    return a + 1\n'
APP = "from pkg.util import helper\n\nprint(helper(1))\n"
#: Imports the name app.py brings from util.py: neither changed nor a direct
#: importer of util.py, so not baselined file by file.
USES = "from pkg.app import helper\n\nprint(helper(2))\n"
#: What a command (sed) renames ``tool`` in; caller.py imports it.
EXTRA = "def tool(x: int) -> int:\n    return x\n"
CALLER = "from pkg.extra import tool\n\nprint(tool(1))\n"


def filler(i: int) -> str:
    lines = ["from typing import TypeVar, Generic", "", 'T = TypeVar("T")', f"N{i}: str = {i}", ""]
    for j in range(12):
        lines += [
            f"class Box{j}(Generic[T]):",
            "    def __init__(self, item: T) -> None:",
            "        self.item = item",
            "",
            f"    def map{j}(self, f: 'object') -> 'Box{j}[T]':",
            f"        return Box{j}(self.item)",
            "",
            f"def make{j}(x: int) -> Box{j}[int]:",
            f"    return Box{j}(x).map{j}(str)",
            "",
        ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text(UTIL)
    (pkg / "app.py").write_text(APP)
    (pkg / "uses.py").write_text(USES)
    (pkg / "extra.py").write_text(EXTRA)
    (pkg / "caller.py").write_text(CALLER)
    for i in range(FILLERS):
        (pkg / f"filler_{i}.py").write_text(filler(i))
    return tmp_path


def lines_of(outcome: object) -> list[tuple[str, int]]:
    return sorted((b.path, b.line) for b in outcome.blockers)  # type: ignore[attr-defined]


async def test_the_first_change_is_judged_file_by_file_before_the_workspace_analysis(
    package: Path,
) -> None:
    coordinator: DiagnosticsCoordinator
    pool = AnalyzerPool(
        package,
        on_diagnostics_changed=lambda paths: coordinator.notify_diagnostics_changed(paths),
    )
    coordinator = DiagnosticsCoordinator(pool, max_wait_ms=60_000)
    gate = AnalyzerGate(coordinator, settle_timeout_s=60)
    workspace = DiskWorkspace(package)
    generation = 0

    async def change(path: str, text: str, *, command: bool = False) -> None:
        nonlocal generation
        # A command's hook names no file: it runs before anyone knows which.
        # A tool's write names it as TrackedWorkspace.write_text does: its
        # importers are baselined by the verdict, util.py shown as it was.
        await gate.before_change(() if command else Writes((path,)), workspace)
        (package / path).write_text(text)
        generation += 1
        mutation = Mutation(generation, (path,), "external" if command else "agent")
        pool.on_mutation(mutation)
        coordinator.notify_mutation(mutation)

    async with pool:
        await gate.on_run_start(0)
        # The run's first change: helper renamed, so app.py's import breaks.
        await change("pkg/util.py", UTIL.replace("def helper", "def helper_renamed"))
        assert "pkg/app.py" not in gate.late  # util.py's importers: not asked yet
        # Then a command renames tool: caller.py's import breaks.
        await change("pkg/extra.py", EXTRA.replace("def tool", "def tool_renamed"), command=True)
        ctx = GateContext(generation, frozenset(["pkg/util.py", "pkg/extra.py"]), workspace)
        # Asked before the command (it might have taken util.py away), with
        # util.py shown as it was.
        assert "pkg/app.py" in gate.late
        first = await gate.check(ctx)
        # Judged before the whole-workspace snapshot was taken, and says so.
        assert gate.baseline is None
        assert "partial: judged on the changed files and their importers" in first.detail
        # Blocked on the importers' new errors, not on util.py's old one.
        assert lines_of(first) == [("pkg/app.py", 0), ("pkg/caller.py", 0)], first.detail
        assert "helper" in first.blockers[0].message
        assert first.unverified is None and not first.stale

        # The whole-workspace snapshot, once taken, serves the next verdict:
        # the fillers were never opened for the change, their old errors are
        # known from it only, and do not block. It was taken with the change
        # in place: uses.py's new error is in it, and still blocks (its
        # baseline asked for with util.py shown as it was).
        await gate.baseline_ready()
        assert gate.baseline is not None
        assert {f"pkg/filler_{i}.py" for i in range(FILLERS)} <= {
            d.path for d in gate.baseline.diagnostics
        }
        second = await gate.check(ctx)
        assert any(d.path == "pkg/uses.py" for d in gate.baseline.diagnostics)
        assert "partial" not in second.detail
        assert lines_of(second) == [
            ("pkg/app.py", 0),
            ("pkg/caller.py", 0),
            ("pkg/uses.py", 0),
        ], second.detail
