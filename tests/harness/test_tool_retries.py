"""Tool retries: a transient failure (a TransientToolError; a refused
connection; a timeout or a network error of a read tool) runs the call again, up to
``harness.toolRetries`` times, with a ``tool_retry`` event before each
retry; anything else is not retried."""

from __future__ import annotations

import anyio
import pytest

from rein.harness import Agent, HarnessConfig, RunResult, ToolResultMessage
from rein.harness.errors import ToolError, TransientToolError
from rein.harness.tools import ToolClass
from rein.providers.replay import ReplayModel
from tests.fakes.clock import run_in_virtual_time
from tests.fakes.events import EventLog, WaitingEventLog
from tests.fakes.tools import FlakyTool

CALL = {"tool_calls": [{"name": "flaky", "arguments": {"text": "a.py"}}]}


def run(
    tool: FlakyTool, config: HarnessConfig | None = None
) -> tuple[Agent, ReplayModel, EventLog, float]:
    """One flaky call, then the model answers; returns the agent, the model,
    the events and the (virtual) seconds the run took."""

    async def main() -> tuple[Agent, ReplayModel, EventLog, float]:
        model = ReplayModel([CALL, {"text": "done"}])
        agent = Agent(model, tools=[tool], config=config or HarnessConfig())
        log = EventLog()
        agent.subscribe(log)
        started = anyio.current_time()
        with anyio.fail_after(60):
            result = await agent.prompt("go")
        assert result.status == "completed", result.error
        return agent, model, log, anyio.current_time() - started

    return run_in_virtual_time(main)


def tool_result(model: ReplayModel) -> ToolResultMessage:
    """The tool result the model read in its second request."""
    (result,) = [m for m in model.requests[1].messages if isinstance(m, ToolResultMessage)]
    return result


def test_a_transient_error_is_retried_until_the_call_works() -> None:
    tool = FlakyTool([TransientToolError("service busy"), TransientToolError("service busy")])
    _, model, log, took = run(tool)
    assert tool.executed == 3
    result = tool_result(model)
    assert not result.is_error and result.content == "worked: a.py"
    retries = log.of("tool_retry")
    assert [(r.attempt, r.max_attempts, r.delay_ms) for r in retries] == [(1, 3, 250), (2, 3, 500)]
    assert all(r.reason == "service busy" and r.tool_call_id == "call_0_0" for r in retries)
    assert took == pytest.approx(0.75)
    # The retries sit between the call's start and its one end.
    types = [t for t in log.types() if t.startswith("tool_")]
    assert types == ["tool_call_start", "tool_retry", "tool_retry", "tool_call_end"]


def test_when_the_retries_are_exhausted_the_model_reads_the_error() -> None:
    tool = FlakyTool([TransientToolError(f"service busy ({i})") for i in range(10)])
    _, model, log, _ = run(tool)
    assert tool.executed == 4
    assert [r.attempt for r in log.of("tool_retry")] == [1, 2, 3]
    result = tool_result(model)
    assert result.is_error
    assert result.content.startswith("service busy (3)")
    assert "failed 4 times in a row: it was retried 3 times" in result.content
    (end,) = log.of("tool_call_end")
    assert end.is_error and end.content == result.content


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ToolError("no such file: a.py"), id="tool-error"),
        pytest.param(RuntimeError("bug in the tool"), id="crash"),
        pytest.param(ValueError("bad value"), id="value-error"),
    ],
)
def test_a_non_transient_error_is_not_retried(error: Exception) -> None:
    tool = FlakyTool([error])
    _, model, log, _ = run(tool)
    assert tool.executed == 1
    assert log.of("tool_retry") == []
    result = tool_result(model)
    assert result.is_error and str(error) in result.content
    assert "retried" not in result.content


