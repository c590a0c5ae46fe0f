"""Approvals through ``session/request_permission`` (``rein.acp.permissions``),
against the fake client of tests/fakes.py: the options, "always allow" kept
as rules of the session's rule book (exactly the command, or the wider rule
the person chose), "always reject" of a session (not of another), a
cancelled request and a client that does not answer refuse the call."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from rein.acp.permissions import PermissionApprover
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import ToolError
from rein.harness.ports import ApprovalAnswer, ApprovalRequest
from rein.harness.tools import ToolEnvironment
from rein.tools import RunCommandTool, WriteFileTool
from rein.tools.approval_rules import RuleBook, suggest_rules, widen
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes.acp_client import FakeAcpClient, FakeClientLink
from tests.fakes.clock import run_in_virtual_time
from tests.fakes.tools import ToolCallRecorder


def approver(client: FakeAcpClient, session_id: str = "sess-1") -> PermissionApprover:
    return PermissionApprover(FakeClientLink(client), session_id, timeout_s=300)  # type: ignore[arg-type]


def command(text: str, call_id: str | None = "call-9") -> ApprovalRequest:
    rules = suggest_rules("command", text)
    return ApprovalRequest(
        tool="run_command",
        approval_class="command",
        title=f"Run: {text}",
        detail=f"$ {text}",
        subject=text,
        tool_call_id=call_id,
        rules=rules,
        prefix_rules=widen(rules),
    )


@pytest.mark.parametrize(
    ("answer", "allowed"),
    [
        pytest.param("allow_once", True, id="allow_once"),
        pytest.param("allow_always", ApprovalAnswer(True, "session"), id="allow_always"),
        pytest.param("reject_once", False, id="reject_once"),
        pytest.param("reject_always", False, id="reject_always"),
    ],
)
async def test_each_option_is_the_person_s_answer(answer: str, allowed: object) -> None:
    client = FakeAcpClient(permissions=[answer])
    assert await approver(client).confirm(command("ls -la")) == allowed
    [asked] = client.params("session/request_permission")
    assert asked["session_id"] == "sess-1"
    call = asked["tool_call"]
    assert (call.tool_call_id, call.title, call.kind, call.status) == (
        "call-9",
        "Run: ls -la",
        "execute",
        "pending",
    )
    assert call.raw_input == {
        "tool": "run_command",
        "detail": "$ ls -la",
        "subject": "ls -la",
    }
    assert [(o.option_id, o.name, o.kind) for o in asked["options"]] == [
        ("allow_once", "Allow", "allow_once"),
        ("allow_always", "Always allow this exact command: `ls -la`", "allow_always"),
        ("reject_once", "Reject", "reject_once"),
        ("reject_always", "Always reject", "reject_always"),
    ]


async def test_the_wider_rule_is_a_choice_of_its_own() -> None:
    client = FakeAcpClient(permissions=["allow_always_prefix"])
    answer = await approver(client).confirm(command("git log -5 && npm test"))
    assert answer == ApprovalAnswer(True, "session", prefix=True)
    [asked] = client.params("session/request_permission")
    assert [(o.option_id, o.name) for o in asked["options"]][1:3] == [
        ("allow_always", "Always allow these exact commands: `git log -5`, `npm test`"),
        ("allow_always_prefix", "Always allow commands starting with `git log`, `npm test`"),
    ]


async def test_a_request_no_rule_can_keep_offers_no_always_allow() -> None:
    client = FakeAcpClient(permissions=["allow_once"])
    assert await approver(client).confirm(command("ls $(touch M)"))
    [asked] = client.params("session/request_permission")
    assert [o.option_id for o in asked["options"]] == ["allow_once", "reject_once", "reject_always"]


async def test_always_reject_refuses_the_same_call_in_the_session_only() -> None:
    client = FakeAcpClient(permissions=["reject_always", "reject_once", "allow_once"])
    first = approver(client, "sess-1")
    assert not await first.confirm(command("rm -rf build"))  # asked: always reject
    assert not await first.confirm(command("rm -rf build"))  # the rule
    assert not await first.confirm(command("rm x"))  # another command: asked
    # Another session asks again, whatever the first one's answers.
    assert await approver(client, "sess-2").confirm(command("rm -rf build"))
    assert [p["session_id"] for p in client.params("session/request_permission")] == [
        "sess-1",
        "sess-1",
        "sess-2",
    ]


async def test_once_answers_and_cancelled_requests_are_not_remembered() -> None:
    client = FakeAcpClient(permissions=["allow_once", "cancelled", "reject_once"])
    session = approver(client)
    assert await session.confirm(command("make"))
    assert not await session.confirm(command("make"))  # cancelled: refused
    assert not await session.confirm(command("make"))
    assert len(client.params("session/request_permission")) == 3


def _recorder(tmp_path: Path, client: FakeAcpClient, book: RuleBook) -> ToolCallRecorder:
    return ToolCallRecorder(
        ToolEnvironment(
            workspace=DiskWorkspace(tmp_path),
            approver=approver(client),
            approval_rules=book,
            settings=ToolSettings(approval=ApprovalSettings(command="ask", write="ask")),
        )
    )


async def test_always_allow_on_ls_la_allows_only_ls_la(tmp_path: Path) -> None:
    """Issue 30: "Always allow" on ``ls -la`` let ``ls && touch M`` and
    ``ls $(touch M)`` run unasked."""
    client = FakeAcpClient(permissions=["allow_always", "reject_once", "reject_once"])
    book = RuleBook(root=str(tmp_path))
    calls = _recorder(tmp_path, client, book)
    assert not (await calls.run(RunCommandTool(), command="ls -la")).is_error
    assert [r.pattern for r in await book.rules()] == ["ls -la"]
    assert not (await calls.run(RunCommandTool(), command="ls -la")).is_error  # not asked
    for line in ("ls -la && touch M", "ls $(touch M)"):
        result = await calls.run(RunCommandTool(), command=line)
        assert result.is_error and result.details["reason"] == "declined", line
    assert not (tmp_path / "M").exists()
    assert len(client.params("session/request_permission")) == 3


async def test_write_rules_are_per_folder(tmp_path: Path) -> None:
    client = FakeAcpClient(permissions=["allow_always", "reject_once"])
    book = RuleBook(root=str(tmp_path))
    calls = _recorder(tmp_path, client, book)
    assert not (await calls.run(WriteFileTool(), path="src/a.txt", content="a")).is_error
    assert not (await calls.run(WriteFileTool(), path="src/b.txt", content="b")).is_error
    refused = await calls.run(WriteFileTool(), path="c.txt", content="c")
    assert refused.is_error
    asked = client.params("session/request_permission")
    assert [o.name for o in asked[0]["options"]][1] == "Always allow writes to `src/**`"
    assert [p["tool_call"].kind for p in asked] == ["edit", "edit"]


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
