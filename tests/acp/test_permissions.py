"""Approvals through ``session/request_permission`` (``rein.acp.permissions``),
against the fake client of tests/fakes.py: the four options, the "always"
rules of a session (not of another), a cancelled request and a client that
does not answer refuse the call."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from rein.acp.permissions import PermissionApprover
from rein.harness.errors import ToolError
from rein.harness.ports import ApprovalRequest
from rein.harness.tools import ToolEnvironment
from rein.headless.disk_workspace import DiskWorkspace
from rein.tools import RunCommandTool
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes import FakeAcpClient, FakeClientLink, ToolCallRecorder, run_in_virtual_time


def approver(client: FakeAcpClient, session_id: str = "sess-1") -> PermissionApprover:
    return PermissionApprover(FakeClientLink(client), session_id, timeout_s=300)  # type: ignore[arg-type]


def command(text: str, call_id: str | None = "call-9") -> ApprovalRequest:
    return ApprovalRequest(
        tool="run_command",
        approval_class="command",
        title=f"Run: {text}",
        detail=f"$ {text}",
        subject=text.split()[0],
        tool_call_id=call_id,
    )


@pytest.mark.parametrize(
    ("answer", "allowed"),
    [
        pytest.param("allow_once", True, id="allow_once"),
        pytest.param("allow_always", True, id="allow_always"),
        pytest.param("reject_once", False, id="reject_once"),
        pytest.param("reject_always", False, id="reject_always"),
    ],
)
async def test_each_option_is_the_person_s_answer(answer: str, allowed: bool) -> None:
    client = FakeAcpClient(permissions=[answer])
    assert await approver(client).confirm(command("pytest -q")) is allowed
    [asked] = client.params("session/request_permission")
    assert asked["session_id"] == "sess-1"
    call = asked["tool_call"]
    assert (call.tool_call_id, call.title, call.kind, call.status) == (
        "call-9",
        "Run: pytest -q",
        "execute",
        "pending",
    )
    assert call.raw_input == {"tool": "run_command", "detail": "$ pytest -q", "subject": "pytest"}
    assert [(o.option_id, o.name, o.kind) for o in asked["options"]] == [
        ("allow_once", "Allow", "allow_once"),
        ("allow_always", "Always allow", "allow_always"),
        ("reject_once", "Reject", "reject_once"),
        ("reject_always", "Always reject", "reject_always"),
    ]


async def test_always_answers_are_rules_of_the_session_only() -> None:
    client = FakeAcpClient(
        permissions=["allow_always", "reject_always", "allow_once", "reject_once"]
    )
    first = approver(client, "sess-1")
    assert await first.confirm(command("pytest -q"))  # asked: always allow
    assert await first.confirm(command("pytest -x tests/a.py"))  # the rule: same program
    assert not await first.confirm(command("rm -rf build"))  # asked: always reject
    assert not await first.confirm(command("rm x"))  # the rule
    assert len(client.params("session/request_permission")) == 2
    # Another session asks again, whatever the first one's rules.
    other = approver(client, "sess-2")
    assert await other.confirm(command("pytest -q"))
    assert not await other.confirm(command("rm x"))
    assert [p["session_id"] for p in client.params("session/request_permission")] == [
        "sess-1",
        "sess-1",
        "sess-2",
        "sess-2",
    ]


async def test_once_answers_and_cancelled_requests_are_not_remembered() -> None:
    client = FakeAcpClient(permissions=["allow_once", "cancelled", "reject_once"])
    session = approver(client)
    assert await session.confirm(command("make"))
    assert not await session.confirm(command("make"))  # cancelled: refused
    assert not await session.confirm(command("make"))
    assert len(client.params("session/request_permission")) == 3


async def test_rules_are_per_tool_and_subject() -> None:
    client = FakeAcpClient(permissions=["allow_always", "reject_once"])
    session = approver(client)
    write = ApprovalRequest("write_file", "write", "Create a.txt", "...", subject="a.txt")
    assert await session.confirm(write)
    assert await session.confirm(write)
    other = ApprovalRequest("write_file", "write", "Create b.txt", "...", subject="b.txt")
    assert not await session.confirm(other)
    calls = [p["tool_call"] for p in client.params("session/request_permission")]
    assert [c.kind for c in calls] == ["edit", "edit"]
    # Without a tool call id, a fresh one.
    assert all(c.tool_call_id.startswith("rein-approval-") for c in calls)


def test_a_client_that_does_not_answer_refuses_at_the_bound() -> None:
    client = FakeAcpClient(hang=["session/request_permission"])

    async def main() -> None:
        with pytest.raises(ToolError, match=r"within 300 s \(approval.timeoutMs\), so the call"):
            await approver(client).confirm(command("make"))
        assert anyio.current_time() == pytest.approx(300)

    run_in_virtual_time(main)


async def test_the_model_reads_the_refusal(tmp_path: Path) -> None:
    client = FakeAcpClient(permissions=["reject_once"])
    recorder = ToolCallRecorder(
        ToolEnvironment(
            workspace=DiskWorkspace(tmp_path),
            approver=approver(client),
            settings=ToolSettings(approval=ApprovalSettings(command="ask")),
        )
    )
    result = await recorder.run(RunCommandTool(), command="touch ran.txt")
    assert result.is_error and result.details["reason"] == "declined"
    assert result.content.startswith("Denied: the person declined to let you run `touch ran.txt`")
    assert not (tmp_path / "ran.txt").exists()
    # The request named the tool call that asked.
    assert client.params("session/request_permission")[0]["tool_call"].tool_call_id == "call_1"
