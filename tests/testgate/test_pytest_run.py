"""The pytest command line the gate builds, and pytest's reports read back."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from rein.testgate.pytest_run import pytest_command, read_report
from rein.testgate.shadow import build_shadow


def _argv(command: str) -> list[str]:
    return shlex.split(command.split(" exec ", 1)[1])


def test_xdist_is_loaded_for_n_auto_and_maxfail_comes_last(tmp_path: Path) -> None:
    src = tmp_path / "proj"
    src.mkdir()
    shadow = build_shadow(src, {})
    try:
        argv = _argv(
            pytest_command("python", shadow, ["tests/test_a.py"], shadow.private / "r", xdist=True)
        )
    finally:
        shadow.remove()
    assert argv[argv.index("-n") - 2 : argv.index("-n") + 2] == ["-p", "xdist", "-n", "auto"]
    assert argv[-1] == "--maxfail=0"
    assert f"--rootdir={shadow.root}" in argv and f"--confcutdir={shadow.root}" in argv


def test_an_empty_ini_is_named_only_without_the_projects_own(tmp_path: Path) -> None:
    src = tmp_path / "proj"
    (src / "backend/tests").mkdir(parents=True)
    (src / "backend/pytest.ini").write_text("[pytest]\n")
    (src / "setup.cfg").write_text("[metadata]\nname = x\n")
    shadow = build_shadow(src, {})
    try:
        report = shadow.private / "r"
        inside = _argv(pytest_command("py", shadow, ["backend/tests/t.py"], report, xdist=False))
        outside = _argv(pytest_command("py", shadow, ["tests/t.py"], report, xdist=False))
    finally:
        shadow.remove()
    assert "-c" not in inside
    assert outside[outside.index("-c") + 1] == str(shadow.private / "ini" / "pytest.ini")


def test_a_report_without_a_session_is_refused() -> None:
    with pytest.raises(ValueError, match="pytest started no session"):
        read_report("")
