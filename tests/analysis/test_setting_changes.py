"""rein.analysis.setting_changes: where the run changed a setting the
analyzers read, every baseline is the run-start snapshot's (the analyzers
gave the others with the new setting in force), and a verdict that cannot
be judged so does not pass. The real servers: tests/e2e/test_setting_changes.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rein.analysis.baselines import FileBaseline
from rein.analysis.gate import AnalyzerGate
from rein.analysis.setting_changes import (
    dependencies_only,
    judged_from_run_start,
    settings_moved,
    settings_named,
    unseen_setting,
)
from rein.harness.gate_events import Blocker
from rein.harness.gating.gate_types import GateContext, GateOutcome
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import CommandAhead, Diagnostic
from tests.fakes.diagnostics import ColdFakeDiagnostics, SettlingFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace


def _error(path: str, line: int, code: str) -> Diagnostic:
    return Diagnostic(path=path, line=line, message=code, code=code)


RUN_START = {
    "m.py": (_error("m.py", 0, "E501"),),
    "old.py": (_error("old.py", 2, "E711"),),
    "importer.py": (_error("importer.py", 1, "E741"),),
}


def _run_start(path: str) -> tuple[Diagnostic, ...]:
    return RUN_START.get(path, ())


def test_every_baseline_becomes_the_run_starts_entries() -> None:
    late_found = _error("m.py", 0, "F401")  # what ruff's widened select adds
    files = {
        "m.py": FileBaseline("m.py", "import os\n", (RUN_START["m.py"][0], late_found), False),
        # Renamed from old.py: the old path's entries, carried to the new one.
        "new.py": FileBaseline("new.py", "x = None\n", (), renamed_from="old.py"),
    }
    late = {"importer.py": (_error("importer.py", 1, "E741"), _error("importer.py", 3, "ANN001"))}
    judged_from_run_start(files, late, _run_start)
    assert files["m.py"] == FileBaseline("m.py", "import os\n", RUN_START["m.py"], True)
    renamed = files["new.py"]
    assert renamed.renamed_from == "old.py"
    assert renamed.text == "x = None\n"
    assert [(d.path, d.line, d.code) for d in renamed.diagnostics] == [("new.py", 2, "E711")]
    assert late == {"importer.py": RUN_START["importer.py"]}


def test_a_verdict_not_judged_so_is_unverified_unless_something_blocks() -> None:
    passed = unseen_setting(GateOutcome(detail="0 blocking"), ["ruff.toml", "pyproject.toml"])
    said = "a setting the analyzers read from the disk changed (pyproject.toml, ruff.toml)"
    assert passed.unverified is not None and said in passed.unverified
    assert said in passed.detail
    earlier = GateOutcome(detail="0 blocking", unverified="stale")
    both = unseen_setting(earlier, ["pyproject.toml"]).unverified or ""
    assert both.startswith("stale; a setting the analyzers read from the disk changed (pyproject")
    blocker = Blocker(gate="analyzer", path="m.py", line=0, message="F401")
    blocked = unseen_setting(GateOutcome([blocker], detail="1 blocking"), ["pyproject.toml"])
    assert blocked.blockers == [blocker] and blocked.unverified is None
    assert "changed (pyproject.toml)" in blocked.detail


BEFORE = """[project]
name = "app"
requires-python = ">=3.10"
dependencies = ["requests"]

