"""A run that changes clangd's flags (``compile_flags.txt``) so that an
unchanged ``main.c`` no longer compiles: the real clangd, a real headless
session. clangd watches no file and reads its flags when it first builds a
file; the pool restarts it for such a setting
(:class:`~rein.disk.pool_environment.SettingChanges`), and the gate's
counterfactual question does not take the error for one there without the
run (the flags cannot be shown as they were). Both passed before
(review23). Whole-workspace mode only: past ``workspaceMaxFiles`` clangd
checks the open files only and offers no pulls, and nothing opens
``main.c`` (the gate's reach is judged only for a source asked file by
file, analysis/gate.py): still a pass there, a known gap."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.config import load_config
from tests.e2e.headless_gate import edit_turn, only_server, prompt_headless, write_workspace

pytestmark = pytest.mark.e2e


async def test_changed_flags_that_break_an_unchanged_file_block(tmp_path: Path) -> None:
    root = tmp_path / "w"
    write_workspace(
        root,
        {
            "main.c": "int main(void) { return GREETING; }\n",
            "util.c": "int util(void) { return 1; }\n",
            "compile_flags.txt": "-DGREETING=0\n",
        },
    )
    config = load_config({"gates": {"analyzer": {"servers": only_server("clangd")}}})
    script = [edit_turn("compile_flags.txt", "GREETING=", "GREETINGS="), {"text": "done"}]
    ran = await prompt_headless(root, script, config, "tidy the flags")
    gate = ran.analyzer_gates()[0]
    assert gate.status == "blocked", gate.detail
    assert [(b.path, "GREETING" in b.message) for b in gate.blockers] == [("main.c", True)]
