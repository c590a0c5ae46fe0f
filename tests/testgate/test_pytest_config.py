"""One reader of the project's pytest options for the selection and the
first run's shares (review20b finding 7: cores.py read its own, skipping a
``pytest.ini`` without a ``[pytest]`` section, which pytest takes all the
same)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.testgate.cores import own_xdist
from rein.testgate.pytest_config import addopts
from rein.testgate.selection import distributed
from tests.testgate.projects import project


def test_a_pytest_ini_without_its_section_still_wins_for_both_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    pyproject = '[tool.pytest.ini_options]\naddopts = "-n 2 --ff"\n'
    root = project(tmp_path, {"pytest.ini": "# nothing\n", "pyproject.toml": pyproject})
    assert addopts(root) == ()
    assert (own_xdist(root), distributed(root)) == (False, False)
    monkeypatch.setenv("PYTEST_ADDOPTS", "-n 2")
    assert addopts(root) == ("-n", "2")
    assert (own_xdist(root), distributed(root)) == (True, True)


def test_the_environment_s_options_come_after_the_configured_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x")
    root = project(tmp_path, {"setup.cfg": "[tool:pytest]\naddopts = -q\n    -p no:doctest\n"})
    assert addopts(root) == ("-q", "-p", "no:doctest", "-x")
    (root / "tox.ini").write_text("[pytest]\naddopts = -v\n")  # tox.ini comes first
    assert addopts(root) == ("-v", "-x")
