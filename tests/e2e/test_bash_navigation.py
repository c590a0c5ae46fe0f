"""Navigation answered by the real bash-language-server (``.tools``), which
knows only the files opened in it (the preset turns its background
analysis off): the pool opens only its first ``max_files`` at start (none
in a large workspace), and ``find_references``/``rename_symbol`` on a shell
function silently missed the files that source it, and said they had all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rein.config import load_config
from rein.disk.analyzer_discovery import workspace_specs
from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_navigator import PoolNavigator
from rein.harness.analyzer_servers import PRESETS
from rein.harness.navigation_ports import NavigationUnavailable, PartialLocations, Position

pytestmark = pytest.mark.e2e

TOOLS = Path(os.environ.get("REIN_TOOLS") or Path(__file__).resolve().parents[2] / ".tools")


async def test_a_shell_functions_references_and_rename_see_every_shell_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REIN_TOOL_CACHE", str(TOOLS))
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.sh").write_text("#!/bin/bash\nsource ./lib.sh\ngreet world\n")
    (root / "b.sh").write_text("#!/bin/bash\n. ./lib.sh\ngreet there\n")
    (root / "lib.sh").write_text('greet() {\n  echo "hi $1"\n}\n')
    servers = [{"name": p.name, "enabled": p.name == "bash"} for p in PRESETS]
    config = load_config({"gates": {"analyzer": {"servers": servers}}}).gates.analyzer
    (spec,) = workspace_specs(root, config)
    assert Path(spec.command[0]).is_absolute(), "bash-language-server was not found"
    pool = AnalyzerPool(root, [spec], max_files=1)  # start opens a.sh only
    await pool.start()
    try:
        navigator = PoolNavigator(pool, index_wait_s=10)
        (bash,) = pool.analyzers
        assert set(bash.versions) == {"a.sh"}
        # Past the bound of files a question opens: said, and no rename.
        monkeypatch.setattr("rein.disk.pool_navigator.OPEN_TO_SEE", 0)
        partial = await navigator.references("lib.sh", Position(0, 0))
        assert isinstance(partial, PartialLocations)
        assert partial.note == (
            "bash knows only the files open in it and did not see 1 of the "
            "workspace's 3 bash files naming `greet` (more than 0 to open)"
        )
        assert {f.path for f in partial} == {"a.sh", "lib.sh"}
        with pytest.raises(NavigationUnavailable, match="Not renamed: bash knows only"):
            await navigator.rename("lib.sh", Position(0, 0), "hello")
        # Within it: every shell file is opened in it first.
        monkeypatch.setattr("rein.disk.pool_navigator.OPEN_TO_SEE", 200)
        found = await navigator.references("lib.sh", Position(0, 0))
        assert not isinstance(found, PartialLocations)
        assert sorted((f.path, f.range.start.line) for f in found) == [
            ("a.sh", 2),
            ("b.sh", 2),
            ("lib.sh", 0),
        ]
        edits = await navigator.rename("lib.sh", Position(0, 0), "hello")
        assert sorted(edits) == ["a.sh", "b.sh", "lib.sh"]
    finally:
        await pool.stop()
