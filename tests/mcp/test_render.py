"""`rein run`'s printed lines for MCP events."""

from __future__ import annotations

from rein.harness.events import McpBudgetWarning, McpServerState, ToolCallStart
from tests.printed import printed


def test_server_states_budget_and_tool_rows_are_printed() -> None:
    text = printed(
        McpServerState(server="time", state="starting", source="settings"),
        McpServerState(server="time", state="running", tools=2, source="settings"),
        McpServerState(server="db", state="failed", error="did not start", source="mcp.json"),
        McpBudgetWarning(tokens=20000, window=100000, share=0.2, offered=2, total=40),
        ToolCallStart(
            tool_call_id="c1",
            name="mcp__time__get_current_time",
            arguments={"timezone": "UTC"},
            details={"mcpServer": "time", "mcpTool": "get_current_time"},
        ),
    )
    assert "starting" not in text
    assert "MCP server time running with 2 tool(s)" in text
    assert "MCP server db failed: did not start" in text
    assert "20000 tokens (20% of the window): 2 of 40 offered" in text
    assert "mcp__time__get_current_time (MCP server time)" in text
