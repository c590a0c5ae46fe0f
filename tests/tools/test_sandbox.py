"""The path sandbox: escapes are refused, protected files are never written
and are read only with approval."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import SandboxError, ToolError
from rein.harness.tools import ToolEnvironment
from rein.tools import EditFileTool, ReadFileTool, WriteFileTool
from rein.tools.sandbox import Sandbox
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes.approvals import FakeApprover
from tests.fakes.tools import ToolCallRecorder
from tests.tools.conftest import WriteFiles


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("top secret\n")
    return path


def test_resolve_returns_workspace_relative_posix_paths(root: Path) -> None:
    sandbox = Sandbox(str(root))
    assert sandbox.resolve("src/a.py") == "src/a.py"
    assert sandbox.resolve("./src/../src/a.py") == "src/a.py"
    assert sandbox.resolve(str(root / "src" / "a.py")) == "src/a.py"
    assert sandbox.resolve("") == "."
    assert sandbox.resolve(str(root)) == "."


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param("../x.txt", "through '..'", id="dotdot"),
        pytest.param("src/../../x.txt", "through '..'", id="dotdot-nested"),
        pytest.param("/etc/passwd", "is outside the workspace", id="absolute-outside"),
        pytest.param("~/.ssh/id_rsa", "home directory", id="home"),
    ],
)
def test_escapes_are_refused(root: Path, path: str, message: str) -> None:
    with pytest.raises(SandboxError, match=message):
        Sandbox(str(root)).resolve(path)


def test_symlinks_leading_out_are_refused(root: Path, outside: Path) -> None:
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    (root / "linkfile").symlink_to(outside / "secret.txt")
    sandbox = Sandbox(str(root))
    with pytest.raises(SandboxError, match="symlink that leads outside"):
        sandbox.resolve("linkdir/secret.txt")
    with pytest.raises(SandboxError, match="symlink that leads outside"):
        sandbox.resolve("linkfile")
    # Not yet existing files below a link out are refused too (writes).
    with pytest.raises(SandboxError, match="symlink that leads outside"):
        sandbox.resolve("linkdir/new.txt")


def test_symlink_inside_the_workspace_is_fine(root: Path, write_files: WriteFiles) -> None:
    write_files({"real/a.txt": "a"})
    (root / "alias").symlink_to(root / "real", target_is_directory=True)
    assert Sandbox(str(root)).resolve("alias/a.txt") == "alias/a.txt"


async def test_tools_refuse_escapes(calls: ToolCallRecorder, root: Path, outside: Path) -> None:
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SandboxError, match="outside the workspace"):
        await calls.run(ReadFileTool(), path=str(outside / "secret.txt"))
    with pytest.raises(SandboxError, match="symlink"):
        await calls.run(ReadFileTool(), path="linkdir/secret.txt")
    with pytest.raises(SandboxError, match=r"'\.\.'"):
        await calls.run(WriteFileTool(), path="../evil.txt", content="x")
    with pytest.raises(SandboxError, match="symlink"):
        await calls.run(WriteFileTool(), path="linkdir/evil.txt", content="x")
    assert not (outside / "evil.txt").exists()
    assert not (root.parent / "evil.txt").exists()


@pytest.mark.parametrize(
    "path",
    [".env", "config/.env.local", "certs/server.pem", "id.key", ".git/config", "a/my_secrets/x"],
)
async def test_protected_files_are_never_written(
    calls: ToolCallRecorder, root: Path, path: str
) -> None:
    calls.env.approver = FakeApprover(True)  # approval does not matter for writes
    with pytest.raises(SandboxError, match="protected pattern"):
        await calls.run(WriteFileTool(), path=path, content="x")
    assert not (root / path).exists()
    assert calls.env.approver.requests == []


async def test_protected_file_is_not_edited_even_through_a_symlink(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles
) -> None:
    write_files({".env": "KEY=1\n"})
    (root / "settings.txt").symlink_to(root / ".env")
    with pytest.raises(SandboxError, match=r"'\.env\*'"):
        await calls.run(EditFileTool(), path="settings.txt", old_string="1", new_string="2")
    assert (root / ".env").read_text() == "KEY=1\n"


async def test_reading_a_protected_file_needs_approval(
    calls: ToolCallRecorder, write_files: WriteFiles
) -> None:
    write_files({".env.example": "KEY=1\n"})  # protected, no secret
    denied = await calls.run(ReadFileTool(), path=".env.example")
    assert denied.is_error
    assert denied.details["denied"] is True
    assert "protected pattern '.env*'" in denied.content
    assert "no one can approve" in denied.content
    assert "KEY" not in denied.content

    approver = FakeApprover(False)
    calls.env.approver = approver
    declined = await calls.run(ReadFileTool(), path=".env.example")
    assert declined.is_error and "declined" in declined.content
    assert approver.requests[0].approval_class == "read"
    assert ".env.example" in approver.requests[0].title

    approver.answer = True
    allowed = await calls.run(ReadFileTool(), path=".env.example")
    assert not allowed.is_error
    assert "KEY=1" in allowed.content
    with pytest.raises(ToolError, match=r"File not found: \.env\.template"):
        await calls.run(ReadFileTool(), path=".env.template")
    assert len(approver.requests) == 2, "no one is asked about a file that does not exist"


async def test_deny_globs_come_from_the_settings(root: Path, write_files: WriteFiles) -> None:
    env = ToolEnvironment(
        workspace=DiskWorkspace(root),
        settings=ToolSettings(approval=ApprovalSettings(deny_globs=("*.lock",))),
    )
    calls = ToolCallRecorder(env)
    with pytest.raises(SandboxError, match=r"'\*\.lock'"):
        await calls.run(WriteFileTool(), path="poetry.lock", content="x")
    result = await calls.run(WriteFileTool(), path=".env.example", content="A=1\n")
    assert not result.is_error
    assert (root / ".env.example").read_text() == "A=1\n"
