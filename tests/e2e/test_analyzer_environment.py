"""The headless analyzers see the project as the command line sees it: a
src layout's packages resolve (the pre-existing diagnostics equal the
command-line basedpyright's), and a package an install puts into the
project's ``.venv`` resolves at the next verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rein.disk.analyzer_specs import DEFAULT_ANALYZERS, find_executable
from rein.disk.analyzers import AnalyzerPool

pytestmark = pytest.mark.e2e

RUFF, BASEDPYRIGHT = DEFAULT_ANALYZERS


def basedpyright_cli(root: Path) -> list[tuple[str, int, str]]:
    """The command-line basedpyright's errors for ``root`` as (path, line,
    rule), sorted."""
    exe = find_executable("basedpyright")
    assert exe is not None
    out = subprocess.run(
        [exe, "--outputjson"], cwd=root, capture_output=True, text=True, timeout=120
    )
    report = json.loads(out.stdout)
    return sorted(
        (
            Path(d["file"]).resolve().relative_to(root.resolve()).as_posix(),
            d["range"]["start"]["line"],
            d.get("rule", ""),
        )
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    )


def src_layout_project(root: Path) -> None:
    """src/pkg with one error of its own; tests/ importing pkg and calling
    it wrongly (an error only when ``src`` is on the search path)."""
    (root / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\nversion = "0"\n\n'
        '[tool.basedpyright]\ntypeCheckingMode = "standard"\n'
    )
    pkg = root / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg.core import add\n\n__all__ = ['add']\n")
    (pkg / "core.py").write_text(
        "def add(a: int, b: int) -> int:\n    return a + b\n\n\n"
        "def broken() -> str:\n    return 1\n"
    )
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text(
        "from pkg import add\nfrom pkg.core import missing_name\n\n\n"
        "def test_add() -> None:\n    assert add('one', 2) == 3\n"
    )


async def test_a_src_layout_s_pre_existing_diagnostics_equal_the_command_line_s(
    tmp_path: Path,
) -> None:
    # Defect: Rein's settings left autoSearchPaths off, so src/ was not on
    # the search path: tests/ could not import pkg and its errors were
    # "could not be resolved" instead of the command line's.
    src_layout_project(tmp_path)
    cli = basedpyright_cli(tmp_path)
    # The command line resolves pkg from src/: the wrong call is seen.
    assert ("tests/test_core.py", 5, "reportArgumentType") in cli
    pool = AnalyzerPool(tmp_path, [RUFF, BASEDPYRIGHT])
    await pool.start()
    try:
        assert await pool.wait_initial(60)
        snap = await pool.snapshot()
        ours = sorted(
            (d.path, d.line, d.code or "")
            for d in snap.diagnostics
            if d.source == "basedpyright" and d.severity == 1
        )
        assert ours == cli
    finally:
        await pool.stop()