[tool.ruff.lint]
select = ["E"]
"""


@pytest.mark.parametrize(
    ("now", "only"),
    [
        (BEFORE.replace('["requests"]', '["requests", "rich>=13"]'), True),
        (BEFORE + '\n[project.optional-dependencies]\ndev = ["pytest"]\n', True),
        (BEFORE + '\n[dependency-groups]\ntest = ["pytest"]\n', True),
        (BEFORE + '\n[build-system]\nrequires = ["hatchling"]\n', True),
        (BEFORE.replace('["E"]', '["ALL"]'), False),  # ruff reads it
        (BEFORE.replace(">=3.10", ">=3.12"), False),  # ruff's target version
        (BEFORE + '\n[build-system]\nbuild-backend = "hatchling.build"\n', False),
        (BEFORE + "\n[tool.basedpyright]\ntypeCheckingMode = 'all'\n", False),
        ("[project\nname = 1", False),  # no TOML: a change as any other
    ],
)
def test_a_dependency_added_to_pyproject_is_no_setting_changed(now: str, only: bool) -> None:
    assert dependencies_only(BEFORE, now) is only


@pytest.mark.parametrize(
    ("was", "moved"),
    [
        (BEFORE, []),  # its text before the run is known
        (None, ["pyproject.toml"]),  # not known
    ],
)
async def test_settings_moved_leaves_out_a_pyproject_whose_dependencies_only_changed(
    was: str | None, moved: list[str]
) -> None:
    now = BEFORE.replace('["requests"]', '["requests", "rich"]')
    source = SettlingFakeDiagnostics()
    source.uncovered = {".toml"}  # read, never opened
    workspace = FakeWorkspace({"pyproject.toml": now, "m.py": "import rich\n"})
    before = {"pyproject.toml": was}.get
    touched = {"pyproject.toml", "m.py"}
    assert await settings_moved(source, touched, before, workspace) == moved
    widened = now.replace('["E"]', '["ALL"]')
    workspace.files["pyproject.toml"] = widened
    assert await settings_moved(source, touched, before, workspace) == ["pyproject.toml"]


# The gate with fake analyzers: which run-start snapshot may judge every file.

NARROW = '[tool.ruff.lint]\nselect = ["E"]\n'
WIDE = '[tool.ruff.lint]\nselect = ["ALL"]\n'
#: What the run broke in m.py (its text before: "x = 1").
BROKE = Diagnostic(path="m.py", line=0, message="undefined_name", code="F821", source="ruff")
#: What the widened setting finds in m.py's first line, there before the run too.
WIDENED = Diagnostic(path="m.py", line=0, message="missing docstring", code="D100", source="ruff")


def _world(source: SettlingFakeDiagnostics) -> tuple[TrackedWorkspace, AnalyzerGate]:
    source.uncovered = {".toml"}  # read, never opened: a setting
    files = {"pyproject.toml": NARROW, "m.py": "x = 1\n", "other.py": "y = 2\n"}
    workspace = TrackedWorkspace(FakeWorkspace(files), MutationLog())
    gate = AnalyzerGate(source)

    async def before_change(paths: tuple[str, ...]) -> None:
        await gate.before_change(paths, workspace)

    workspace.before_change(before_change)
    return workspace, gate


def _where(outcome: GateOutcome) -> list[tuple[str | None, str | None]]:
    return sorted((b.path, b.code) for b in outcome.blockers)


async def _widened_and_broken(workspace: TrackedWorkspace, source: SettlingFakeDiagnostics) -> None:
    await workspace.write_text("pyproject.toml", WIDE)
    source.diagnostics = [WIDENED]  # m.py's baseline is captured with the new setting
    await workspace.write_text("m.py", "x = undefined_name\n")
    source.diagnostics = [WIDENED, BROKE]


TOUCHED = frozenset({"pyproject.toml", "m.py"})


async def test_the_run_start_snapshot_judges_a_file_baselined_after_the_setting() -> None:
    source = SettlingFakeDiagnostics()
    workspace, gate = _world(source)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    await _widened_and_broken(workspace, source)
    verdict = await gate.check(GateContext(1, TOUCHED, workspace))
    assert _where(verdict) == [("m.py", "D100"), ("m.py", "F821")], verdict.detail


async def test_a_file_the_run_start_snapshot_does_not_hold_is_not_judged_against_it() -> None:
    """Past ruff's start-up files, the run-start snapshot has nothing of
    m.py: judged against it, every old finding of m.py would block."""
    source = SettlingFakeDiagnostics()
    source.not_in_whole = {"m.py"}
    workspace, gate = _world(source)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    await _widened_and_broken(workspace, source)
    verdict = await gate.check(GateContext(1, TOUCHED, workspace))
    assert _where(verdict) == [("m.py", "F821")], verdict.detail
    assert "a setting the analyzers read from the disk changed (pyproject.toml)" in verdict.detail


async def test_a_resumed_session_keeps_judging_against_the_baselines_from_before_its_changes() -> (
    None
):
    """The snapshot a resumed run takes is of the stored changes: taken for
    the state before the run, it made m.py's break pre-existing (a blocked
    run passed once resumed)."""
    source = SettlingFakeDiagnostics()
    workspace, gate = _world(source)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    await _widened_and_broken(workspace, source)
    assert ("m.py", "F821") in _where(await gate.check(GateContext(1, TOUCHED, workspace)))
    resumed = AnalyzerGate(source)
    resumed.import_state(gate.export_state())
    await resumed.on_run_start(2)
    await resumed.baseline_ready()
    assert resumed.baseline is not None and BROKE in resumed.baseline.diagnostics
    again = await resumed.check(GateContext(2, TOUCHED, workspace))
    assert ("m.py", "F821") in _where(again), again.detail
    assert "a setting the analyzers read from the disk changed (pyproject.toml)" in again.detail


async def test_a_run_whose_snapshot_failed_does_not_judge_against_an_earlier_runs() -> None:
    """Run 1 fixed m.py's old error (validated); run 2's snapshot fails, so
    the gate still holds run 1's, from before that fix: judged against it,
    the old error brought back by run 2 was pre-existing."""
    old = Diagnostic(path="m.py", line=0, message="old", code="E711", source="ruff")
    source = SettlingFakeDiagnostics([old])
    workspace, gate = _world(source)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    await workspace.write_text("m.py", "x = 2\n")
    source.diagnostics = []
    assert (await gate.check(GateContext(1, frozenset({"m.py"}), workspace))).blockers == []
    gate.on_validated(1)

    whole = source.snapshot
    failed: list[int] = []

    async def failing(paths: Any = None, *, min_generation: int = 0) -> Any:
        if paths is None and not failed:  # the run-start snapshot's
            failed.append(min_generation)
            raise RuntimeError("the analyzers went away")
        return await whole(paths, min_generation=min_generation)

    source.snapshot = failing  # type: ignore[method-assign]
    await gate.on_run_start(2)
    await gate.baseline_ready()
    assert failed == [2]
    await workspace.write_text("pyproject.toml", WIDE)
    await workspace.write_text("m.py", "x = None == 1\n")
    source.diagnostics = [old]
    verdict = await gate.check(GateContext(3, TOUCHED, workspace))
    assert _where(verdict) == [("m.py", "E711")], verdict.detail


async def test_a_stale_run_start_snapshot_does_not_judge_every_file() -> None:
    """An analyzer did not answer for every file in time: what the snapshot
    lacks of m.py would be taken for what m.py had before the run."""
    source = SettlingFakeDiagnostics()
    workspace, gate = _world(source)
    source.stale = True
    await gate.on_run_start(0)
    await gate.baseline_ready()
    source.stale = False
    await _widened_and_broken(workspace, source)
    verdict = await gate.check(GateContext(1, TOUCHED, workspace))
    assert _where(verdict) == [("m.py", "F821")], verdict.detail
    assert "a setting the analyzers read from the disk changed (pyproject.toml)" in verdict.detail


PROJECT_TEXT = '[project]\nname = "app"\ndependencies = []\n\n' + NARROW


async def _stale_start_with_a_project() -> tuple[TrackedWorkspace, AnalyzerGate]:
    """A run whose run-start snapshot is stale (it cannot judge every file),
    in a workspace whose pyproject.toml names dependencies and ruff's rules."""
    source = SettlingFakeDiagnostics()
    workspace, gate = _world(source)
    workspace.inner.files["pyproject.toml"] = PROJECT_TEXT  # type: ignore[attr-defined]
    source.stale = True
    await gate.on_run_start(0)
    await gate.baseline_ready()
    source.stale = False
    return workspace, gate


