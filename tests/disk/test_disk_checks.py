"""basedpyright's command line over copies of the workspace
(:mod:`rein.disk.disk_checks`): a copy per overlay, the gone module back in
one, checked as the language server checks the workspace; the workspace is
never written; no answer when a copy cannot be checked, or would not
resolve imports as the workspace does (review67). The real command line,
no language server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rein.disk.analyzer_specs import find_executable
from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_checks import CommandLine, command_lines, errors_on_disk, faithful

PROGRAM = find_executable("basedpyright")
SERVER = find_executable("basedpyright-langserver")

PACKAGE = {
    "pkg/__init__.py": "from .util import helper\n",
    "pkg/util.py": "def helper() -> int:\n    return 1\n",
    # A pre-existing error on line 1, then the re-exported name used.
    "app.py": 'from pkg import helper\nx: int = "a"\nhelper()\n',
    # An override the basic mode does not check and the others do.
    "lax.py": (
        "class A:\n    def f(self, x: int) -> None: ...\n\n\n"
        "class B(A):\n    def f(self) -> None: ...\n"
    ),
}


def _workspace(root: Path, files: dict[str, str] = PACKAGE) -> dict[str, float]:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return {p: (root / p).stat().st_mtime for p in files}


def _command(mode: str | None = "standard") -> CommandLine:
    assert PROGRAM is not None
    return CommandLine("basedpyright", PROGRAM, mode)


def _lines(errors: tuple[object, ...]) -> list[tuple[str, int, str | None]]:
    return sorted((d.path, d.line, d.code) for d in errors)  # type: ignore[attr-defined]


@pytest.fixture
def temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The copies' temporary folder, reached through a link (macOS's
    ``/var`` -> ``/private/var``): the command line reports resolved paths."""
    real = tmp_path / "real-tmp"
    real.mkdir()
    (tmp_path / "tmp").symlink_to(real)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return real


async def test_a_gone_module_is_back_in_the_copy_as_it_was(root: Path, temporary: Path) -> None:
    stamps = _workspace(root)
    (root / "pkg/util.py").unlink()  # the run deleted it
    was = {"pkg/util.py": PACKAGE["pkg/util.py"]}
    asked = ["app.py", "pkg/__init__.py"]
    answer = await errors_on_disk(root, _command(), [was, {}], [asked, asked], 60)
    assert answer is not None
    before, now = answer.errors
    assert _lines(before) == [("app.py", 1, "reportAssignmentType")]
    assert _lines(now) == [
        ("app.py", 0, "reportAttributeAccessIssue"),
        ("app.py", 1, "reportAssignmentType"),
        ("pkg/__init__.py", 0, "reportMissingImports"),
    ]
    assert {d.source for d in now} == {"basedpyright"}
    # Nothing of the workspace was written, and no copy is left.
    assert not (root / "pkg/util.py").exists()
    assert not (root / "pyrightconfig.json").exists()
    assert {p: (root / p).stat().st_mtime for p in PACKAGE if p != "pkg/util.py"} == {
        p: t for p, t in stamps.items() if p != "pkg/util.py"
    }
    assert _empty(temporary)


async def test_the_copy_is_checked_in_the_servers_mode_unless_the_project_sets_one(
    root: Path,
) -> None:
    _workspace(root)
    answer = await errors_on_disk(root, _command("basic"), [{}], [["lax.py"]], 60)
    assert answer is not None and answer.errors == ((),)  # basic: not checked
    answer = await errors_on_disk(root, _command(None), [{}], [["lax.py"]], 60)
    assert answer is not None  # the command line's own mode: every severity
    assert {(d.code, d.severity) for d in answer.errors[0]} >= {
        ("reportIncompatibleMethodOverride", 1),
        ("reportImplicitOverride", 2),
    }
    (root / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "standard"}))
    answer = await errors_on_disk(root, _command("basic"), [{}], [["lax.py"]], 60)
    assert answer is not None
    assert [d.code for d in answer.errors[0]] == ["reportIncompatibleMethodOverride"]


