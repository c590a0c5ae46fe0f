"""delete_file and move_file: through the Workspace port (a generation the
run's record counts, and a checkpoint with the content), with clear
refusals for what they cannot do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import ToolError
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import Mutation
from rein.harness.run.run_record import RunMutation
from rein.harness.tools import ToolEnvironment
from rein.tools.file_ops import DeleteFileTool, MoveFileTool
from tests.fakes.approvals import FakeApprover
from tests.fakes.tools import ToolCallRecorder
from tests.tools.conftest import WriteFiles


@pytest.fixture
def env(disk: DiskWorkspace) -> ToolEnvironment:
    return ToolEnvironment(workspace=TrackedWorkspace(disk, MutationLog()))


async def test_delete_removes_the_file_as_a_change_of_the_run(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles
) -> None:
    write_files({"old.py": "x = 1\n"})
    result = await calls.run(DeleteFileTool(), path="old.py")
    assert not result.is_error, result.content
    assert result.content == "Deleted old.py (generation 1)."
    assert not (root / "old.py").exists()
    assert calls.record.mutations == [RunMutation(Mutation(1, ("old.py",), "agent"), "tool")]


async def test_move_renames_the_file_as_one_change(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles
) -> None:
    write_files({"draft.py": "y = 2\n"})
    result = await calls.run(MoveFileTool(), path="draft.py", new_path="pkg/final.py")
    assert not result.is_error, result.content
    assert (root / "pkg/final.py").read_text() == "y = 2\n"
    assert not (root / "draft.py").exists()
    assert calls.record.mutations == [
        RunMutation(Mutation(1, ("draft.py", "pkg/final.py"), "agent"), "tool")
    ]


@pytest.mark.parametrize(
    ("tool", "args", "says"),
    [
        pytest.param(
            DeleteFileTool(),
            {"path": "missing.py"},
            "File not found: missing.py",
            id="delete-missing",
        ),
        pytest.param(
            DeleteFileTool(), {"path": "."}, "workspace root is a directory", id="delete-root"
        ),
        pytest.param(DeleteFileTool(), {"path": "../outside.py"}, "outside", id="delete-outside"),
        pytest.param(
            DeleteFileTool(), {"path": ".env"}, "protected pattern", id="delete-protected"
        ),
        pytest.param(
            MoveFileTool(),
            {"path": "a.py", "new_path": "b.py"},
            "b.py already exists",
            id="move-onto-a-file",
        ),
        pytest.param(
            MoveFileTool(),
            {"path": "a.py", "new_path": "a.py"},
            "the same file",
            id="move-to-itself",
        ),
        pytest.param(
            MoveFileTool(),
            {"path": "nope.py", "new_path": "c.py"},
            "File not found: nope.py",
            id="move-missing",
        ),
    ],
)
async def test_refusals_are_clear_and_change_nothing(
    calls: ToolCallRecorder,
    root: Path,
    write_files: WriteFiles,
    tool: object,
    args: dict[str, str],
    says: str,
) -> None:
    write_files({"a.py": "a\n", "b.py": "b\n", ".env": "KEY=1\n"})
    # A tool raises ToolError; the loop makes it an is_error result.
    with pytest.raises(ToolError) as refused:
        await calls.run(tool, **args)  # type: ignore[arg-type]
    assert says in str(refused.value)
    assert sorted(p.name for p in os.scandir(root)) == [".env", "a.py", "b.py"]
    assert calls.record.mutations == []


async def test_a_denied_deletion_keeps_the_file(
    env: ToolEnvironment, root: Path, write_files: WriteFiles
) -> None:
    from rein.tools.settings import ApprovalSettings, ToolSettings

    write_files({"keep.py": "k\n"})
    env.settings = ToolSettings(approval=ApprovalSettings(write="deny"))
    env.approver = FakeApprover(False)
    result = await ToolCallRecorder(env).run(DeleteFileTool(), path="keep.py")
    assert result.is_error
    assert (root / "keep.py").read_text() == "k\n"