def test_a_retried_failure_is_reported_by_its_retry_event_and_the_last_by_an_error_event() -> None:
    worked = FlakyTool([TimeoutError("the editor did not answer")])
    _, _, log, _ = run(worked)
    assert len(log.of("tool_retry")) == 1 and log.of("error") == []
    assert log.of("tool_retry")[0].reason == "flaky failed: TimeoutError: the editor did not answer"

    failed = FlakyTool([TimeoutError(f"no answer ({i})") for i in range(4)])
    _, _, log, _ = run(failed)
    (error,) = log.of("error")
    assert error.message == "tool flaky raised TimeoutError: no answer (3)"


@pytest.mark.parametrize(
    ("error", "tool_class", "retried"),
    [
        pytest.param(TimeoutError("the editor did not answer"), "read", True, id="read-timeout"),
        pytest.param(ConnectionResetError("reset by peer"), "read", True, id="read-network"),
        pytest.param(TimeoutError("the editor did not answer"), "write", False, id="write-timeout"),
        pytest.param(ConnectionResetError("reset by peer"), "write", False, id="write-network"),
        pytest.param(TimeoutError("slow"), "command", False, id="command-timeout"),
        pytest.param(TimeoutError("slow"), "other", False, id="other-timeout"),
        pytest.param(TransientToolError("busy"), "write", True, id="write-transient"),
        pytest.param(ConnectionRefusedError("refused"), "write", True, id="write-refused"),
        pytest.param(ConnectionRefusedError("refused"), "command", True, id="command-refused"),
    ],
)
def test_timeouts_and_network_errors_are_retried_only_where_repeating_is_safe(
    error: Exception, tool_class: ToolClass, retried: bool
) -> None:
    tool = FlakyTool([error], tool_class=tool_class)
    _, model, log, _ = run(tool)
    assert tool.executed == (2 if retried else 1)
    assert len(log.of("tool_retry")) == (1 if retried else 0)
    assert tool_result(model).is_error is not retried


def test_tool_retries_is_configurable_and_zero_turns_them_off() -> None:
    config = HarnessConfig.model_validate({"toolRetries": 1})
    assert config.tool_retries == 1
    tool = FlakyTool([TransientToolError("busy")] * 5)
    _, _, log, _ = run(tool, config)
    assert tool.executed == 2 and len(log.of("tool_retry")) == 1
    assert log.of("tool_retry")[0].max_attempts == 1

    off = FlakyTool([TransientToolError("busy")])
    _, model, log, _ = run(off, HarnessConfig(tool_retries=0))
    assert off.executed == 1 and log.of("tool_retry") == []
    assert tool_result(model).is_error


def test_tool_retries_rejects_nonsense() -> None:
    for bad in (-1, 11, "often"):
        with pytest.raises(ValueError, match="toolRetries"):
            HarnessConfig.model_validate({"toolRetries": bad})
    assert HarnessConfig().tool_retries == 3


def test_the_loop_cap_default_follows_the_seed() -> None:
    assert HarnessConfig().max_model_turns_per_run == 100


def test_an_abort_during_the_pause_ends_the_call_without_another_attempt() -> None:
    async def main() -> None:
        tool = FlakyTool([TransientToolError("busy")] * 5)
        agent = Agent(ReplayModel([CALL, {"text": "never asked"}]), tools=[tool])
        log = WaitingEventLog()
        agent.subscribe(log)
        results: list[RunResult] = []

        async def run() -> None:
            results.append(await agent.prompt("go"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await log.wait_for(lambda events: any(e.type == "tool_retry" for e in events))
            agent.abort("the person pressed stop")
        assert results[0].status == "aborted"
        assert tool.executed == 1, "no attempt after the abort"
        (end,) = log.of("tool_call_end")
        assert end.is_error and "aborted" in end.content

    run_in_virtual_time(main)


def test_the_cli_prints_a_retry() -> None:
    import io

    from rein.harness.events import ToolRetry
    from rein.render import EventPrinter

    out = io.StringIO()
    EventPrinter(out)(
        ToolRetry(
            tool_call_id="c1",
            name="read_file",
            attempt=2,
            max_attempts=3,
            reason="read_file failed: TimeoutError: slow",
            delay_ms=500,
        )
    )
    assert (
        "read_file retry 2 of 3 in 500 ms: read_file failed: TimeoutError: slow" in out.getvalue()
    )
