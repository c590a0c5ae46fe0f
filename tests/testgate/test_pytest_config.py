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
from tests.testgate.projects import BAD, GOOD, project, verdict_on


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


def test_pytest_9_s_toml_files_come_first_and_tool_pytest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """review23 F4: pytest 9 reads ``pytest.toml``/``.pytest.toml`` before
    every other file (even empty) and ``[tool.pytest]`` in pyproject.toml."""
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    pyproject = '[tool.pytest]\naddopts = ["-n", "2"]\n'
    root = project(tmp_path, {"pyproject.toml": pyproject, "tox.ini": "[pytest]\naddopts = -q\n"})
    assert (addopts(root), own_xdist(root), distributed(root)) == (("-n", "2"), True, True)
    (root / "pytest.ini").write_text("[pytest]\naddopts = -v\n")
    assert addopts(root) == ("-v",)
    (root / ".pytest.toml").write_text('[pytest]\naddopts = ["-x"]\n')
    assert addopts(root) == ("-x",)
    (root / "pytest.toml").write_text("")  # first, even empty
    assert addopts(root) == ()


TESTS = "from mod import first_n\n\n\ndef test_two():\n    assert first_n([1, 2, 3], 2) == [1, 2]\n"


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("pytest.toml", '[pytest]\npython_files = ["check_*.py"]\n'),
        ("pyproject.toml", '[tool.pytest]\npython_files = ["check_*.py"]\n'),
    ],
)
async def test_a_test_file_named_by_pytest_9_s_toml_configuration_is_run(
    tmp_path: Path, name: str, config: str
) -> None:
    """review23 F4: with ``python_files`` only in pytest 9's TOML, the
    gate found no test file and passed a broken change: "no test reaches
    the changed files"."""
    files = {"mod.py": GOOD, name: config, "tests/check_mod.py": TESTS}
    outcome = await verdict_on(project(tmp_path / "p", files), "mod.py", BAD)
    assert [b.message.split(" failed:")[0] for b in outcome.blockers] == [
        "tests/check_mod.py::test_two"
    ]
