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