@pytest.mark.parametrize(
    ("command", "unseen"),
    [
        ({"dependencies": ["rich"]}, False),  # uv add rich
        ({"lint": ["ALL"]}, True),
    ],
)
async def test_a_command_adding_a_dependency_changes_no_setting(
    command: dict[str, list[str]], unseen: bool
) -> None:
    """pyproject.toml's text is kept before the run's first command: a
    ``uv add`` changes no setting; a command widening ruff's rules does,
    and the verdict, not judged against a whole run-start snapshot (stale
    here), is unverified."""
    workspace, gate = await _stale_start_with_a_project()
    await gate.before_change((), workspace)  # a command is about to run
    changed = PROJECT_TEXT.replace("dependencies = []", 'dependencies = ["rich"]')
    if "lint" in command:
        changed = changed.replace('["E"]', '["ALL"]')
    workspace.inner.files["pyproject.toml"] = changed  # type: ignore[attr-defined]
    verdict = await gate.check(GateContext(1, frozenset({"pyproject.toml"}), workspace))
    said = "a setting the analyzers read from the disk changed (pyproject.toml)" in verdict.detail
    assert said is unseen, verdict.detail


async def test_a_tool_after_the_command_does_not_hide_what_the_command_changed() -> None:
    """The command widened ruff's rules; a tool then added a dependency:
    its capture is of the text after the command, and compared with that,
    only a dependency changed. The text before the command is the run's."""
    workspace, gate = await _stale_start_with_a_project()
    await gate.before_change((), workspace)
    widened = PROJECT_TEXT.replace('["E"]', '["ALL"]')
    workspace.inner.files["pyproject.toml"] = widened  # type: ignore[attr-defined]
    await workspace.write_text("pyproject.toml", widened.replace("[]", '["rich"]'))
    verdict = await gate.check(GateContext(1, frozenset({"pyproject.toml"}), workspace))
    assert "a setting the analyzers read from the disk changed (pyproject.toml)" in verdict.detail


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("sed -i 's/E/ALL/' pyproject.toml", ["pyproject.toml"]),
        ("echo 'line-length = 100' >> ruff.toml", ["ruff.toml"]),
        ("echo 'line-length = 100' >>ruff.toml", ["ruff.toml"]),  # no space
        ("cp ../base.json ./pyrightconfig.json", ["./pyrightconfig.json"]),
        ("(cd sub && sed -i 's/E/ALL/' pyproject.toml)", ["pyproject.toml"]),
        ("perl -pi -e 's/E/ALL/' pyproject.toml", ["pyproject.toml"]),
        ("git checkout pyproject.toml", ["pyproject.toml"]),
        ("cat pyproject.toml", []),  # reads only: no deferred analysis started for it
        ("grep -i ruff pyproject.toml", []),
        ("git diff pyproject.toml", []),
        ("pip install -r requirements.txt", []),  # no setting: an install
        ("ls > files.json", []),  # no setting's name
        ("uv add rich", []),  # names none (a dependency: no setting, settings_moved)
        ("sed -i 's/x/y/' pkg/m.py", []),  # a module
        ("python3 widen.py", []),  # names none: unverified if it widens a rule
        ("sed -i 's/a/b/' 'unclosed", []),  # no shell words: split on spaces
    ],
)
def test_a_command_names_the_settings_it_may_write(command: str, named: list[str]) -> None:
    assert settings_named(command) == named


