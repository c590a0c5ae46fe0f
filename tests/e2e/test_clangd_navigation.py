"""Navigation answered by the real clangd, which the preset runs without
its background index (``--background-index=false``): its index is the
files open in it, and the pool opens only its first ``max_files`` at start
(none in a large workspace). ``find_references`` on a C function listed
its definition alone, and ``rename_symbol`` renamed only that, leaving the
header and every caller; the analyzer gate passed it (C has no error for
a call of the old name the header still declares)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rein.config import load_config
from rein.disk.analyzer_discovery import workspace_specs
from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_navigator import PoolNavigator
from rein.harness.analyzer_servers import PRESETS
from rein.harness.navigation_ports import PartialLocations, Position

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


async def test_a_c_functions_references_and_rename_see_every_c_file(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _project(root)
    servers = [{"name": p.name, "enabled": p.name == "clangd"} for p in PRESETS]
    config = load_config({"gates": {"analyzer": {"servers": servers}}}).gates.analyzer
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
