"""The real clangd in a workspace over ``gates.analyzer.workspaceMaxFiles``.
The preset runs it without its background index (``--background-index=false``):
it knows only the files open in it, and the pool opens only its first
``max_files`` at start (none in a large workspace). ``find_references`` on
a C function listed its definition alone, and ``rename_symbol`` renamed
only that, leaving the header and every caller; the analyzer gate passed
it (C has no error for a call of the old name the header still declares),
and passed a header's changed prototype that broke every caller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rein.config import load_config
from rein.disk.analyzer_discovery import workspace_specs
from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_navigator import PoolNavigator
from rein.harness.events import GateResult
from rein.harness.navigation_ports import PartialLocations, Position
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from tests.e2e.headless_gate import only_server

pytestmark = pytest.mark.e2e

CALLERS = ("src/a.c", "src/b.c", "src/c.c")


def _project(root: Path) -> None:
    (root / "include").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "include/util.h").write_text("int util_sum(int a, int b);\n")
    (root / "src/util.c").write_text(
        '#include "util.h"\nint util_sum(int a, int b) { return a + b; }\n'
    )
    for i, caller in enumerate(CALLERS):
        (root / caller).write_text(
            f'#include "util.h"\nint f{i}(void) {{ return util_sum({i}, 1); }}\n'
        )
    units = ["src/util.c", *CALLERS]
    commands = [
        {"directory": str(root), "file": str(root / u), "arguments": ["cc", "-Iinclude", "-c", u]}
        for u in units
    ]
    (root / "compile_commands.json").write_text(json.dumps(commands))


SERVERS = only_server("clangd")


async def test_a_c_functions_references_and_rename_see_every_c_file(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _project(root)
    config = load_config({"gates": {"analyzer": {"servers": SERVERS}}}).gates.analyzer
    (spec,) = workspace_specs(root, config)
    assert Path(spec.command[0]).is_absolute(), "clangd was not found"
    assert "--background-index=false" in spec.command
    pool = AnalyzerPool(root, [spec], max_files=1)  # start opens one file only
    await pool.start()
    try:
        navigator = PoolNavigator(pool, index_wait_s=20)
        (clangd,) = pool.analyzers
        assert len(clangd.versions) == 1
        found = await navigator.references("src/util.c", Position(1, 4))
        assert not isinstance(found, PartialLocations), found.note
        assert sorted((f.path, f.range.start.line) for f in found) == [
            ("include/util.h", 0),
            *((caller, 1) for caller in CALLERS),
            ("src/util.c", 1),
        ]
        edits = await navigator.rename("src/util.c", Position(1, 4), "util_add")
        assert sorted(edits) == sorted(["include/util.h", "src/util.c", *CALLERS])
    finally:
        await pool.stop()


async def test_a_headers_change_is_judged_in_the_files_including_it(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _project(root)
    analyzer = {"servers": SERVERS, "workspaceMaxFiles": 2}
    config = load_config({"gates": {"analyzer": analyzer, "tests": {"enabled": False}}})
    old, new = "int util_sum(int a, int b);", "int util_sum(int a, int b, int c);"
    edit = {"name": "edit_file", "arguments": {"path": "include/util.h", "old_string": old}}
    model = ReplayModel(
        [
            {"tool_calls": [{**edit, "arguments": {**edit["arguments"], "new_string": new}}]},
            {"text": "done"},
        ]
    )
    verdicts: list[GateResult] = []
    async with HeadlessSession(root, model, config, watch=False) as session:
        session.agent.subscribe(
            lambda event: verdicts.append(event) if isinstance(event, GateResult) else None
        )
        result = await session.prompt("change the prototype")
    assert result.status == "failed"  # the script ends at the repair
    analyzer_verdicts = [v for v in verdicts if v.gate == "analyzer"]
    assert analyzer_verdicts and not analyzer_verdicts[0].passed
    blocked = sorted({b.path for b in analyzer_verdicts[0].blockers})
    assert blocked == sorted(["src/util.c", *CALLERS])