# Review68b.

#: What the widened rules find in the unchanged other.py.
OTHER_NEW = Diagnostic(path="other.py", line=0, message="docstring", code="D100", source="ruff")


async def test_a_resumed_sessions_command_does_not_take_the_stored_setting_for_before() -> None:
    """The stored run widened the rules by a command; the resumed run's
    first command (pytest) found pyproject.toml widened already: read then,
    it was "before the run", and the widening no setting change (a pass)."""
    source = SettlingFakeDiagnostics()
    workspace, gate = _world(source)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    await workspace.write_text("m.py", "x = 2\n")
    await gate.before_change(CommandAhead("sed -i 's/E/ALL/' pyproject.toml"), workspace)
    workspace.inner.files["pyproject.toml"] = WIDE  # type: ignore[attr-defined]
    source.diagnostics = [OTHER_NEW]
    touched = frozenset({"m.py", "pyproject.toml"})
    assert _where(await gate.check(GateContext(1, touched, workspace))) == [("other.py", "D100")]
    resumed = AnalyzerGate(source)
    resumed.import_state(gate.export_state())
    await resumed.on_run_start(2)
    await resumed.baseline_ready()
    await resumed.before_change(CommandAhead("pytest -q"), workspace)
    again = await resumed.check(GateContext(2, touched, workspace))
    assert again.unverified is not None, again.detail
    assert "a setting the analyzers read from the disk changed (pyproject.toml)" in again.detail


