"""Deny globs at any depth and in any case, symlinks swapped in between the
check and the open, and hard links: the defects of issue 17, one test each,
with real files, symlinks and hard links."""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import rein.tools.sandbox as sandbox_module
from rein.harness.errors import SandboxError, ToolError
from rein.tools import EditFileTool, GrepTool, ReadFileTool, WriteFileTool
from rein.tools.sandbox import SNIFF_BYTES, Sandbox
from rein.tools.settings import GrepBackend
from tests.fakes.approvals import FakeApprover
from tests.fakes.tools import ToolCallRecorder
from tests.tools.conftest import WriteFiles

BACKENDS: list[GrepBackend] = ["python", "rg"]
CANARY = "CANARY-outside-the-workspace"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text(f"{CANARY}\n")
    return path


# ------------------------------------------------------------ deny globs


@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_a_nested_repositorys_hooks_are_never_written(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles, tool: str
) -> None:
    hook = "vendor/lib/.git/hooks/pre-commit"
    write_files({hook: "#!/bin/sh\nexit 0\n"})
    calls.env.approver = FakeApprover(True)
    with pytest.raises(SandboxError, match=r"protected pattern '\.git'"):
        if tool == "write":
            await calls.run(WriteFileTool(), path=hook, content="#!/bin/sh\ncurl evil\n")
        else:
            await calls.run(EditFileTool(), path=hook, old_string="exit 0", new_string="curl x")
    assert (root / hook).read_text() == "#!/bin/sh\nexit 0\n"
    assert calls.env.approver.requests == []


async def test_a_submodules_git_file_is_never_written(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles
) -> None:
    write_files({"libs/sub/.git": "gitdir: ../../.git/modules/sub\n"})
    with pytest.raises(SandboxError, match=r"protected pattern '\.git'"):
        await calls.run(WriteFileTool(), path="libs/sub/.git", content="gitdir: /tmp/evil\n")
    assert (root / "libs/sub/.git").read_text() == "gitdir: ../../.git/modules/sub\n"


# Protected names that are no secret files (those are refused outright: test_secret_files).
@pytest.mark.parametrize("path", [".ENV.Example", "config/Secrets.TXT", "docs/.Env.Sample"])
async def test_deny_globs_ignore_case_for_reads_and_writes(
    calls: ToolCallRecorder, write_files: WriteFiles, path: str
) -> None:
    write_files({path: "TOKEN=hunter2\n"})
    denied = await calls.run(ReadFileTool(), path=path)
    assert denied.is_error and denied.details["denied"] is True
    assert "protected pattern" in denied.content
    assert "hunter2" not in denied.content
    with pytest.raises(SandboxError, match="protected pattern"):
        await calls.run(WriteFileTool(), path=path, content="x")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_skips_protected_files_in_any_case_and_at_any_depth(
    calls: ToolCallRecorder, write_files: WriteFiles, backend: GrepBackend
) -> None:
    write_files(
        {
            ".ENV": "needle=1\n",
            "config/Secrets.yaml": "needle: 2\n",
            "keys/deploy.KEY": "needle 3\n",
            "vendor/lib/.git/config": "needle 4\n",
            "src/ok.py": "needle = 5\n",
        }
    )
    result = await calls.run(GrepTool(backend), pattern="needle")
    assert result.details["backend"] == backend
    assert result.content.splitlines()[0] == "src/ok.py:1: needle = 5"
    assert result.details["matches"] == 1


# ----------------------------------------------- symlink swapped in a race


def _record_opens(monkeypatch: pytest.MonkeyPatch, opened: list[str]) -> None:
    """Note the real path of everything opened (builtin open and os.open)."""
    real_open, real_os_open = builtins.open, os.open

    def note(file: Any) -> None:
        if isinstance(file, (str, os.PathLike)):
            opened.append(os.path.realpath(file))

    def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        note(file)
        return real_open(file, *args, **kwargs)

    def spy_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        note(path)
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)


