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
from rein.harness.analyzer_servers import PRESETS
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog

pytestmark = pytest.mark.e2e

SERVERS = [{"name": p.name, "enabled": p.name == "clangd"} for p in PRESETS]


async def test_changed_flags_that_break_an_unchanged_file_block(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    (root / "main.c").write_text("int main(void) { return GREETING; }\n")
    (root / "util.c").write_text("int util(void) { return 1; }\n")
    (root / "compile_flags.txt").write_text("-DGREETING=0\n")
    config = load_config({"gates": {"analyzer": {"servers": SERVERS}}})
    edit = {"path": "compile_flags.txt", "old_string": "GREETING=", "new_string": "GREETINGS="}
    script = [{"tool_calls": [{"name": "edit_file", "arguments": edit}]}, {"text": "done"}]
    events = EventLog()
    async with HeadlessSession(root, ReplayModel(script), config, watch=False) as session:
        session.agent.subscribe(events)
        await session.analyzers_started()
        await session.prompt("tidy the flags")
    gate = next(r for r in events.of("gate_result") if r.gate == "analyzer")
    assert gate.status == "blocked", gate.detail
    assert [(b.path, "GREETING" in b.message) for b in gate.blockers] == [("main.c", True)]