async def test_a_file_a_command_changed_counts_among_those_the_snapshot_must_hold() -> None:
    """m.py, changed by a command, has no baseline of its own, and the
    run-start snapshot lacks it (past ruff's start-up files): with only
    the tool-changed files asked, the verdict was taken as judged whole."""
    source = SettlingFakeDiagnostics()
    source.not_in_whole = {"m.py"}
    workspace, gate = _world(source)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    await workspace.write_text("pyproject.toml", WIDE)
    await gate.before_change(CommandAhead("sed -i 's/1/2/' m.py"), workspace)
    workspace.inner.files["m.py"] = "x = 2\n"  # type: ignore[attr-defined]
    verdict = await gate.check(GateContext(1, TOUCHED, workspace))
    assert "a setting the analyzers read from the disk changed (pyproject.toml)" in verdict.detail


async def test_a_command_naming_a_setting_after_a_cold_change_does_not_wait() -> None:
    """After a cold change the run-start snapshot cannot be before every
    change: waiting for it before the command gains nothing, and a deferred
    analysis would be started for it."""
    source = ColdFakeDiagnostics()
    workspace, gate = _world(source)
    await gate.on_run_start(0)
    await workspace.write_text("m.py", "x = 2\n")  # cold: the workspace is not analysed
    ahead = CommandAhead("sed -i 's/E/ALL/' pyproject.toml")
    # The workspace is never analysed here: a wait for it would not end.
    await asyncio.wait_for(gate.before_change(ahead, workspace), 5)
    assert source.log[-1] == "read_texts", source.log  # judged file by file


async def test_a_snapshot_taken_after_a_cancelled_runs_commands_is_not_before_them() -> None:
    """A run's command widened the rules and the run was cancelled before
    its verdict; the next run's snapshot holds what the command changed:
    judged against it, the widening's findings were there before."""
    source = SettlingFakeDiagnostics()
    workspace, gate = _world(source)
    await gate.on_run_start(0)
    await gate.baseline_ready()
    await gate.before_change(CommandAhead("sed -i 's/E/ALL/' pyproject.toml"), workspace)
    workspace.inner.files["pyproject.toml"] = WIDE  # type: ignore[attr-defined]
    source.diagnostics = [OTHER_NEW]
    gate.on_run_end()  # cancelled: no verdict
    await gate.on_run_start(1)
    await gate.baseline_ready()
    touched = frozenset({"pyproject.toml"})  # carried: not validated
    verdict = await gate.check(GateContext(2, touched, workspace))
    assert "a setting the analyzers read from the disk changed (pyproject.toml)" in verdict.detail
