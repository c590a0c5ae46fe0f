"""What a session offers of the MCP tools: the context budget and lazy tools."""

from __future__ import annotations

from typing import Any

from rein.harness.events import McpBudgetWarning
from rein.harness.hooks import TurnInfo
from rein.harness.run.run_record import RunRecord
from rein.harness.tools import ToolContext, ToolEnvironment, ToolRegistry
from rein.mcp.manager import McpManager
from rein.mcp.offer import SEARCH_TOOL, McpOffer, SearchToolsArgs, tool_tokens
from rein.mcp.tools import McpToolInfo, build_tools
from tests.fakes.mcp import FakeMcpConnection
from tests.mcp.conftest import toolbox_spec

SCHEMA = {"type": "object", "properties": {"q": {"type": "string", "description": "x" * 200}}}


def _tools(server: str, n: int) -> list[McpToolInfo]:
    return [McpToolInfo(server, f"tool{i}", f"Tool {i} of {server}.", SCHEMA) for i in range(n)]


def _manager(**include: tuple[str, ...]) -> McpManager:
    specs = [toolbox_spec("big"), toolbox_spec("small", include_tools=include.get("small"))]
    tools = {"big": _tools("big", 30), "small": _tools("small", 2)}
    return McpManager(specs, connect=FakeMcpConnection.factory(tools))


class Offered:
    def __init__(self, manager: McpManager, window: int, lazy: bool = False) -> None:
        self.events: list[Any] = []
        self.prompts = 0
        self.registry = ToolRegistry()
        self.offer = McpOffer(
            manager,
            self.registry,
            window=window,
            max_share=0.1,
            lazy=lazy,
            emit=self.events.append,
            on_change=self._changed,
        )

    def _changed(self) -> None:
        self.prompts += 1


async def test_within_the_budget_every_tool_is_offered() -> None:
    offered = Offered(_manager(), window=1_000_000)
    await offered.offer.before_run()
    assert len(offered.registry) == 32
    assert offered.events == []
    assert offered.prompts == 1


async def test_over_the_budget_only_include_tools_servers_are_offered_and_warned_once() -> None:
    manager = _manager(small=("tool0", "tool1"))
    offered = Offered(manager, window=20_000)
    await offered.offer.before_run()
    total = sum(tool_tokens(t) for t in build_tools(manager.tool_infos(), manager))
    assert total > 2_000
    assert sorted(offered.registry.names()) == ["mcp__small__tool0", "mcp__small__tool1"]
    [warning] = offered.events
    assert isinstance(warning, McpBudgetWarning)
    assert (warning.offered, warning.total, warning.window) == (2, 32, 20_000)
    assert warning.tokens == total
    offered.offer.sync()
    assert len(offered.events) == 1  # once per session


async def test_lazy_tools_offer_the_search_tool_and_enable_at_the_next_turn() -> None:
    offered = Offered(_manager(), window=1_000_000, lazy=True)
    await offered.offer.before_run()
    assert offered.registry.names() == [SEARCH_TOOL]
    search = offered.registry.get(SEARCH_TOOL)
    assert search is not None
    ctx = ToolContext(
        "c1", SEARCH_TOOL, ToolEnvironment(), lambda *_: None, lambda: False, RunRecord()
    )
    found = await search.execute(SearchToolsArgs(query="tool1 small"), ctx)
    assert "mcp__small__tool1" in found.content and "mcp__big__tool1" not in found.content
    enabled = await search.execute(SearchToolsArgs(enable=["mcp__small__tool1", "nope"]), ctx)
    assert "Enabled from the next turn on: mcp__small__tool1" in enabled.content
    assert "No MCP tool is named: nope" in enabled.content
    assert await offered.offer.before_turn(TurnInfo("run", 2, []))
    assert sorted(offered.registry.names()) == sorted([SEARCH_TOOL, "mcp__small__tool1"])
    assert not await offered.offer.before_turn(TurnInfo("run", 3, []))


async def test_a_server_that_keeps_failing_after_a_crash_is_given_up_and_says_so() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    manager = McpManager(
        [toolbox_spec("x")],
        connect=FakeMcpConnection.factory({"x": _tools("x", 1)}, starts=[True, False, False]),
        restart_backoff_s=(1.0, 2.0),
        sleep=sleep,
    )
    states: list[tuple[str, str | None]] = []
    manager.subscribe(lambda s: states.append((s.state, s.error)))
    await manager.ensure_started()
    result = await manager.call_tool("x", "crash", {})
    assert result.is_error and "stopped while running crash" in result.content
    await manager.restarts_settled()
    assert slept == [1.0, 2.0]
    assert [s for s, _ in states] == [
        "starting",
        "running",
        "failed",
        "starting",
        "failed",
        "starting",
        "failed",
        "failed",
    ]
    final = states[-1][1]
    assert final is not None and final.startswith("gave up after 2 restarts")
    assert manager.snapshot()["servers"][0]["state"] == "failed"


async def test_a_tool_whose_schema_the_providers_refuse_is_skipped_with_the_reason() -> None:
    bad = McpToolInfo("x", "bad", "Bad.", {"type": "array"})
    good = McpToolInfo("x", "good", "Good.", SCHEMA)
    manager = McpManager([toolbox_spec("x")], connect=FakeMcpConnection.factory({"x": [bad, good]}))
    await manager.ensure_started()
    assert [t.name for t in manager.tool_infos()] == ["good"]
    [server] = manager.snapshot()["servers"]
    assert server["tools"] == ["good"]
    [skipped] = server["skippedTools"]
    assert skipped["tool"] == "bad" and 'need "object"' in skipped["reason"]
