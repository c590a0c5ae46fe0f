"""The analyzer server knows its pool only through :class:`AnalyzerOwner`."""

from __future__ import annotations

import ast
from pathlib import Path

from rein.disk import analyzer_server
from rein.disk.analyzer_server import AnalyzerOwner
from rein.disk.analyzers import AnalyzerPool


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports, under ``if TYPE_CHECKING:`` too."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_analyzer_server_does_not_import_the_pool() -> None:
    assert "rein.disk.analyzers" not in _imported(Path(analyzer_server.__file__))


def test_the_pool_is_an_analyzer_owner(tmp_path: Path) -> None:
    owner: AnalyzerOwner = AnalyzerPool(tmp_path)
    assert owner.root == tmp_path.resolve()
    assert owner.files_to_open(file_by_file=False) == []
