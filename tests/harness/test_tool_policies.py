"""The tool policies of the Agent: the misuse breaker's thresholds (or no
breaker) and stuck-call supervision (heartbeats, cancel / retry / error)."""

from __future__ import annotations

import time

import anyio
import pytest
from pydantic import ValidationError

from rein.harness import Agent, HarnessConfig, ToolContext, ToolResultMessage, UserMessage
from rein.harness.config import StuckToolConfig, ToolMisuseBreakerConfig
from rein.harness.events import Event
from rein.providers.replay import ReplayModel
from tests.fakes.clock import run_in_virtual_time
from tests.fakes.events import EventLog
from tests.fakes.tools import EchoArgs, FailTool, FunctionTool


def failing_turns(n: int) -> list[dict]:
    return [
        {"tool_calls": [{"name": "fail", "arguments": {"message": "no such file"}}]}
        for _ in range(n)
    ]


def noted(model: ReplayModel) -> list[int]:
    """Indices of the requests that carried a breaker note."""
    return [
        i
        for i, r in enumerate(model.requests)
        if any(isinstance(m, UserMessage) and m.origin == "nudge" for m in r.messages)
    ]


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.messages if isinstance(m, ToolResultMessage)]


# ------------------------------------------------------------------ breaker


async def test_the_breaker_thresholds_are_configurable() -> None:
    fail = FailTool()
    model = ReplayModel([*failing_turns(5), {"text": "done"}])
    agent = Agent(
        model, tools=[fail], tool_misuse_breaker=ToolMisuseBreakerConfig(note_at=2, block_at=3)
    )
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    assert noted(model) == [2]
    assert fail.executed == 3
    assert all("will not be executed again" in r.content for r in results(agent)[3:])


async def test_the_breaker_can_be_turned_off() -> None:
    fail = FailTool()
    model = ReplayModel([*failing_turns(8), {"text": "done"}])
    agent = Agent(model, tools=[fail], tool_misuse_breaker=None)
    assert agent.tool_misuse_breaker is None
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    assert fail.executed == 8 and noted(model) == []


async def test_the_breaker_follows_the_configuration_unless_set() -> None:
    config = HarnessConfig.model_validate({"toolMisuseBreaker": None})
    agent = Agent(ReplayModel([]), config=config)
    assert agent.tool_misuse_breaker is None
    agent.config = HarnessConfig.model_validate({"toolMisuseBreaker": {"noteAt": 2}})
    assert agent.tool_misuse_breaker == ToolMisuseBreakerConfig(note_at=2)
    agent.tool_misuse_breaker = None
    assert agent.tool_misuse_breaker is None


# -------------------------------------------------------------- stuck tools


def test_stuck_tool_config_keys() -> None:
    config = HarnessConfig.model_validate(
        {"toolHeartbeatMs": 0, "toolTimeoutMs": 2000, "stuckToolPolicy": "retry"}
    )
    assert config.stuck_tool == StuckToolConfig(heartbeat_ms=0, timeout_ms=2000, policy="retry")
    assert Agent(ReplayModel([]), config=config).stuck_tool == config.stuck_tool
    with pytest.raises(ValidationError):
        HarnessConfig.model_validate({"toolHeartbeatMs": 5})
    with pytest.raises(ValidationError):
        HarnessConfig.model_validate({"stuckToolPolicy": "ignore"})


def slow_tool(seconds: float) -> FunctionTool:
    async def slow(args: EchoArgs, ctx: ToolContext) -> str:
        await anyio.sleep(seconds)
        return "finished"

    return FunctionTool("slow", slow)


def one_call(name: str = "slow") -> list[dict]:
    return [{"tool_calls": [{"name": name, "arguments": {"text": "x"}}]}, {"text": "ok"}]


def run_slow(agent_kwargs: dict, seconds: float = 1.0) -> tuple[Agent, EventLog]:
    async def main() -> tuple[Agent, EventLog]:
        agent = Agent(ReplayModel(one_call()), tools=[slow_tool(seconds)], **agent_kwargs)
        log = EventLog()
        agent.subscribe(log)
        with anyio.fail_after(60):
            result = await agent.prompt("go")
        assert result.status == "completed", result.error
        return agent, log

    return run_in_virtual_time(main)


def heartbeats(log: EventLog) -> list[object]:
    return [e for e in log.of("tool_call_update") if e.kind == "heartbeat"]


def test_heartbeats_can_be_disabled() -> None:
    _, on = run_slow({"stuck_tool": StuckToolConfig(heartbeat_ms=100)})
    assert len(heartbeats(on)) >= 5
    agent, off = run_slow({"stuck_tool": StuckToolConfig(heartbeat_ms=0)})
    assert heartbeats(off) == []
    assert results(agent)[0].content == "finished"


def test_an_unsupervised_agent_has_no_heartbeats_and_no_limit() -> None:
    config = HarnessConfig(tool_heartbeat_ms=100, tool_timeout_ms=1000)
    agent, log = run_slow({"config": config, "stuck_tool": None}, seconds=5.0)
    assert heartbeats(log) == []
    assert results(agent)[0].content == "finished"


