"""Navigation answered by the real typescript-language-server in a
JavaScript project without a ``jsconfig.json`` (or a TypeScript one without
a ``tsconfig.json``): tsserver infers each open file's project from it and
what it imports, so the files importing a function are in it only when
open, and the pool opens only its first ``max_files`` at start (none in a
large workspace). ``find_references`` listed the definition alone and
``rename_symbol`` renamed only that; the analyzer gate passed it
(JavaScript is not type-checked)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rein.config import load_config
from rein.disk.analyzer_discovery import workspace_specs
from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_navigator import PoolNavigator
from rein.harness.analyzer_servers import PRESETS
from rein.harness.navigation_ports import PartialLocations, Position

pytestmark = pytest.mark.e2e

TOOLS = Path(os.environ.get("REIN_TOOLS") or Path(__file__).resolve().parents[2] / ".tools")


async def test_an_inferred_projects_references_and_rename_see_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REIN_TOOL_CACHE", str(TOOLS))
    root = tmp_path / "ws"
    (root / "lib").mkdir(parents=True)
    (root / "package.json").write_text('{"name": "js", "type": "module"}\n')
    (root / "lib/greet.js").write_text('export function greet(name) {\n  return "hi " + name;\n}\n')
    for user in ("a.js", "b.js"):
        (root / user).write_text(
            'import { greet } from "./lib/greet.js";\nconsole.log(greet("x"));\n'
        )
    servers = [{"name": p.name, "enabled": p.name == "typescript"} for p in PRESETS]
    config = load_config({"gates": {"analyzer": {"servers": servers}}}).gates.analyzer
    (spec,) = workspace_specs(root, config)
    assert Path(spec.command[0]).is_absolute(), "typescript-language-server was not found"
    pool = AnalyzerPool(root, [spec], max_files=1)  # start opens a.js only
    await pool.start()
    try:
        navigator = PoolNavigator(pool, index_wait_s=20)
        found = await navigator.references("lib/greet.js", Position(0, 16))
        assert not isinstance(found, PartialLocations), found.note
        assert sorted((f.path, f.range.start.line) for f in found) == [
            ("a.js", 0),
            ("a.js", 1),
            ("b.js", 0),
            ("b.js", 1),
            ("lib/greet.js", 0),
        ]
        edits = await navigator.rename("lib/greet.js", Position(0, 16), "hello")
        assert sorted(edits) == ["a.js", "b.js", "lib/greet.js"]
    finally:
        await pool.stop()
