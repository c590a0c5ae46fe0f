"""Approval policies per tool class, and denials the model can read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import ToolError
from rein.harness.ports import Approver
from rein.harness.tools import ToolEnvironment
from rein.tools import (
    ApprovalSettings,
    EditFileTool,
    RunCommandTool,
    ToolSettings,
    WriteFileTool,
)
from rein.tools.file_ops import DeleteFileTool, MoveFileTool
from tests.fakes.approvals import FailingApprover, FakeApprover
from tests.fakes.tools import ToolCallRecorder


def _calls(
    root: Path, approval: dict[str, str] | None = None, approver: Approver | None = None
) -> ToolCallRecorder:
    settings = ToolSettings(approval=ApprovalSettings.model_validate(approval or {}))
    env = ToolEnvironment(workspace=DiskWorkspace(root), approver=approver, settings=settings)
    return ToolCallRecorder(env)


def test_default_policies_and_a_configured_one() -> None:
    defaults = ApprovalSettings()
    assert defaults.policy("read") == "allow"
    assert defaults.policy("write") == "allow"
    assert defaults.policy("command") == "sandboxed"
    assert ApprovalSettings(command="ask").policy("command") == "ask"
    assert ApprovalSettings(command="allow").policy("command") == "allow"
    assert ApprovalSettings(command="allow").policy("write") == "allow"


def test_an_invalid_policy_is_refused_when_the_settings_are_built() -> None:
    with pytest.raises(ValidationError) as caught:
        ApprovalSettings.model_validate({"write": "sometimes"})
    assert caught.value.errors()[0]["loc"] == ("write",)


async def test_a_session_without_settings_uses_the_defaults(root: Path) -> None:
    calls = ToolCallRecorder(ToolEnvironment(workspace=DiskWorkspace(root)))
    result = await calls.run(RunCommandTool(), command="touch ran.txt")
    assert result.details == {"denied": True, "reason": "no_approver"}
    written = await calls.run(WriteFileTool(), path="a.txt", content="x")
    assert not written.is_error
    assert (root / "a.txt").read_text() == "x"


async def test_settings_of_the_wrong_type_fail_the_call_clearly(root: Path) -> None:
    env = ToolEnvironment(workspace=DiskWorkspace(root), settings={"approval": {"write": "deny"}})
    with pytest.raises(TypeError, match="must be a ToolSettings, not dict"):
        await ToolCallRecorder(env).run(WriteFileTool(), path="a.txt", content="x")
    assert not (root / "a.txt").exists()


async def test_command_asks_by_default_and_is_denied_without_an_approver(root: Path) -> None:
    calls = _calls(root)
    result = await calls.run(RunCommandTool(), command="touch ran.txt")
    assert result.is_error
    assert result.details == {"denied": True, "reason": "no_approver"}
    # The default is "sandboxed": without a sandbox every command asks, saying why.
    assert (
        'approval.command is "sandboxed", but the sandbox cannot run here: this session '
        "has no sandbox" in result.content
    )
    assert "run `touch ran.txt`" in result.content
    assert not (root / "ran.txt").exists()


async def test_declined_command_says_so_and_is_not_run(root: Path) -> None:
    approver = FakeApprover(False)
    calls = _calls(root, approver=approver)
    result = await calls.run(RunCommandTool(), command="touch ran.txt")
    assert result.is_error
    assert "the person declined to let you run `touch ran.txt`" in result.content
    assert not (root / "ran.txt").exists()
    request = approver.requests[0]
    assert request.tool == "run_command"
    assert request.approval_class == "command"
    assert "touch ran.txt" in request.title
    assert "$ touch ran.txt" in request.detail


async def test_approved_command_runs(root: Path) -> None:
    calls = _calls(root, approver=FakeApprover(True))
    result = await calls.run(RunCommandTool(), command="touch ran.txt")
    assert not result.is_error
    assert (root / "ran.txt").exists()


async def test_policy_deny_needs_no_approver(root: Path) -> None:
    approver = FakeApprover(True)
    calls = _calls(root, {"write": "deny"}, approver)
    result = await calls.run(WriteFileTool(), path="a.txt", content="x")
    assert result.is_error
    assert 'approval.write is "deny"' in result.content
    assert "create a.txt" in result.content
    assert approver.requests == []
    assert not (root / "a.txt").exists()


async def test_write_policy_ask_goes_through_the_approver(root: Path) -> None:
    approver = FakeApprover(True)
    calls = _calls(root, {"write": "ask"}, approver)
    result = await calls.run(WriteFileTool(), path="a.txt", content="hello\n")
    assert not result.is_error
    assert approver.requests[0].approval_class == "write"
    assert approver.requests[0].title == "Create a.txt"
    assert "hello" in approver.requests[0].detail


async def test_failing_approver_is_a_denial(root: Path) -> None:
    calls = _calls(root, {"command": "ask"}, FailingApprover("client gone"))
    result = await calls.run(RunCommandTool(), command="true")
    assert result.is_error
    assert result.details["reason"] == "approver_error"
    assert "client gone" in result.content


async def test_edit_approval_shows_the_diff_and_a_decline_changes_nothing(root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    approver = FakeApprover(False)
    calls = _calls(root, {"write": "ask"}, approver)
    result = await calls.run(EditFileTool(), path="a.py", old_string="x = 1", new_string="x = 2")
    assert result.is_error and "declined to let you edit a.py" in result.content
    assert approver.requests[0].title == "Edit a.py"
    assert "-x = 1\n+x = 2" in approver.requests[0].detail
    assert (root / "a.py").read_text() == "x = 1\n"
    # A failing edit is reported before anyone is asked.
    with pytest.raises(ToolError, match="not found"):
        await calls.run(EditFileTool(), path="a.py", old_string="y = 1", new_string="y = 2")
    assert len(approver.requests) == 1


async def test_write_policy_review_applies_the_edit_without_asking(root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    approver = FakeApprover(False)
    calls = _calls(root, {"write": "review"}, approver)
    result = await calls.run(EditFileTool(), path="a.py", old_string="x = 1", new_string="x = 2")
    assert not result.is_error
    assert (root / "a.py").read_text() == "x = 2\n"
    assert approver.requests == []
    assert ApprovalSettings(write="review").review
    assert not ApprovalSettings().review


@pytest.mark.parametrize("key", ["read", "command"])
def test_review_is_a_policy_for_writes_only(key: str) -> None:
    with pytest.raises(ValidationError) as caught:
        ApprovalSettings.model_validate({key: "review"})
    assert caught.value.errors()[0]["loc"] == (key,)


@pytest.mark.parametrize(
    ("tool", "arguments", "subject"),
    [
        pytest.param(
            RunCommandTool(), {"command": "  pytest -q tests"}, "pytest -q tests", id="command"
        ),
        pytest.param(
            WriteFileTool(), {"path": "src/a.txt", "content": "x"}, "src/a.txt", id="write"
        ),
        pytest.param(DeleteFileTool(), {"path": "old.txt"}, "old.txt", id="delete"),
        pytest.param(
            MoveFileTool(), {"path": "old.txt", "new_path": "b.txt"}, "old.txt", id="move"
        ),
    ],
)
async def test_a_request_names_its_subject_and_its_tool_call(
    root: Path, tool: Any, arguments: dict[str, str], subject: str
) -> None:
    # What "always allow" rules are keyed by: the program, or the path.
    (root / "old.txt").write_text("o\n")
    approver = FakeApprover(False)
    calls = _calls(root, {"write": "ask", "command": "ask"}, approver)
    await calls.run(tool, **arguments)
    [request] = approver.requests
    assert (request.tool, request.subject, request.tool_call_id) == (tool.name, subject, "call_1")