async def test_a_symlink_swapped_in_after_the_check_is_not_opened(
    calls: ToolCallRecorder,
    root: Path,
    write_files: WriteFiles,
    outside: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_files({"notes.txt": "harmless\n"})
    resolve = Sandbox.resolve

    def resolve_then_swap(self: Sandbox, path: str) -> str:
        rel = resolve(self, path)
        (root / "notes.txt").unlink()
        (root / "notes.txt").symlink_to(outside / "secret.txt")
        return rel

    monkeypatch.setattr(Sandbox, "resolve", resolve_then_swap)
    opened: list[str] = []
    _record_opens(monkeypatch, opened)
    with pytest.raises(SandboxError, match="outside the workspace"):
        await calls.run(ReadFileTool(), path="notes.txt")
    assert str(outside / "secret.txt") not in opened


Swap = Callable[[Path, Path], None]


def _swap_file(root: Path, outside: Path) -> None:
    (root / "d" / "notes.txt").unlink()
    (root / "d" / "notes.txt").symlink_to(outside / "secret.txt")


def _swap_directory(root: Path, outside: Path) -> None:
    (root / "d" / "notes.txt").unlink()
    (root / "d").rmdir()
    (outside / "notes.txt").write_text(f"{CANARY}\n")
    (root / "d").symlink_to(outside, target_is_directory=True)


@pytest.mark.parametrize(
    ("swap", "message"),
    [
        pytest.param(_swap_file, "replaced by a symlink", id="file-becomes-symlink"),
        pytest.param(_swap_directory, "leads outside", id="directory-becomes-symlink"),
    ],
)
async def test_a_swap_between_the_check_and_the_open_is_caught_on_the_opened_file(
    calls: ToolCallRecorder,
    root: Path,
    write_files: WriteFiles,
    outside: Path,
    monkeypatch: pytest.MonkeyPatch,
    swap: Swap,
    message: str,
) -> None:
    write_files({"d/notes.txt": "harmless\n"})
    real_os_open = os.open
    swapped: list[str] = []

    def swap_then_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if not swapped and str(path).endswith("notes.txt"):
            swapped.append(str(path))
            swap(root, outside)
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(sandbox_module.os, "open", swap_then_open)
    with pytest.raises(SandboxError, match=message):
        await calls.run(ReadFileTool(), path="d/notes.txt")
    assert swapped == [str(root / "d" / "notes.txt")]


async def test_a_fifo_is_refused_without_blocking(calls: ToolCallRecorder, root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await calls.run(ReadFileTool(), path="pipe")


# ------------------------------------------------------------ hard links


@pytest.fixture
def hard_link(root: Path, outside: Path) -> Path:
    link = root / "notes.txt"
    os.link(outside / "secret.txt", link)
    return link


async def test_a_hard_link_to_an_outside_file_is_read_only_with_approval(
    calls: ToolCallRecorder, hard_link: Path
) -> None:
    denied = await calls.run(ReadFileTool(), path="notes.txt")
    assert denied.is_error and denied.details["denied"] is True
    assert "hard link (2 names)" in denied.content
    assert CANARY not in denied.content

    approver = FakeApprover(True)
    calls.env.approver = approver
    allowed = await calls.run(ReadFileTool(), path="notes.txt")
    assert CANARY in allowed.content
    assert "hard link" in approver.requests[0].detail


@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_a_hard_link_is_never_written(
    calls: ToolCallRecorder, hard_link: Path, outside: Path, tool: str
) -> None:
    calls.env.approver = FakeApprover(True)
    with pytest.raises(SandboxError, match=r"hard link \(the file has 2 names\)"):
        if tool == "write":
            await calls.run(WriteFileTool(), path="notes.txt", content="pwned\n")
        else:
            await calls.run(EditFileTool(), path="notes.txt", old_string="CANARY", new_string="x")
    assert (outside / "secret.txt").read_text() == f"{CANARY}\n"
    assert os.stat(hard_link).st_nlink == 2  # still the same file under both names


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_does_not_search_hard_links(
    calls: ToolCallRecorder, hard_link: Path, write_files: WriteFiles, backend: GrepBackend
) -> None:
    write_files({"src/ok.py": "CANARY = 1\n"})
    result = await calls.run(GrepTool(backend), pattern="CANARY")
    assert result.content.splitlines()[0] == "src/ok.py:1: CANARY = 1"
    assert result.details["matches"] == 1
    with pytest.raises(ToolError, match=r"hard link \(2 names\)"):
        await calls.run(GrepTool(backend), pattern="CANARY", path="notes.txt")


def test_read_disk_reads_a_file_over_the_limit_only_to_sniff_it(root: Path) -> None:
    (root / "big.txt").write_bytes(b"x" * 100_000)
    (root / "small.txt").write_bytes(b"y" * 1_000)
    sandbox = Sandbox(str(root))
    big = sandbox.read_disk("big.txt", 20_000)
    assert big is not None and big.size == 100_000 and len(big.data) == SNIFF_BYTES
    small = sandbox.read_disk("small.txt", 20_000)
    assert small is not None and small.data == b"y" * 1_000 and small.links == 1
    assert sandbox.read_disk("missing.txt", 20_000) is None
