"""basedpyright's command line over copies of the workspace
(:mod:`rein.disk.disk_checks`): a copy per overlay, the gone module back in
one, checked as the language server checks the workspace; the workspace is
never written; no answer when a copy cannot be checked. The real command
line, no language server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from rein.disk.analyzer_specs import find_executable
from rein.disk.disk_checks import CommandLine, command_lines, errors_on_disk

PROGRAM = find_executable("basedpyright")
SERVER = find_executable("basedpyright-langserver")

PACKAGE = {
    "pkg/__init__.py": "from .util import helper\n",
    "pkg/util.py": "def helper() -> int:\n    return 1\n",
    # A pre-existing error on line 1, then the re-exported name used.
    "app.py": 'from pkg import helper\nx: int = "a"\nhelper()\n',
    # recommended mode (the command line's default) reports it, standard does not.
    "lax.py": "import os\n",
}


def _workspace(root: Path, files: dict[str, str]) -> dict[str, float]:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return {p: (root / p).stat().st_mtime for p in files}


def _command(mode: str | None = "standard") -> CommandLine:
    assert PROGRAM is not None
    return CommandLine("basedpyright", PROGRAM, mode)


def _lines(errors: tuple[object, ...]) -> list[tuple[str, int, str | None]]:
    return sorted((d.path, d.line, d.code) for d in errors)  # type: ignore[attr-defined]


async def test_a_gone_module_is_back_in_the_copy_as_it_was(root: Path) -> None:
    stamps = _workspace(root, PACKAGE)
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
    # Nothing of the workspace was written, and no copy is left in it.
    assert not (root / "pkg/util.py").exists()
    assert not (root / "pyrightconfig.json").exists()
    assert {p: (root / p).stat().st_mtime for p in PACKAGE if p != "pkg/util.py"} == {
        p: t for p, t in stamps.items() if p != "pkg/util.py"
    }


async def test_the_copy_is_checked_in_the_servers_mode_unless_the_project_sets_one(
    root: Path,
) -> None:
    _workspace(root, PACKAGE)
    answer = await errors_on_disk(root, _command(), [{}], [["lax.py"]], 60)
    assert answer is not None and answer.errors == ((),)  # standard: no error
    (root / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "all"}))
    answer = await errors_on_disk(root, _command(), [{}], [["lax.py"]], 60)
    assert answer is not None
    assert [d.code for d in answer.errors[0]] == ["reportUnusedImport"]


async def test_a_copy_that_cannot_be_checked_answers_nothing(root: Path) -> None:
    _workspace(root, PACKAGE)
    # A file asked that the copy does not have: the command line fails.
    both = [["app.py"], ["app.py"]]
    assert await errors_on_disk(root, _command(), [{}, {"app.py": None}], both, 60) is None
    # Not a list of files per copy.
    assert await errors_on_disk(root, _command(), [{}, {}], [["app.py"]], 60) is None
    # A program that prints no report.
    assert (
        await errors_on_disk(root, CommandLine("x", "/bin/true", None), [{}], [["app.py"]], 60)
        is None
    )


async def test_a_command_line_past_its_bound_is_ended(root: Path, tmp_path: Path) -> None:
    _workspace(root, PACKAGE)
    pids = tmp_path / "pids"
    slow = tmp_path / "slow"
    slow.write_text(f"#!/bin/sh\necho $$ > {pids}\nexec sleep 60\n")
    slow.chmod(0o755)
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert (
        await errors_on_disk(root, CommandLine("x", str(slow), None), [{}], [["app.py"]], 1.0)
        is None
    )
    assert loop.time() - started < 30
    assert _ended(int(pids.read_text()))


def _ended(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().split()[2] == "Z"


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
