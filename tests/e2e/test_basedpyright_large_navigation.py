"""Navigation answered by the real basedpyright in a workspace over
``gates.analyzer.workspaceMaxFiles``, where the pool switches it to
``openFilesOnly`` and opens nothing at start: a file outside the project's
own ``include`` (attrs' ``[tool.pyright] include`` names one file) is then
known to it only when open, and its references and renames missed the uses
there (attrs' ``astuple`` had 5 references in 1 file, not 13 in 4, and a
rename would have changed that file only). The workspace's Python files
naming the symbol are opened first; those that do not name it are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.config import load_config
from rein.disk.analyzer_discovery import workspace_specs
from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_navigator import PoolNavigator
from rein.harness.analyzer_servers import PRESETS
from rein.harness.navigation_ports import PartialLocations, Position

pytestmark = pytest.mark.e2e

FILES = {
    # As attrs does: pyright's program is this file (and the open ones).
    "pyproject.toml": '[tool.pyright]\ninclude = ["pkg/core.py"]\n',
    "pkg/__init__.py": "",
    "pkg/core.py": "def total(x: int) -> int:\n    return x + 1\n",
    "pkg/use.py": "from pkg.core import total as t\n\nprint(t(1))\n",
    "app.py": "import pkg.core\n\nprint(pkg.core.total(2))\n",
    "other.py": "def unrelated() -> None:\n    pass\n",
}


async def test_references_and_rename_see_the_files_naming_the_symbol(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    servers = [{"name": p.name, "enabled": p.name == "basedpyright"} for p in PRESETS]
    config = load_config({"gates": {"analyzer": {"servers": servers}}}).gates.analyzer
    (spec,) = workspace_specs(root, config)
    assert Path(spec.command[0]).is_absolute(), "basedpyright was not found"
    pool = AnalyzerPool(root, [spec], workspace_max_files=1)
    await pool.start()
    try:
        assert pool.large
        navigator = PoolNavigator(pool, index_wait_s=20)
        (basedpyright,) = pool.analyzers
        found = await navigator.references("pkg/core.py", Position(0, 4))
        assert not isinstance(found, PartialLocations), found.note
        assert sorted((f.path, f.range.start.line) for f in found) == [
            ("app.py", 2),
            ("pkg/core.py", 0),
            ("pkg/use.py", 0),
        ]
        assert "other.py" not in basedpyright.versions
        edits = await navigator.rename("pkg/core.py", Position(0, 4), "grand_total")
        assert sorted(edits) == ["app.py", "pkg/core.py", "pkg/use.py"]
    finally:
        await pool.stop()
