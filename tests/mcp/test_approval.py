"""MCP calls and approvals: class "mcp", mcpAllow rules, the question's text."""

from __future__ import annotations

import pytest

from rein.harness.hooks import Permit
from rein.harness.ports import ApprovalAnswer, ApprovalRule
from rein.harness.run.run_record import RunRecord
from rein.harness.tools import ToolContext, ToolEnvironment
from rein.mcp.manager import McpManager
from rein.mcp.tools import McpArgs, McpToolInfo, build_tools
from rein.tools.approval_rules import RuleBook
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes.approvals import FakeApprover
from tests.fakes.mcp import FakeMcpConnection
from tests.mcp.conftest import toolbox_spec

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}


async def _call(
    approval: ApprovalSettings,
    approver: FakeApprover,
    rules: RuleBook | None = None,
    permit: Permit | None = None,
) -> tuple[bool, McpManager]:
    manager = McpManager(
        [toolbox_spec("box")],
        connect=FakeMcpConnection.factory({"box": [McpToolInfo("box", "echo", "Echo.", SCHEMA)]}),
    )
    await manager.ensure_started()
    [tool] = build_tools(manager.tool_infos(), manager)
    env = ToolEnvironment(
        approver=approver, settings=ToolSettings(approval=approval), approval_rules=rules
    )
    ctx = ToolContext(
        "c1", tool.name, env, lambda *_: None, lambda: False, RunRecord(), permit=permit
    )
    result = await tool.execute(McpArgs.model_validate({"text": "the plan"}), ctx)
    assert result.details["mcpServer"] == "box" and result.details["mcpTool"] == "echo"
    return not result.is_error, manager


async def test_ask_names_the_server_the_tool_and_the_arguments() -> None:
    approver = FakeApprover(answer=True)
    ran, _ = await _call(ApprovalSettings(), approver)
    assert ran
    [request] = approver.requests
    assert request.approval_class == "mcp"
    assert "box" in request.title and "echo" in request.title
    assert '"text": "the plan"' in request.detail


async def test_a_declined_call_is_not_made() -> None:
    ran, manager = await _call(ApprovalSettings(), FakeApprover(answer=False))
    assert not ran
    connection = manager.servers["box"].connection
    assert isinstance(connection, FakeMcpConnection) and connection.calls == []


@pytest.mark.parametrize(
    ("approval", "asked", "ran"),
    [
        pytest.param(ApprovalSettings(mcp_allow=("box",)), False, True, id="server-rule"),
        pytest.param(ApprovalSettings(mcp_allow=("box/echo",)), False, True, id="tool-rule"),
        pytest.param(ApprovalSettings(mcp_allow=("box/other",)), True, True, id="other-tool"),
        pytest.param(ApprovalSettings(mcp="allow"), False, True, id="allow"),
        pytest.param(
            ApprovalSettings(mcp="deny", mcp_allow=("box",)), False, False, id="deny-wins"
        ),
    ],
)
async def test_policies_and_allow_rules(approval: ApprovalSettings, asked: bool, ran: bool) -> None:
    approver = FakeApprover(answer=True)
    made, _ = await _call(approval, approver)
    assert made is ran
    assert bool(approver.requests) is asked


async def test_always_allow_keeps_the_server_tool_rule_and_stops_asking() -> None:
    rules = RuleBook()
    approver = FakeApprover(ApprovalAnswer(approved=True, remember="session"))
    ran, _ = await _call(ApprovalSettings(), approver, rules)
    assert ran
    assert approver.requests[0].rules == (ApprovalRule("mcp", "box/echo"),)
    again, _ = await _call(ApprovalSettings(), approver, rules)
    assert again and len(approver.requests) == 1


async def test_a_server_rule_allows_its_tools_but_a_deny_policy_still_wins() -> None:
    rules = RuleBook()
    await rules.remember("session", [ApprovalRule("mcp", "box")])
    approver = FakeApprover(answer=False)
    ran, _ = await _call(ApprovalSettings(), approver, rules)
    assert ran and approver.requests == []
    denied, _ = await _call(ApprovalSettings(mcp="deny"), approver, rules)
    assert not denied


async def test_a_hook_s_ask_reaches_the_person_over_mcp_allow_and_a_kept_rule() -> None:
    rules = RuleBook()
    await rules.remember("session", [ApprovalRule("mcp", "box")])
    approver = FakeApprover(answer=False)
    ask = Permit("ask", "the PreToolUse hook wants a look")
    ran, _ = await _call(ApprovalSettings(mcp_allow=("box",)), approver, rules, ask)
    assert not ran
    [request] = approver.requests
    assert "wants a look" in request.detail and request.rules == ()