async def test_a_copy_that_cannot_be_checked_answers_nothing(root: Path, tmp_path: Path) -> None:
    _workspace(root)
    both = [["app.py"], ["app.py"]]
    # A file asked that a copy does not have: the command line fails.
    assert await errors_on_disk(root, _command(), [{}, {"app.py": None}], both, 60) is None
    # Not a list of files per copy; no copy.
    assert await errors_on_disk(root, _command(), [{}, {}], [["app.py"]], 60) is None
    assert await errors_on_disk(root, _command(), [], [], 60) is None
    # A program that prints no report; one that does not start.
    true = CommandLine("x", "/bin/true", None)
    assert await errors_on_disk(root, true, [{}], [["app.py"]], 60) is None
    missing = CommandLine("x", str(tmp_path / "nothing"), None)
    assert await errors_on_disk(root, missing, [{}], [["app.py"]], 60) is None
    # A report of fewer files than it was given.
    fewer = tmp_path / "fewer"
    report = {"generalDiagnostics": [], "summary": {"filesAnalyzed": 0}}
    fewer.write_text(f"#!/bin/sh\necho '{json.dumps(report)}'\n")
    fewer.chmod(0o755)
    assert (
        await errors_on_disk(root, CommandLine("x", str(fewer), None), [{}], [["app.py"]], 60)
        is None
    )


def _empty(folder: Path) -> bool:
    return not any(folder.iterdir())


def _slow(tmp_path: Path, *, fifo: bool = False) -> tuple[CommandLine, Path]:
    """A command line that never ends; it writes its pid to ``pids`` (a FIFO:
    it waits there for the reader)."""
    pids = tmp_path / "pids"
    if fifo:
        os.mkfifo(pids)
    slow = tmp_path / "slow"
    slow.write_text(f"#!/bin/sh\necho $$ > {pids}\nexec sleep 600\n")
    slow.chmod(0o755)
    return CommandLine("x", str(slow), None), pids


