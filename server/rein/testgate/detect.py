"""Whether a project has pytest tests, and which files are test files."""

from __future__ import annotations

import configparser
import importlib.util
import os
import sys
from pathlib import Path, PurePosixPath

from rein.testgate.shadow import LINKED_WHOLE, SKIPPED

__all__ = ["find_test_files", "finds_pytest_tests", "has_xdist", "is_test_file"]

#: How many files the look for ``test_*.py`` reads at most.
_SCAN_LIMIT = 20_000


def is_test_file(path: str) -> bool:
    """pytest's default ``python_files``: ``test_*.py`` and ``*_test.py``."""
    name = PurePosixPath(path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def find_test_files(root: Path, limit: int = _SCAN_LIMIT) -> list[str]:
    """The workspace-relative test files under ``root`` (environments,
    caches and ``node_modules`` left out), at most ``limit`` files looked at."""
    found: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIPPED
            and d not in LINKED_WHOLE
            and not d.startswith(".")
            and not (here / d / "pyvenv.cfg").is_file()
        )
        for name in sorted(files):
            seen += 1
            if is_test_file(name):
                found.append((here / name).relative_to(root).as_posix())
        if seen >= limit:
            break
    return found


def _ini_has(path: Path, section: str) -> bool:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return False
    return parser.has_section(section)


def finds_pytest_tests(root: Path) -> bool:
    """pytest's configuration (``pytest.ini``, ``[tool.pytest.ini_options]``,
    ``setup.cfg``'s ``[tool:pytest]``, ``tox.ini``'s ``[pytest]``), a
    ``tests/`` folder, or a ``test_*.py`` file."""
    if (root / "pytest.ini").is_file() or (root / "tests").is_dir():
        return True
    try:
        pyproject = (root / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        pyproject = ""
    if "[tool.pytest.ini_options]" in pyproject:
        return True
    if _ini_has(root / "setup.cfg", "tool:pytest") or _ini_has(root / "tox.ini", "pytest"):
        return True
    return bool(find_test_files(root, limit=5_000))


def has_xdist(python: str) -> bool:
    """pytest-xdist is installed for ``python``: the running interpreter's
    import system says, another's environment has an ``xdist`` package in
    its ``site-packages``."""
    if Path(python) == Path(sys.executable):
        return importlib.util.find_spec("xdist") is not None
    prefix = Path(python).parent.parent
    return (
        any(prefix.glob("lib/python3*/site-packages/xdist/__init__.py"))
        or (prefix / "Lib" / "site-packages" / "xdist" / "__init__.py").is_file()
    )
