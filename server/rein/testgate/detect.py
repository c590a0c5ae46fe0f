"""Whether a project has pytest tests, and whether its interpreter has
pytest-xdist. Which files are tests is :mod:`rein.testgate.selection`'s
answer (pytest's configuration read as pytest reads it)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from rein.testgate.selection import find_test_files, pytest_configured

__all__ = ["finds_pytest_tests", "has_xdist"]

#: How many files the look for test files reads at most.
_SCAN_LIMIT = 5_000


def finds_pytest_tests(root: Path) -> bool:
    """pytest's configuration (``pytest.ini``, ``[tool.pytest.ini_options]``,
    ``setup.cfg``'s ``[tool:pytest]``, ``tox.ini``'s ``[pytest]``), a
    ``tests/`` folder, or a file pytest collects (``test_*.py``,
    ``*_test.py`` or the configured ``python_files``) among the first files
    found."""
    if (root / "tests").is_dir() or pytest_configured(root):
        return True
    return bool(find_test_files(root, limit=_SCAN_LIMIT))


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
