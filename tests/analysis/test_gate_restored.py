"""Issue 32 item 7: a verdict on changes that were all undone (a repair
that reverts, a deleted module written back, a rename moved back) does not
ask the analyzers again: the tree is the one the baselines were taken of.
Anything short of that is asked as before."""

from __future__ import annotations

import anyio

from rein.analysis.baselines import FileBaseline
from rein.analysis.gate import AnalyzerGate
from rein.analysis.restored import RESTORED, all_restored
from rein.harness.gating.dependencies import DependencyCoordinator
from rein.harness.gating.gates import GateContext
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import Mutation
from tests.fakes.commands import FakeCommandRunner
from tests.fakes.diagnostics import SettlingFakeDiagnostics, WatchingFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace
from tests.harness.test_gates_truth import diag

UTIL = "def double(x: int) -> int:\n    return x * 2\n"
APP = "from pkg.util import double\n"
#: What the fake analyzers say whenever asked after the change: a
#: verdict that asks them blocks on it.
BROKEN = diag("pkg/app.py", 0, 'Import "pkg.util" could not be resolved', code="I")


def world(
    deps: DependencyCoordinator | None = None,
    source: SettlingFakeDiagnostics | None = None,
) -> tuple[TrackedWorkspace, SettlingFakeDiagnostics, AnalyzerGate]:
    workspace = TrackedWorkspace(
        FakeWorkspace({"pkg/util.py": UTIL, "pkg/app.py": APP}), MutationLog()
    )
    source = source or SettlingFakeDiagnostics()
    gate = AnalyzerGate(source, dependencies=deps)

    async def before_change(paths: tuple[str, ...]) -> None:
        await gate.before_change(paths, workspace)

    workspace.before_change(before_change)
    return workspace, source, gate


async def asked(gate: AnalyzerGate, source: SettlingFakeDiagnostics, ctx: GateContext) -> bool:
    """Whether the verdict asked the analyzers (it blocks on BROKEN if so)."""
    before = len(source.log)
    outcome = await gate.check(ctx)
    if any(entry.startswith("snapshot") for entry in source.log[before:]):
        assert [b.path for b in outcome.blockers] == ["pkg/app.py"]
        return True
    assert (outcome.blockers, outcome.detail, outcome.unverified) == ([], RESTORED, None)
    return False


async def test_undone_changes_are_not_analysed_again_anything_else_is() -> None:
    workspace, source, gate = world()
    await gate.on_run_start(0)
    await gate.baseline_ready()
    touched = frozenset({"pkg/util.py", "pkg/helpers.py"})
    await workspace.rename("pkg/util.py", "pkg/helpers.py")
    source.diagnostics = [BROKEN]
    assert await asked(gate, source, GateContext(1, touched, workspace))
    # Moved back, with one character changed: asked.
    await workspace.rename("pkg/helpers.py", "pkg/util.py")
    await workspace.write_text("pkg/util.py", UTIL + "\n")
    assert await asked(gate, source, GateContext(2, touched, workspace))
    # Its text as before the run, and the new path still there (a copy): asked.
    await workspace.write_text("pkg/util.py", UTIL)
    await workspace.write_text("pkg/helpers.py", UTIL)
    assert await asked(gate, source, GateContext(3, touched, workspace))
    # Every changed path as before the run: not asked.
    await workspace.delete("pkg/helpers.py")
    assert not await asked(gate, source, GateContext(4, touched, workspace))


async def test_a_changed_path_without_a_known_text_before_the_run_is_asked() -> None:
    """A file a command changed (nobody announced it: no baseline)."""
    workspace, source, gate = world()
    await gate.on_run_start(0)
    await gate.baseline_ready()
    source.diagnostics = [BROKEN]
    assert await asked(gate, source, GateContext(1, frozenset({"pkg/app.py"}), workspace))


async def test_after_an_install_an_undone_change_is_asked() -> None:
    """What imports resolve to changed: the same texts may be analysed
    differently. Pending (not told yet) or told at an earlier verdict."""
    deps = DependencyCoordinator(FakeCommandRunner(), {"pyproject.toml": "pip install -e ."})
    workspace, source, gate = world(deps)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    touched = frozenset({"pkg/util.py"})
    await workspace.write_text("pkg/util.py", "")
    async with anyio.create_task_group() as tg:
        deps.on_mutation(Mutation(1, ("pyproject.toml",)), tg.start_soon)
    await deps.settle()
    await workspace.write_text("pkg/util.py", UTIL)
    source.diagnostics = [BROKEN]
    assert deps.installed()
    assert await asked(gate, source, GateContext(2, touched, workspace))  # pending
    assert not deps.installed()
    assert await asked(gate, source, GateContext(3, touched, workspace))  # told before
    gate.on_validated(3)
    await workspace.write_text("pkg/util.py", "")
    await workspace.write_text("pkg/util.py", UTIL)
    assert not await asked(gate, source, GateContext(4, touched, workspace))


