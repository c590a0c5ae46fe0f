"""A command in a cold session that creates a file, changes one no analyzer
covers, or cannot have the workspace's texts read (issue 32, the review of
the cold command verdicts). Built on the cold-start world."""

from __future__ import annotations

import asyncio
import logging

import pytest

from rein.harness.gating.gates import GateContext
from tests.analysis.test_gate_cold_start import OLD, cold_world, lines
from tests.harness.test_gates_truth import diag


async def test_a_command_creating_a_module_or_changing_a_readme_leaves_later_verdicts_checked() -> (
    None
):
    """Old: the created module (and the README, which the pool never reads)
    had no text before the command, so every file with errors in the
    snapshot taken after it was "not checked", at every later verdict and
    in the next run too."""
    workspace, source, gate = cold_world()
    workspace.inner.files["README.md"] = "hello\n"  # type: ignore[attr-defined]
    await gate.on_run_start(0)
    await asyncio.wait_for(workspace.before_command(), 5)
    # A code generator writes a clean new module; the README is edited.
    workspace.inner.files["pkg/gen.py"] = "x = 1\n"  # type: ignore[attr-defined]
    workspace.inner.files["README.md"] = "hello again\n"  # type: ignore[attr-defined]
    source.counterfactual = [OLD]
    source.workspace_analysed.set()
    await gate.baseline_ready()
    ctx = GateContext(1, frozenset({"pkg/gen.py", "README.md"}), workspace)
    first = await gate.check(ctx)
    assert lines(first) == [] and first.unverified is None, first.detail
    assert "snapshot_with pkg/gen.py -> pkg/d.py" in source.log  # d.py's old error, asked

    # The next run judges the unvalidated command and a tool's edit.
    gate.on_run_end()
    await gate.on_run_start(2)
    await workspace.write_text("pkg/a.py", "def helper() -> int:\n    return 2\n")
    again = await gate.check(GateContext(3, frozenset({"pkg/gen.py", "pkg/a.py"}), workspace))
    assert lines(again) == [] and again.unverified is None, again.detail

    # A command that only edits the README: nothing for the analyzers.
    readme = await gate.check(GateContext(4, frozenset({"README.md"}), workspace))
    assert readme.unverified is None, readme.detail


async def test_a_command_creating_an_empty_module_never_passes_what_imports_its_name() -> None:
    """Old: ``touch pkg/json.py`` (shadowing the standard library's json in
    c.py) counted as a file that never was; with it "shown" empty the
    analyzers still resolved c.py's import to it, and c.py's new error was
    baselined as pre-existing: the verdict passed."""
    workspace, source, gate = cold_world()
    workspace.inner.files["pkg/c.py"] = "import json\n\njson.loads('1')\n"  # type: ignore[attr-defined]
    await gate.on_run_start(0)
    await asyncio.wait_for(workspace.before_command(), 5)
    workspace.inner.files["pkg/json.py"] = ""  # type: ignore[attr-defined]
    shadowed = diag("pkg/c.py", 2, '"loads" is not a known attribute of module', code="A")
    source.diagnostics = [OLD, shadowed]
    source.counterfactual = [OLD, shadowed]  # the disk's json.py, whatever is shown
    source.workspace_analysed.set()
    await gate.baseline_ready()
    outcome = await gate.check(GateContext(1, frozenset({"pkg/json.py"}), workspace))
    assert outcome.unverified is not None, outcome.detail
    assert "1 file(s) with errors not checked" in outcome.unverified
    assert "pkg/c.py" in outcome.unverified and "pkg/d.py" not in outcome.unverified
    assert lines(outcome) == []  # d.py's old error: no analysed file's text changed


async def test_a_command_appending_to_an_empty_init_is_judged_file_by_file() -> None:
    """Old: an existing empty ``__init__.py`` a command appended to counted
    as created: the verdict waited for the whole-workspace snapshot."""
    workspace, source, gate = cold_world(settle_timeout_s=0.05)
    workspace.inner.files["pkg/__init__.py"] = ""  # type: ignore[attr-defined]
    await gate.on_run_start(0)
    await asyncio.wait_for(workspace.before_command(), 5)
    workspace.inner.files["pkg/__init__.py"] = "from pkg.a import helper\n"  # type: ignore[attr-defined]
    source.counterfactual = [OLD]
    ctx = GateContext(1, frozenset({"pkg/__init__.py"}), workspace)
    outcome = await asyncio.wait_for(gate.check(ctx), 5)
    assert "snapshot_files_with pkg/__init__.py -> pkg/__init__.py" in source.log
    assert "partial: judged on the changed files and their importers" in outcome.detail


async def test_a_command_whose_texts_cannot_be_read_waits_for_the_snapshot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Old: read_texts' error went up through the command's hook (which
    logged it and went on): the command ran with nothing to judge it
    against, without waiting for the snapshot. The error is logged as the
    gate's (as before cold_commands.py held it)."""
    workspace, source, gate = cold_world()

    def unreadable() -> dict[str, str]:
        source.workspace_analysed.set()  # the snapshot completes meanwhile
        raise OSError("the workspace could not be read")

    source.texts_now = unreadable
    await gate.on_run_start(0)
    # The gate's own hook (the workspace's would log the error and go on).
    await asyncio.wait_for(gate.before_change((), workspace), 5)
    assert "read_texts" in source.log
    assert gate.baseline is not None  # the old wait: the command runs after the snapshot
    said = (
        "rein.analysis.gate",
        logging.ERROR,
        "could not read the texts before a command: it waits instead",
    )
    assert said in caplog.record_tuples


async def test_a_new_run_reads_the_texts_before_its_command_afresh() -> None:
    """Old: the texts read before a run's command were kept until a change
    was validated: a run that changed nothing left them to the next run,
    whose command was judged against files as they were a run ago."""
    workspace, source, gate = cold_world()
    await gate.on_run_start(0)
    await asyncio.wait_for(workspace.before_command(), 5)  # `ls`: nothing changed
    gate.on_run_end()
    workspace.inner.files["pkg/a.py"] = "def helper() -> str:\n    return ''\n"  # type: ignore[attr-defined]
    await gate.on_run_start(1)
    await asyncio.wait_for(workspace.before_command(), 5)
    assert source.log.count("read_texts") == 2
