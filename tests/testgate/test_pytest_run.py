"""The pytest command line the gate builds, and pytest's reports read back."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from rein.process.runner import SubprocessRunner
from rein.testgate.pytest_run import pytest_command, read_report
from rein.testgate.runner import RunnerSpec, run_tests
from rein.testgate.shadow import build_shadow
from tests.testgate.projects import project


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
    assert outside[outside.index("-c") + 1] == str(shadow.own("ini") / "pytest.ini")


def test_each_share_of_a_first_run_has_its_own_pytest_cache(tmp_path: Path) -> None:
    """A project whose options use the cache (``--ff``): each share's
    pytest writes its own folder, emptied by its own call only."""
    src = tmp_path / "proj"
    src.mkdir()
    (src / "pytest.ini").write_text("[pytest]\naddopts = --ff\n")
    shadow = build_shadow(src, {})
    try:
        folders = []
        for share in (0, 1):
            argv = _argv(
                pytest_command(
                    "py", shadow, ["t.py"], shadow.private / "r", xdist=False, share=share
                )
            )
            folders.append(argv[argv.index("-o") + 1])
    finally:
        shadow.remove()
    assert folders == [f"cache_dir={shadow.own('cache')}", f"cache_dir={shadow.own('cache.1')}"]


def test_a_report_without_a_session_is_refused() -> None:
    with pytest.raises(ValueError, match="pytest started no session"):
        read_report("")
    assert read_report('{"kind": "start"}\n') == ([], False)
    assert read_report('{"kind": "start"}\n{"kind": "finish", "exitstatus": 5}\n') == ([], True)


ONLY = """import os

import pytest


def pytest_generate_tests(metafunc):
    with open(os.environ["MADE_LOG"], "a") as log:
        log.write(metafunc.function.__name__ + "\\n")


class TestNamed:
    def test_in(self):
        pass

    def test_out(self):
        pass


class TestOther:
    def test_elsewhere(self):
        pass


@pytest.mark.parametrize("n", [1, 2])
def test_p(n):
    pass


def test_unnamed():
    pass
"""


async def test_of_a_files_tests_only_those_named_are_made_and_run_unless_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = tmp_path / "made.log"
    monkeypatch.setenv("MADE_LOG", str(made))
    shadow = build_shadow(project(tmp_path / "proj", {"tests/test_only.py": ONLY}), {})
    try:
        run = await run_tests(
            SubprocessRunner(str(shadow.root)),
            RunnerSpec(python=sys.executable),
            shadow,
            ["tests/test_only.py"],
            60,
            only=["tests/test_only.py::TestNamed", "tests/test_only.py::test_p[2]"],
        )
        first_made = made.read_text()
        recorded = await run_tests(
            SubprocessRunner(str(shadow.root)),
            RunnerSpec(python=sys.executable),
            shadow,
            ["tests/test_only.py"],
            60,
            only=["tests/test_only.py::test_unnamed"],
            record=True,
        )
    finally:
        shadow.remove()

    assert [(r.node_id, r.outcome) for r in run.results] == [
        ("tests/test_only.py::TestNamed::test_in", "passed"),
        ("tests/test_only.py::TestNamed::test_out", "passed"),
        ("tests/test_only.py::test_p[2]", "passed"),
    ]
    # The others were never made into tests (nor parametrized).
    assert sorted(first_made.split()) == ["test_in", "test_out", "test_p"]
    # A recorded run makes them all: its record must know every test of the file.
    assert [r.node_id for r in recorded.results] == ["tests/test_only.py::test_unnamed"]
    assert recorded.coverage is not None
    assert len(recorded.coverage.collected["tests/test_only.py"]) == 6


async def test_only_a_failures_output_is_kept_in_the_report(tmp_path: Path) -> None:
    tests = (
        "def test_passes():\n    print('quiet')\n\n\n"
        "def test_fails():\n    print('said so')\n    assert False\n"
    )
    shadow = build_shadow(project(tmp_path / "proj", {"tests/test_out.py": tests}), {})
    try:
        run = await run_tests(
            SubprocessRunner(str(shadow.root)),
            RunnerSpec(python=sys.executable),
            shadow,
            ["tests/test_out.py"],
            60,
        )
    finally:
        shadow.remove()
    assert [(r.node_id.split("::")[1], r.outcome, r.output) for r in run.results] == [
        ("test_passes", "passed", ""),
        ("test_fails", "failed", "said so"),
    ]


async def test_pytest_ending_with_0_before_its_session_finished_is_unverified(
    tmp_path: Path,
) -> None:
    # A test that exits the process: exit code 0, a report of the tests
    # before it only; never a pass.
    tests = (
        "import os\n\n\ndef test_before():\n    pass\n\n\n"
        "def test_exits():\n    os._exit(0)\n\n\ndef test_after():\n    assert False\n"
    )
    shadow = build_shadow(project(tmp_path / "proj", {"tests/test_exit.py": tests}), {})
    try:
        run = await run_tests(
            SubprocessRunner(str(shadow.root)),
            RunnerSpec(python=sys.executable),
            shadow,
            ["tests/test_exit.py"],
            60,
        )
    finally:
        shadow.remove()
    assert run.exit_code == 0
    assert run.unverified is not None
    assert "pytest ended before its session finished" in run.unverified


async def test_tmp_path_is_outside_the_shadow_tree_of_a_workspace_named_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shadow's own folder holds the tree (named as the workspace) and
    # pytest's temporary folders: never the same folder.
    seen = tmp_path / "seen.txt"
    monkeypatch.setenv("SEEN", str(seen))
    tests = (
        "import os\n\n\ndef test_writes(tmp_path):\n"
        "    with open(os.environ['SEEN'], 'w') as out:\n        out.write(str(tmp_path))\n"
    )
    shadow = build_shadow(project(tmp_path / "tmp", {"tests/test_t.py": tests}), {})
    try:
        run = await run_tests(
            SubprocessRunner(str(shadow.root)),
            RunnerSpec(python=sys.executable),
            shadow,
            ["tests/test_t.py"],
            60,
        )
    finally:
        shadow.remove()
    assert (run.unverified, [r.outcome for r in run.results]) == (None, ["passed"])
    made = Path(seen.read_text())
    assert made.is_relative_to(shadow.private)
    assert not made.is_relative_to(shadow.root)


@pytest.mark.parametrize("name", ["plugin", "ini", "report.jsonl"])
def test_the_gate_s_own_files_are_never_in_a_tree_named_like_them(
    tmp_path: Path, name: str
) -> None:
    # Defect: the gate's plugin folder, empty ini and report sat beside the
    # tree under fixed names, and the tree is named as the workspace: a
    # workspace called `plugin` had the gate's plugin written into its copy.
    src = tmp_path / name
    (src / "tests").mkdir(parents=True)
    shadow = build_shadow(src, {})
    try:
        before = sorted(p.relative_to(shadow.root) for p in shadow.root.rglob("*"))
        pytest_command("py", shadow, ["tests/t.py"], shadow.own("report.jsonl"), xdist=False)
        after = sorted(p.relative_to(shadow.root) for p in shadow.root.rglob("*"))
    finally:
        shadow.remove()
    assert after == before
