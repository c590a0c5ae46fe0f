"""Whether the tests gate is on by itself: the project has pytest tests,
found the way the selection finds them (pytest's configuration)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.testgate.detect import finds_pytest_tests
from tests.testgate.projects import project


@pytest.mark.parametrize(
    "files",
    [
        {"tests/helpers.py": ""},
        {"pytest.ini": "[pytest]\n"},
        {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"},
        {"tox.ini": "[pytest]\n"},
        {"setup.cfg": "[tool:pytest]\n"},
        {"pkg/test_mod.py": ""},
        {"pkg/mod_test.py": ""},
    ],
    ids=["tests-folder", "pytest.ini", "pyproject", "tox", "setup.cfg", "test_", "_test"],
)
def test_a_project_with_pytest_tests_is_found(tmp_path: Path, files: dict[str, str]) -> None:
    assert finds_pytest_tests(project(tmp_path, files))


@pytest.mark.parametrize(
    "files",
    [
        {"mod.py": "", "README.md": ""},
        {"pyproject.toml": "[tool.ruff]\n", "tox.ini": "[tox]\n", "setup.cfg": "[metadata]\n"},
        # Test files only in folders pytest does not walk.
        {".venv/pyvenv.cfg": "", ".venv/lib/test_x.py": "", "node_modules/a/test_y.py": ""},
    ],
    ids=["no-tests", "other-config", "skipped-folders"],
)
def test_a_project_without_them_is_not(tmp_path: Path, files: dict[str, str]) -> None:
    assert not finds_pytest_tests(project(tmp_path, files))