def _ended(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().split()[2] == "Z"


async def test_a_command_line_past_its_bound_is_ended(
    root: Path, tmp_path: Path, temporary: Path
) -> None:
    _workspace(root)
    slow, pids = _slow(tmp_path)
    # Bounded here too: a command line left running would be waited for.
    assert await asyncio.wait_for(errors_on_disk(root, slow, [{}], [["app.py"]], 1.0), 60) is None
    assert _ended(int(pids.read_text()))
    assert _empty(temporary)


async def test_a_question_cancelled_ends_its_command_line_and_leaves_no_copy(
    root: Path, tmp_path: Path, temporary: Path
) -> None:
    _workspace(root)
    slow, pids = _slow(tmp_path, fifo=True)
    question = asyncio.ensure_future(errors_on_disk(root, slow, [{}], [["app.py"]], 60))
    pid = int(await asyncio.to_thread(pids.read_text))  # it runs
    question.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(question, 60)  # not the 600 s of a command line left running
    assert _ended(pid)
    assert _empty(temporary)


async def test_the_command_line_sees_no_secret_and_no_option_in_a_file_name(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _workspace(root)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-children")
    seen = tmp_path / "seen"
    spy = tmp_path / "spy"
    report = {"generalDiagnostics": [], "summary": {"filesAnalyzed": 1}}
    spy.write_text(
        f"#!/bin/sh\nenv > {seen}.env\necho \"$@\" > {seen}.argv\necho '{json.dumps(report)}'\n"
    )
    spy.chmod(0o755)
    (root / "--pythonpath=evil.py").write_text("x = 1\n")
    answer = await errors_on_disk(
        root, CommandLine("x", str(spy), None), [{}], [["--pythonpath=evil.py"]], 60
    )
    assert answer is not None
    assert "sk-not-for-children" not in (tmp_path / "seen.env").read_text()
    assert (tmp_path / "seen.argv").read_text().split() == [
        "--outputjson",
        "./--pythonpath=evil.py",
    ]


async def test_a_changed_file_under_a_linked_folder_answers_nothing(
    root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    _workspace(outside, {"pkg/__init__.py": "", "pkg/util.py": "X = 1\n"})
    _workspace(root, {"app.py": "from pkg.util import X\n"})
    (root / "pkg").symlink_to(outside / "pkg")  # the copy links it
    (outside / "pkg/util.py").unlink()
    was = {"pkg/util.py": "X = 1\n"}
    assert await errors_on_disk(root, _command(), [was, {}], [["app.py"]] * 2, 60) is None


@pytest.mark.parametrize(
    ("config", "ok"),
    [
        ({"pyrightconfig.json": json.dumps({"extraPaths": ["lib"]})}, True),
        ({"pyrightconfig.json": json.dumps({"extraPaths": ["../shared"]})}, False),
        ({"pyrightconfig.json": json.dumps({"venvPath": "/opt/venvs", "venv": "x"})}, False),
        ({"pyrightconfig.json": json.dumps({"executionEnvironments": [{"root": ".."}]})}, False),
        ({"pyrightconfig.json": "{ // a comment\n}"}, False),
        ({"pyproject.toml": "[tool.basedpyright]\nextraPaths = ['../x']\n"}, False),
        ({"pyproject.toml": "[tool.pyright]\nstubPath = 'typings'\n"}, True),
        ({"pyproject.toml": "[project]\nname = 'x'\n"}, True),
    ],
)
def test_a_copy_is_faithful_unless_the_configuration_names_a_folder_outside(
    root: Path, config: dict[str, str], ok: bool
) -> None:
    _workspace(root, config)
    assert faithful(root) is ok


def _venv(folder: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)


async def test_the_pool_makes_no_copy_where_the_environment_imports_the_workspace(
    root: Path,
) -> None:
    # An editable install's .pth names lib/: a copy would import the real
    # lib/, where the gone module is gone too.
    _workspace(root, {"lib/pkg/__init__.py": "from .util import *\n", "app.py": "import pkg\n"})
    await asyncio.to_thread(_venv, root / ".venv")
    pool = AnalyzerPool(root, [])
    pool._command_lines = lambda: [_command()]  # type: ignore[method-assign]
    asked = [["app.py"], ["app.py"]]
    assert await pool.errors_on_disk([{}, {}], asked, 60) is not None
    [site] = (root / ".venv").glob("lib/python3*/site-packages")
    (site / "editable.pth").write_text(f"{root / 'lib'}\n")
    pool = AnalyzerPool(root, [])
    pool._command_lines = lambda: [_command()]  # type: ignore[method-assign]
    assert await pool.errors_on_disk([{}, {}], asked, 60) is None


def test_only_a_live_server_with_its_command_line_beside_it_has_one(tmp_path: Path) -> None:
    assert SERVER is not None
    settings = {"basedpyright": {"analysis": {"typeCheckingMode": "strict"}}}
    [found] = command_lines([("basedpyright", SERVER, True, settings)])
    assert found == CommandLine("basedpyright", str(Path(SERVER).parent / "basedpyright"), "strict")
    assert command_lines([("basedpyright", SERVER, False, settings)]) == []  # dead
    assert command_lines([("ruff", find_executable("ruff") or "ruff", True, {})]) == []
    alone = tmp_path / "basedpyright-langserver"  # nothing beside it
    alone.write_text("")
    assert command_lines([("basedpyright", str(alone), True, settings)]) == []
    # Sent settings a copy would not have: its errors would not be the copies'.
    for configured in (
        {"basedpyright": "x"},
        {"basedpyright": {"analysis": {"extraPaths": ["lib"]}}},
        {"basedpyright": {"analysis": {"autoSearchPaths": False}}},
        {"basedpyright": {"analysis": {}}, "python": {"pythonPath": "/usr/bin/python3"}},
        {"basedpyright": {"analysis": {}, "disableLanguageServices": True}},
    ):
        assert command_lines([("basedpyright", SERVER, True, configured)]) == [], configured
    # The preset's, with the workspace filter's excludes and open files only.
    preset = {
        "basedpyright": {
            "analysis": {
                "typeCheckingMode": "standard",
                "diagnosticMode": "openFilesOnly",
                "autoSearchPaths": True,
                "exclude": ["**/.venv"],
            }
        }
    }
    [found] = command_lines([("basedpyright", SERVER, True, preset)])
    assert found.mode == "standard"
    [unset] = command_lines([("basedpyright", SERVER, True, {})])
    assert unset.mode is None