def test_a_stuck_call_is_retried_once_by_policy() -> None:
    attempts: list[int] = []

    async def stuck_once(args: EchoArgs, ctx: ToolContext) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            await anyio.sleep(3600)
        return "second try"

    async def main() -> tuple[Agent, EventLog]:
        agent = Agent(
            ReplayModel(one_call("flaky")),
            tools=[FunctionTool("flaky", stuck_once)],
            stuck_tool=StuckToolConfig(heartbeat_ms=0, timeout_ms=100, policy="retry"),
        )
        log = EventLog()
        agent.subscribe(log)
        with anyio.fail_after(60):
            await agent.prompt("go")
        return agent, log

    agent, log = run_in_virtual_time(main)
    assert len(attempts) == 2
    [result] = results(agent)
    assert result.content == "second try" and not result.is_error
    statuses = [e.text for e in log.of("tool_call_update") if e.kind == "status"]
    assert statuses == ["stuck after 0.1 s: cancelled, retrying once"]


def test_a_call_stuck_twice_becomes_an_error_result() -> None:
    agent, _ = run_slow(
        {"stuck_tool": StuckToolConfig(heartbeat_ms=0, timeout_ms=100, policy="retry")},
        seconds=3600,
    )
    [result] = results(agent)
    assert result.is_error and "retried once" in result.content


def test_a_stuck_call_is_converted_to_an_error_result_by_default() -> None:
    agent, _ = run_slow({"config": HarnessConfig(tool_timeout_ms=100)}, seconds=3600)
    [result] = results(agent)
    assert result.is_error and "did not finish within 0.1 s" in result.content
    assert "retried" not in result.content


def test_a_stuck_call_under_the_cancel_policy_aborts_the_run() -> None:
    """The stuck call is cancelled, the batch's other call (still running)
    gets an aborted result, and the run ends as aborted."""
    never = anyio.Event()

    async def waits(args: EchoArgs, ctx: ToolContext) -> str:
        await never.wait()
        return "never"

    patient = FunctionTool("patient", waits)
    patient.timeout_s = 3600

    async def main() -> tuple[Agent, object]:
        model = ReplayModel(
            [
                {
                    "tool_calls": [
                        {"name": "slow", "arguments": {"text": "a"}},
                        {"name": "patient", "arguments": {"text": "b"}},
                    ]
                },
                {"text": "never asked"},
            ]
        )
        agent = Agent(
            model,
            tools=[slow_tool(3600), patient],
            stuck_tool=StuckToolConfig(heartbeat_ms=0, timeout_ms=100, policy="cancel"),
        )
        with anyio.fail_after(60):
            result = await agent.prompt("go")
        assert len(model.requests) == 1
        return agent, result

    agent, result = run_in_virtual_time(main)
    assert result.status == "aborted"  # type: ignore[attr-defined]
    assert "slow was stuck" in (result.error or "")  # type: ignore[attr-defined]
    stuck, other = results(agent)
    assert stuck.is_error and "did not finish within 0.1 s" in stuck.content
    assert other.is_error and other.content.startswith("Tool call aborted: slow was stuck")


def test_a_tool_limit_shorter_than_the_heartbeat_cuts_the_call_at_that_limit() -> None:
    """The run's supervisor sleeps a heartbeat interval while idle; a call
    whose own limit falls due sooner wakes it, so the call is cut at 0.05 s,
    not at the next heartbeat (5 s)."""
    tool = slow_tool(3600)
    tool.timeout_s = 0.05

    async def brief(args: EchoArgs, ctx: ToolContext) -> str:
        await anyio.sleep(0.01)  # the supervisor is asleep when "slow" starts
        return "brief"

    script = [{"tool_calls": [{"name": "brief", "arguments": {"text": "x"}}]}, *one_call()]

    stamps: dict[str, float] = {}

    def clock(event: Event) -> None:  # time.monotonic reads the fake clock here
        if getattr(event, "name", None) == "slow":
            stamps[event.type] = time.monotonic()

    async def main() -> EventLog:
        agent = Agent(
            ReplayModel(script), tools=[FunctionTool("brief", brief), tool], config=HarnessConfig()
        )
        log = EventLog()
        agent.subscribe(log)
        agent.subscribe(clock)
        with anyio.fail_after(60):
            await agent.prompt("go")
        return log

    log = run_in_virtual_time(main)
    [_, end] = log.of("tool_call_end")
    assert end.is_error and "did not finish within 0.05 s" in end.content
    assert stamps["tool_call_end"] - stamps["tool_call_start"] < 1.0
    assert heartbeats(log) == []


def test_an_unsupervised_call_is_still_cut_at_its_tools_own_limit() -> None:
    tool = slow_tool(3600)
    tool.timeout_s = 0.2

    async def main() -> Agent:
        agent = Agent(ReplayModel(one_call()), tools=[tool], stuck_tool=None)
        with anyio.fail_after(60):
            await agent.prompt("go")
        return agent

    [result] = results(run_in_virtual_time(main))
    assert result.is_error and "did not finish within 0.2 s" in result.content