async def test_a_path_not_known_or_not_read_is_not_restored() -> None:
    """No baseline (a file a command touched: ``sed -i``'s own, or one it
    deleted); a file there now that cannot be read (binary, too large)."""
    files = {
        "pkg/util.py": FileBaseline("pkg/util.py", UTIL, ()),
        "pkg/table.py": FileBaseline("pkg/table.py", "", (), existed=False),
    }
    disk: dict[str, str | None] = {"pkg/util.py": UTIL}

    async def now(path: str) -> str | None:
        return disk.get(path)

    async def exists(path: str) -> bool:
        return path in disk

    assert await all_restored(files, {"pkg/util.py", "pkg/table.py"}, now, exists)
    assert not await all_restored(files, {"pkg/util.py", "pkg/sedAb12Cd"}, now, exists)
    disk["pkg/table.py"] = None  # created again, 3 MB: there, not read
    assert not await all_restored(files, {"pkg/util.py", "pkg/table.py"}, now, exists)


async def test_after_a_command_an_undone_change_is_asked() -> None:
    """A command may have changed what imports resolve to (``pip
    uninstall``), out of sight of the changed files: a source that does not
    watch the analyzers' environment (the editor's) cannot say it did not."""
    workspace, source, gate = world()
    await gate.on_run_start(0)
    await gate.baseline_ready()
    touched = frozenset({"pkg/util.py"})
    await workspace.write_text("pkg/util.py", "")
    await gate.before_change((), workspace)  # a command about to run
    await workspace.write_text("pkg/util.py", UTIL)
    source.diagnostics = [BROKEN]
    assert await asked(gate, source, GateContext(2, touched, workspace))
    gate.on_validated(2)
    await workspace.write_text("pkg/util.py", "")
    await workspace.write_text("pkg/util.py", UTIL)
    assert not await asked(gate, source, GateContext(3, touched, workspace))


async def commanded_and_undone(
    source: WatchingFakeDiagnostics,
) -> tuple[TrackedWorkspace, AnalyzerGate, frozenset[str]]:
    """A command changed ``pkg/util.py`` and a second one put it back, each
    through a temporary file of its own (``sed -i``), never there before the
    run nor now."""
    workspace, _, gate = world(source=source)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    source.temporary = {"pkg/sedAb12Cd", "pkg/sedEf34Gh"}
    await gate.before_change((), workspace)
    await workspace.write_text("pkg/util.py", UTIL.replace("double", "twice"))
    await gate.before_change((), workspace)
    await workspace.write_text("pkg/util.py", UTIL)
    source.diagnostics = [BROKEN]
    return workspace, gate, frozenset({"pkg/util.py", *source.temporary})


async def test_after_commands_an_undone_change_is_not_asked_while_the_environment_is_as_it_was() -> (
    None
):
    """Issue 32: sympy's ``sed`` rename reversed by the repair's ``sed``
    was asked again, and basedpyright's order-dependent answers for an
    unchanged test file blocked the repair. The headless pool watches the
    environment: seen unchanged, the tree is the baselines'."""
    source = WatchingFakeDiagnostics()
    workspace, gate, touched = await commanded_and_undone(source)
    assert not await asked(gate, source, GateContext(2, touched, workspace))


async def test_after_commands_an_undone_change_is_asked_once_the_environment_changed() -> None:
    source = WatchingFakeDiagnostics()
    workspace, gate, touched = await commanded_and_undone(source)
    source.environment = 1  # the command's pip uninstall, seen
    assert await asked(gate, source, GateContext(2, touched, workspace))


async def test_after_commands_an_undone_change_is_asked_when_the_environment_is_not_watched() -> (
    None
):
    """No interpreter found, or a ``.venv`` the command made: nothing
    counts the changes there."""
    source = WatchingFakeDiagnostics()
    workspace, gate, touched = await commanded_and_undone(source)
    source.watching = False
    assert await asked(gate, source, GateContext(2, touched, workspace))


async def test_a_temporary_path_is_no_change_but_a_file_left_behind_is() -> None:
    """The temporary paths are left out only while they never were files:
    one the command left there is a change, not known to be undone."""
    source = WatchingFakeDiagnostics()
    workspace, gate, touched = await commanded_and_undone(source)
    source.temporary.discard("pkg/sedEf34Gh")
    await workspace.write_text("pkg/sedEf34Gh", UTIL)
    assert await asked(gate, source, GateContext(2, touched, workspace))
