"""The headless analyzers see the project as the command line sees it: a
src layout's packages resolve (the pre-existing diagnostics equal the
command-line basedpyright's), and a package an install puts into the
project's ``.venv`` resolves at the next verdict."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from tests.e2e.basedpyright_cli import basedpyright_cli
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

RUFF, BASEDPYRIGHT = DEFAULT_ANALYZERS


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
    cli = sorted((path, line, rule) for path, line, _, rule in basedpyright_cli(tmp_path))
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


def fancylib_wheel(folder: Path) -> Path:
    """A minimal wheel of ``fancylib`` (built by hand: pip installs it with
    no index and no build backend)."""
    folder.mkdir()
    wheel = folder / "fancylib-0.1-py3-none-any.whl"
    info = "fancylib-0.1.dist-info"
    files = {
        "fancylib/__init__.py": "VALUE = 1\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: fancylib\nVersion: 0.1\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
        zf.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in [*files, f"{info}/RECORD"]))
    return wheel


def test_a_package_the_run_s_install_adds_resolves_at_the_next_verdict(
    tmp_path: Path, wheels: Path
) -> None:
    # Defect: the install put fancylib into the project's .venv, and every
    # later verdict still said `Import "fancylib" could not be resolved`.
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(root / ".venv")], check=True, timeout=120)
    fancylib_wheel(wheels)
    (root / "requirements.txt").write_text("")
    (root / "app.py").write_text("print('hello')\n")
    install = (
        f".venv/bin/python -m pip install --no-index --find-links {wheels} -r requirements.txt"
    )
    config = tmp_path / "rein.json"
    config.write_text(
        json.dumps({"gates": {"dependencies": {"commands": {"requirements.txt": install}}}})
    )
    write = {
        "name": "write_file",
        "arguments": {"path": "requirements.txt", "content": "fancylib\n"},
    }
    app = {
        "name": "write_file",
        "arguments": {"path": "app.py", "content": "import fancylib\n\nprint(fancylib.VALUE)\n"},
    }
    script = tmp_path / "s.yaml"
    # No repair turn: a verdict that blocks leaves the model nothing to say.
    script.write_text(
        yaml.safe_dump(
            {"name": "install", "turns": [{"tool_calls": [write, app]}, {"text": "done"}]}
        )
    )
    out = subprocess.run(
        [*REIN, "run", "use fancylib", "-w", str(root),
         "--provider", "replay", "--script", str(script), "--yes", "--json",
         "--config", str(config), "--storage", str(tmp_path / "storage")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    results = [e for e in events if e.get("type") == "gate_result"]
    assert out.returncode == 0, out.stderr[-3000:]
    assert [(r["gate"], r["passed"]) for r in results] == [
        ("dependencies", True),
        ("analyzer", True),
    ]
    assert "could not be resolved" not in out.stdout
