"""A run that changes only a setting the analyzers read (ruff's
``pyproject.toml``, basedpyright's ``pyrightconfig.json``) so that an
unchanged module gets new findings: the real servers, a real headless
session. Both passed before (fix26): the pool told ruff and basedpyright of
created and deleted files only, never of a changed setting they watch
(:class:`~rein.disk.pool_environment.SettingChanges` sends the
didChangeWatchedFiles event their registered globs want), and the
run-start snapshot was taken after the change, the new findings taken for
the state before the run (a setting cannot be baselined file by file: the
change waits for the snapshot, ``run_baselines``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rein.config import load_config
from rein.hosting.headless import ApproveAll
from tests.e2e.headless_gate import edit_turn, only_server, prompt_headless

pytestmark = pytest.mark.e2e

MODULE = "import os\n\n\ndef f(x):\n    return x\n"


async def _gate(root: Path, server: str, edit: dict[str, str], **analyzer: Any) -> Any:
    config = load_config({"gates": {"analyzer": {"servers": only_server(server), **analyzer}}})
    script = [edit_turn(edit["path"], edit["old_string"], edit["new_string"]), {"text": "done"}]
    ran = await prompt_headless(root, script, config, "tighten the settings")
    return ran.analyzer_gates()[0]


async def test_ruff_select_all_in_pyproject_blocks_on_the_new_findings(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    (root / "m.py").write_text(MODULE)
    (root / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["E"]\n')
    edit = {"path": "pyproject.toml", "old_string": '["E"]', "new_string": '["ALL"]'}
    # ruff's findings are warnings.
    gate = await _gate(root, "ruff", edit, severity="warning")
    assert gate.status == "blocked", gate.detail
    codes = {(b.path, b.code) for b in gate.blockers}
    assert {("m.py", "F401"), ("m.py", "ANN001"), ("m.py", "D103")} <= codes, codes


async def test_pyrightconfig_type_checking_mode_blocks_on_the_new_errors(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    (root / "m.py").write_text(MODULE.replace("import os\n\n\n", "") + "\n\nprint(f(1))\n")
    (root / "pyrightconfig.json").write_text('{"typeCheckingMode": "standard"}\n')
    edit = {"path": "pyrightconfig.json", "old_string": "standard", "new_string": "all"}
    gate = await _gate(root, "basedpyright", edit)
    assert gate.status == "blocked", gate.detail
    codes = {(b.path, b.code) for b in gate.blockers}
    assert ("m.py", "reportMissingParameterType") in codes, codes


# A setting changed and a module edited in one run (stop 68): the module's
# own baseline, taken after the setting changed, held the new findings.

WIDEN = ('["E"]', '["ALL"]')
SED_WIDEN = 'sed -i \'s/"E"/"ALL"/\' pyproject.toml'
SED_EDIT = "sed -i 's/return x/return x + 1/' m.py"


def _two_files(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    root.mkdir()
    (root / "m.py").write_text(MODULE)
    (root / "other.py").write_text('"""Other."""\n')
    (root / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["E"]\n')
    return root


def _command(line: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "run_command", "arguments": {"command": line}}]}


async def _ruff_gate(root: Path, script: list[dict[str, Any]], **analyzer: Any) -> Any:
    settings = {"servers": only_server("ruff"), "severity": "warning", **analyzer}
    config = load_config({"gates": {"analyzer": settings}})
    script = [*script, {"text": "done"}]
    ran = await prompt_headless(
        root, script, config, "widen the rules", approver=ApproveAll(), watch=True
    )
    assert ran.large == ("workspaceMaxFiles" in analyzer)
    return ran.analyzer_gates()[0]


#: What ruff's ALL finds in MODULE's lines the edit did not touch (lines from 0).
UNTOUCHED = {("m.py", 0, "F401"), ("m.py", 0, "D100"), ("m.py", 3, "ANN001"), ("m.py", 3, "D103")}


async def test_a_module_edited_after_the_setting_blocks_on_its_new_findings(
    tmp_path: Path,
) -> None:
    """Tools: the setting first (its change waits for the run-start
    snapshot), then the module, whose own baseline was taken with the new
    setting in force: judged against the run-start snapshot instead."""
    root = _two_files(tmp_path)
    script = [
        edit_turn("pyproject.toml", *WIDEN),
        edit_turn("m.py", "return x\n", "return x + 1\n"),
    ]
    gate = await _ruff_gate(root, script)
    assert gate.status == "blocked", gate.detail
    where = {(b.path, b.line, b.code) for b in gate.blockers}
    assert UNTOUCHED | {("other.py", 0, "CPY001")} <= where, where


async def test_a_command_after_the_setting_blocks_on_the_modules_new_findings(
    tmp_path: Path,
) -> None:
    """The setting by a tool (warm from then on), the module by a command:
    the command's file gets its baseline after the fact, from its text
    before, with the new setting in force: judged against the run start."""
    root = _two_files(tmp_path)
    gate = await _ruff_gate(root, [edit_turn("pyproject.toml", *WIDEN), _command(SED_EDIT)])
    assert gate.status == "blocked", gate.detail
    where = {(b.path, b.line, b.code) for b in gate.blockers}
    assert UNTOUCHED <= where, where


#: A script that widens ruff's rules: a command that names no setting.
WIDEN_PY = "import pathlib; p = pathlib.Path('pyproject' + '.toml'); "
WIDEN_PY += "p.write_text(p.read_text().replace('\"E\"', '\"ALL\"'))"


async def test_a_command_naming_the_setting_waits_for_the_snapshot_and_blocks_exactly(
    tmp_path: Path,
) -> None:
    """One ``sed -i`` of pyproject.toml and the module, in a session whose
    workspace analysis is deferred: the command names a setting it may
    write, so the run-start snapshot is taken before it runs, as for a
    tool's change of a setting. Passed before stop 68 (every new finding,
    other.py's too, was taken for the state before the run); then
    unverified; now exact."""
    root = _two_files(tmp_path)
    gate = await _ruff_gate(root, [_command(f"{SED_WIDEN} && {SED_EDIT}")])
    assert gate.status == "blocked", gate.detail
    where = {(b.path, b.line, b.code) for b in gate.blockers}
    assert UNTOUCHED | {("other.py", 0, "CPY001")} <= where, where


@pytest.mark.parametrize(
    ("analyzer", "command"),
    [
        ({}, f'python3 -c "{WIDEN_PY}" && {SED_EDIT}'),
        ({"workspaceMaxFiles": 1}, f"{SED_WIDEN} && {SED_EDIT}"),
    ],
    ids=["deferred-unnamed", "open-files"],
)
async def test_a_command_changing_the_setting_and_a_module_cold_is_unverified(
    tmp_path: Path, analyzer: dict[str, Any], command: str
) -> None:
    """Deferred, a command that changes the setting without naming it (a
    script); or where the open files only are analysed: nothing analysed
    the module (nor, deferred, any file) before the setting changed. Passed
    before (deferred: every new finding was taken for the state before the
    run); now unverified, naming the setting."""
    root = _two_files(tmp_path)
    gate = await _ruff_gate(root, [_command(command)], **analyzer)
    assert gate.status == "unverified", gate.detail
    assert "a setting the analyzers read from the disk changed (pyproject.toml)" in gate.detail


async def test_open_files_only_a_command_after_the_setting_is_unverified(tmp_path: Path) -> None:
    """The setting by a tool (the run-start snapshot waited for: warm), the
    module by a command, open files only: the snapshot holds the open files
    only, so the module's baseline cannot be its entries (none: its long
    line, there before the run, would block). Its baseline is asked after
    the fact, the new setting in force: unverified, naming the setting."""
    root = _two_files(tmp_path)
    (root / "m.py").write_text(MODULE + f"\n\nLONG = {'1' * 90}\n")
    script = [edit_turn("pyproject.toml", *WIDEN), _command(SED_EDIT)]
    gate = await _ruff_gate(root, script, workspaceMaxFiles=1)
    assert gate.status == "unverified", gate.detail
    assert "a setting the analyzers read from the disk changed (pyproject.toml)" in gate.detail
