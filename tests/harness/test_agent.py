"""Scripted tests of the loop and the Agent: every behaviour of the core."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from rein.harness import (
    Agent,
    AgentBusyError,
    AssistantMessage,
    Block,
    Hooks,
    ToolContext,
    ToolResult,
    ToolResultMessage,
    TurnOverrides,
    UserMessage,
)
from rein.harness.agent import dangling_tool_calls
from rein.harness.conversation.tokens import estimate_tokens
from rein.harness.messages import Usage
from rein.harness.ports import ModelOptions, ModelRequest
from rein.providers.replay import ReplayModel
from tests.fakes.clock import run_in_virtual_time
from tests.fakes.events import EventLog, assert_well_formed
from tests.fakes.flows import build_agent_flow
from tests.fakes.models import FunctionModel, assistant, call
from tests.fakes.tools import EchoArgs, EchoTool, FailTool, FunctionTool, SleepTool


def make_agent(model, *tools, **config) -> tuple[Agent, EventLog]:
    return build_agent_flow(model, *(tools or (EchoTool(), FailTool())), **config)


def tool_results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.messages if isinstance(m, ToolResultMessage)]


async def test_simple_run_emits_the_event_tree_and_returns_the_answer() -> None:
    model = ReplayModel([{"text": "Hello there", "usage": {"input_tokens": 7, "output_tokens": 2}}])
    agent, log = make_agent(model)
    result = await agent.prompt("hi")
    assert result.status == "completed"
    assert result.text == "Hello there"
    assert result.turns == 1
    assert result.usage.input_tokens == 7
    assert log.types() == [
        "agent_start",
        "run_start",
        "message_start",
        "message_end",
        "turn_start",
        "message_start",
        "message_delta",
        "message_end",
        "turn_end",
        "run_end",
        "agent_end",
    ]
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    assert model.requests[0].messages == [UserMessage(content="hi")]
    assert model.requests[0].tools == ["echo", "fail"]


async def test_tool_call_result_reaches_the_model() -> None:
    model = ReplayModel(
        [
            {"tool_calls": [{"name": "echo", "arguments": {"text": "ping"}}]},
            {
                "text": "done",
                "expect": {"last_role": "tool", "last_message_contains": "echo: ping"},
            },
        ]
    )
    agent, log = make_agent(model)
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    last_seen = model.requests[1].messages[-1]
    assert isinstance(last_seen, ToolResultMessage)
    assert last_seen.content == "echo: ping" and not last_seen.is_error
    end = log.of("tool_call_end")[0]
    assert end.name == "echo" and end.content == "echo: ping" and end.duration_ms >= 0


async def test_max_model_turns_per_run_fails_the_run() -> None:
    turns = [{"tool_calls": [{"name": "echo", "arguments": {"text": str(i)}}]} for i in range(5)]
    model = ReplayModel(turns)
    agent, log = make_agent(model, EchoTool(), max_model_turns_per_run=3)
    result = await agent.prompt("loop")
    assert result.status == "failed"
    assert "3 model turns" in (result.error or "")
    assert len(model.requests) == 3
    assert dangling_tool_calls(agent.messages) == []
    assert_well_formed(log.types())


@pytest.mark.parametrize(
    ("tool_call", "expected"),
    [
        pytest.param(
            {"name": "nope", "arguments": {}},
            "Unknown tool 'nope'. Available tools: echo, fail",
            id="unknown-tool",
        ),
        pytest.param(
            {"name": "echo", "arguments": {"txt": 1}},
            "text: Field required",
            id="invalid-arguments",
        ),
        pytest.param(
            {"name": "echo", "raw_arguments": "{not json"}, "not valid JSON", id="invalid-json"
        ),
        pytest.param(
            {"name": "fail", "arguments": {"message": "disk full"}}, "disk full", id="tool-error"
        ),
        pytest.param(
            {"name": "fail", "arguments": {"message": "kaput", "kind": "crash"}},
            "fail failed: RuntimeError: kaput",
            id="tool-crash",
        ),
    ],
)
async def test_every_tool_failure_becomes_an_error_result(tool_call: dict, expected: str) -> None:
    model = ReplayModel([{"tool_calls": [tool_call]}, {"text": "ok"}])
    agent, _log = make_agent(model)
    result = await agent.prompt("try")
    assert result.status == "completed"
    [res] = tool_results(agent)
    assert res.is_error
    assert expected in res.content
    # The model saw the error text so it can repair the call.
    assert model.requests[1].messages[-1] == res
    assert dangling_tool_calls(agent.messages) == []


async def test_a_crashing_tool_is_reported_as_an_error_event() -> None:
    model = ReplayModel(
        [{"tool_calls": [{"name": "fail", "arguments": {"kind": "crash"}}]}, {"text": "ok"}]
    )
    agent, log = make_agent(model)
    await agent.prompt("x")
    assert any(e.where == "tool:fail" for e in log.of("error"))


async def test_parallel_tools_run_concurrently_and_results_keep_call_order() -> None:
    order: list[str] = []
    gate = anyio.Event()

    async def slow(args: EchoArgs, ctx: ToolContext) -> str:
        order.append(f"start {args.text}")
        if args.text == "a":
            await gate.wait()  # only finishes if b runs meanwhile
        else:
            gate.set()
        order.append(f"end {args.text}")
        return args.text

    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {"name": "slow", "arguments": {"text": "a"}},
                    {"name": "slow", "arguments": {"text": "b"}},
                ]
            },
            {"text": "done"},
        ]
    )
    agent, _ = make_agent(model, FunctionTool("slow", slow))
    with anyio.fail_after(5):
        await agent.prompt("go")
    assert order == ["start a", "start b", "end b", "end a"]
    assert [r.content for r in tool_results(agent)] == ["a", "b"]


async def test_sequential_tools_run_one_after_another() -> None:
    order: list[str] = []

    async def rec(args: EchoArgs, ctx: ToolContext) -> str:
        order.append(f"start {args.text}")
        await anyio.lowlevel.checkpoint()
        order.append(f"end {args.text}")
        return args.text

    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {"name": "rec", "arguments": {"text": "a"}},
                    {"name": "rec", "arguments": {"text": "b"}},
                ]
            },
            {"text": "done"},
        ]
    )
    agent, _ = make_agent(model, FunctionTool("rec", rec), tool_execution="sequential")
    await agent.prompt("go")
    assert order == ["start a", "end a", "start b", "end b"]


async def test_steering_is_injected_before_the_next_model_call() -> None:
    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        if len(model.requests) == 1:
            agent.steer("use pathlib instead")
            return assistant("", call("echo", "c1", text="x"))
        return assistant("ok, pathlib")

    model = FunctionModel(turn)
    agent, log = make_agent(model)
    result = await agent.prompt("start")
    assert result.status == "completed"
    second = model.requests[1].messages
    assert isinstance(second[-1], UserMessage) and second[-1].content == "use pathlib instead"
    assert isinstance(second[-2], ToolResultMessage)  # after the tool result, before the call
    assert log.of("steering_applied")[0].texts == ["use pathlib instead"]
    assert not agent.has_queued_messages()


async def test_steering_asks_running_tools_to_yield() -> None:
    sleeper = SleepTool()
    model = ReplayModel(
        [{"tool_calls": [{"name": "sleep", "arguments": {"seconds": 30}}]}, {"text": "ok"}]
    )
    agent, _ = make_agent(model, sleeper)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await sleeper.started.wait()
        agent.steer("stop sleeping")
    assert sleeper.yielded
    assert "stopped early" in tool_results(agent)[0].content
    assert model.requests[1].messages[-1] == UserMessage(content="stop sleeping", origin="steer")


@pytest.mark.parametrize(
    ("mode", "expected_runs"),
    [pytest.param("one-at-a-time", 3, id="one-at-a-time"), pytest.param("all", 2, id="all")],
)
async def test_follow_ups_start_new_runs_when_the_agent_would_stop(
    mode: str, expected_runs: int
) -> None:
    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        if len(model.requests) == 1:
            agent.follow_up("and then A")
            agent.follow_up("and then B")
        return assistant(f"answer {len(model.requests)}")

    model = FunctionModel(turn)
    agent, log = make_agent(model, follow_up_mode=mode)
    result = await agent.prompt("first")
    assert result.status == "completed"
    assert len(log.of("run_start")) == expected_runs
    assert result.text == f"answer {expected_runs}"
    users = [m.content for m in agent.messages if isinstance(m, UserMessage)]
    if mode == "all":
        assert users == ["first", "and then A", "and then B"]
        assert log.of("follow_up_started")[0].text == "and then A\n\nand then B"
    else:
        assert users == ["first", "and then A", "and then B"]
        assert [e.text for e in log.of("follow_up_started")] == ["and then A", "and then B"]
    # Follow-ups never interrupt: each begins only after the previous run ended.
    types = log.types()
    assert types.index("follow_up_started") > types.index("run_end")
    assert_well_formed(types)


async def test_queue_helpers() -> None:
    agent, _ = make_agent(ReplayModel([]))
    assert not agent.has_queued_messages()
    agent.steer("s1")
    agent.follow_up("f1")
    assert agent.has_queued_messages()
    agent.clear_steering_queue()
    assert agent.has_queued_messages()
    agent.clear_follow_up_queue()
    assert not agent.has_queued_messages()
    agent.steer("s2")
    agent.steer("s3")
    assert [m.content for m in agent.drain_steering_queue()] == ["s2", "s3"]
    assert not agent.has_queued_messages()


async def test_abort_cancels_a_streaming_model_and_keeps_partial_text() -> None:
    model = ReplayModel(
        [{"text": "partial answer", "fault": {"kind": "stall", "after_chunks": 1, "seconds": 60}}]
    )
    agent, log = make_agent(model)

    streaming = anyio.Event()
    agent.subscribe(lambda e: streaming.set() if e.type == "message_delta" else None)

    async def abort_on_delta() -> None:
        await streaming.wait()
        agent.steer("queued steer")
        assert agent.abort("stop now")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_on_delta)
            result = await agent.prompt("go")
    assert result.status == "aborted"
    assert result.error == "stop now"
    last_assistant = [m for m in agent.messages if isinstance(m, AssistantMessage)][-1]
    assert last_assistant.text == "partial answer" and last_assistant.stop_reason == "aborted"
    # The queued steer landed in the transcript instead of vanishing.
    assert agent.messages[-1] == UserMessage(content="queued steer", origin="steer")
    assert log.of("run_end")[0].status == "aborted"
    assert_well_formed(log.types())
    # The text that streamed is counted (estimated: a cut stream reports nothing).
    said = estimate_tokens("partial answer")
    assert said > 0
    assert last_assistant.usage == Usage(output_tokens=said, estimated=True)
    assert result.usage == Usage(output_tokens=said, estimated=True)
    assert log.of("run_end")[0].usage == result.usage
    assert log.of("turn_end")[-1].usage == result.usage


async def test_abort_cancels_running_tools_and_answers_dangling_calls() -> None:
    sleeper = SleepTool()
    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {"name": "echo", "arguments": {"text": "fast"}},
                    {"name": "sleep", "arguments": {"seconds": 60}},
                ]
            },
        ]
    )
    agent, log = make_agent(model, EchoTool(), sleeper)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.prompt, "go")
            await sleeper.started.wait()
            agent.abort("user pressed stop")
    assert sleeper.cancelled
    results = tool_results(agent)
    assert [r.content for r in results] == ["echo: fast", "Tool call aborted: user pressed stop"]
    assert results[1].is_error
    # Its end says how long it ran (it said 0 ms for any aborted call).
    [ended] = [e for e in log.of("tool_call_end") if e.name == "sleep"]
    assert ended.duration_ms > 0
    assert dangling_tool_calls(agent.messages) == []
    assert agent.last_result is not None and agent.last_result.status == "aborted"
    assert_well_formed(log.types())
    assert not agent.is_running


async def test_abort_without_a_run_returns_false() -> None:
    agent, _ = make_agent(ReplayModel([]))
    assert agent.abort() is False


async def test_prompt_while_running_is_refused_with_a_pointer_to_steer() -> None:
    sleeper = SleepTool()
    model = ReplayModel([{"tool_calls": [{"name": "sleep", "arguments": {"seconds": 60}}]}])
    agent, _ = make_agent(model, sleeper)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await sleeper.started.wait()
        with pytest.raises(AgentBusyError, match="steer"):
            await agent.prompt("again")
        agent.abort()


async def test_continue_run_resumes_from_the_transcript() -> None:
    model = ReplayModel(
        [{"text": "first"}, {"text": "continued", "expect": {"last_message_contains": "extra"}}]
    )
    agent, _ = make_agent(model)
    await agent.prompt("one")
    with pytest.raises(ValueError, match="assistant"):
        await agent.continue_run()
    agent._messages.append(UserMessage(content="extra context"))
    result = await agent.continue_run()
    assert result.text == "continued"
    assert len([m for m in agent.messages if isinstance(m, UserMessage)]) == 2


async def test_prompt_messages_and_reset() -> None:
    model = ReplayModel([{"text": "a"}, {"text": "b", "expect": {"messages_exclude": ["one"]}}])
    agent, _ = make_agent(model)
    await agent.prompt_messages([UserMessage(content="one"), UserMessage(content="two")])
    assert [m.role for m in agent.messages] == ["user", "user", "assistant"]
    agent.follow_up("pending")
    agent.reset()
    assert agent.messages == [] and not agent.has_queued_messages()
    result = await agent.prompt("fresh")
    assert result.text == "b"


async def test_wait_for_idle_and_unsubscribe() -> None:
    model = ReplayModel([{"text": "slow", "delay": 0.05}, {"text": "again"}])
    agent, log = make_agent(model)
    other = EventLog()
    unsubscribe = agent.subscribe(other)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await anyio.lowlevel.checkpoint()
        assert agent.is_running
        await agent.wait_for_idle()
        assert not agent.is_running
    unsubscribe()
    await agent.prompt("go again")
    assert other.types().count("run_start") == 1
    assert log.types().count("run_start") == 2


async def test_a_raising_listener_does_not_break_the_run() -> None:
    agent, before = make_agent(ReplayModel([{"text": "fine"}]))

    def bad(event) -> None:
        raise RuntimeError("listener bug")

    agent.subscribe(bad)
    after = EventLog()
    agent.subscribe(after)
    result = await agent.prompt("x")
    assert result.status == "completed"
    # Listeners before and after the raising one got every event.
    expected = [
        "agent_start",
        "run_start",
        "message_start",
        "message_end",
        "turn_start",
        "message_start",
        "message_delta",
        "message_end",
        "turn_end",
        "run_end",
        "agent_end",
    ]
    assert before.types() == expected
    assert after.types() == expected


async def test_before_tool_call_hook_blocks_with_a_reason() -> None:
    async def before(tool_call, args):
        return Block("echo is disabled in this session") if tool_call.name == "echo" else None

    model = ReplayModel(
        [{"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]}, {"text": "ok"}]
    )
    agent = Agent(model, tools=[EchoTool()], hooks=Hooks(before_tool_call=before))
    await agent.prompt("go")
    [res] = tool_results(agent)
    assert res.is_error and res.content == "Tool call blocked: echo is disabled in this session"


async def test_after_tool_call_hook_replaces_the_result() -> None:
    def after(tool_call, result):
        return ToolResult(result.content.upper(), details={"hooked": True})

    model = ReplayModel(
        [{"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]}, {"text": "ok"}]
    )
    agent = Agent(model, tools=[EchoTool()], hooks=Hooks(after_tool_call=after))
    log = EventLog()
    agent.subscribe(log)
    await agent.prompt("go")
    assert tool_results(agent)[0].content == "ECHO: X"
    assert log.of("tool_call_end")[0].details == {"hooked": True}


async def test_transform_context_changes_what_is_sent_not_what_is_stored() -> None:
    def transform(messages):
        return [
            UserMessage(content="[redacted]") if isinstance(m, UserMessage) else m for m in messages
        ]

    model = ReplayModel([{"text": "ok"}])
    agent = Agent(model, hooks=Hooks(transform_context=transform))
    await agent.prompt("secret prompt")
    assert model.requests[0].messages == [UserMessage(content="[redacted]")]
    assert agent.messages[0] == UserMessage(content="secret prompt")


async def test_prepare_next_turn_may_change_model_and_options() -> None:
    first = ReplayModel(
        [{"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]}], name="first"
    )
    second = ReplayModel(
        [{"text": "from second", "expect": {"tool_choice": "none"}}], name="second"
    )

    def prepare(info):
        if info.turn == 2:
            return TurnOverrides(model=second, options=ModelOptions(tool_choice="none"))
        return None

    agent = Agent(first, tools=[EchoTool()], hooks=Hooks(prepare_next_turn=prepare))
    result = await agent.prompt("go")
    assert result.text == "from second"
    assert len(first.requests) == 1 and len(second.requests) == 1


@pytest.mark.parametrize(
    "hook", ["before_tool_call", "after_tool_call", "transform_context", "prepare_next_turn"]
)
async def test_a_raising_hook_is_an_error_event_and_no_change(hook: str) -> None:
    def boom(*args):
        raise ValueError("hook bug")

    model = ReplayModel(
        [{"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]}, {"text": "ok"}]
    )
    agent = Agent(model, tools=[EchoTool()], hooks=Hooks(**{hook: boom}))
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("go")
    assert result.status == "completed"
    assert tool_results(agent)[0].content == "echo: x"
    errors = [e for e in log.of("error") if e.where == f"hook:{hook}"]
    assert errors and "hook bug" in errors[0].message
    assert model.requests[0].messages[0] == UserMessage(content="go")


async def test_an_empty_reply_is_retried_then_accepted() -> None:
    model = ReplayModel([{"text": ""}, {"text": "real answer"}])
    agent, log = make_agent(model)
    result = await agent.prompt("x")
    assert result.status == "completed" and result.text == "real answer"
    assert len(model.requests) == 2
    assert [m.role for m in agent.messages] == ["user", "assistant"]  # the empty one is not kept
    assert any("empty reply" in e.message for e in log.of("error"))

    model2 = ReplayModel([{"text": ""}, {"text": " "}, {"text": "never"}])
    agent2, log2 = make_agent(model2, max_empty_retries=1)
    result2 = await agent2.prompt("x")
    # Issue 15 (the reference's rule): past the retries the empty turn is
    # accepted; the run completes (after validation) and says why it has no text.
    assert result2.status == "completed" and result2.text == ""
    assert "empty reply 2 times" in (result2.error or "")
    assert log2.of("run_end")[0].reason == result2.error
    assert len(model2.requests) == 2
    assert [m.role for m in agent2.messages] == ["user", "assistant"]
    assert_well_formed(log2.types())


def test_idle_watchdog_aborts_a_silent_run() -> None:
    async def main():
        model = ReplayModel([{"text": "zzz", "delay": 30}])  # on the fake clock
        agent, log = make_agent(model, run_idle_timeout_ms=50)
        with anyio.fail_after(5):
            result = await agent.prompt("x")
        assert_well_formed(log.types())
        return result

    result = run_in_virtual_time(main)
    assert result.status == "aborted"
    assert "idle timeout" in (result.error or "")


def test_idle_watchdog_ignores_time_spent_in_tools() -> None:
    async def busy(args: EchoArgs, ctx: ToolContext) -> str:
        await anyio.sleep(0.6)  # the fake clock: three idle limits long
        return "done"

    async def main():
        model = ReplayModel(
            [{"tool_calls": [{"name": "busy", "arguments": {"text": "x"}}]}, {"text": "ok"}]
        )
        agent, _ = make_agent(model, FunctionTool("busy", busy), run_idle_timeout_ms=200)
        with anyio.fail_after(5):
            return await agent.prompt("x")

    result = run_in_virtual_time(main)
    assert result.status == "completed", result.error


def test_zero_idle_timeout_disables_the_watchdog() -> None:
    async def main():
        model = ReplayModel([{"text": "late", "delay": 3600}])  # an hour on the fake clock
        agent, _ = make_agent(model, run_idle_timeout_ms=0)
        with anyio.fail_after(7200):
            return await agent.prompt("x")

    assert run_in_virtual_time(main).status == "completed"


async def test_model_errors_fail_the_run_with_the_reason() -> None:
    model = ReplayModel([{"fault": {"kind": "status", "status": 401, "body": "bad key"}}])
    agent, log = make_agent(model)
    result = await agent.prompt("x")
    assert result.status == "failed"
    assert "bad key" in (result.error or "")
    assert log.of("error")[-1].fatal


async def test_tool_results_are_truncated_at_ingestion_with_a_marker() -> None:
    def big(args: EchoArgs, ctx: ToolContext) -> str:
        return "\n".join(f"line {i}" for i in range(5000))

    model = ReplayModel(
        [{"tool_calls": [{"name": "big", "arguments": {"text": "x"}}]}, {"text": "ok"}]
    )
    agent, _ = make_agent(model, FunctionTool("big", big), max_tool_result_chars=1000)
    await agent.prompt("x")
    content = tool_results(agent)[0].content
    assert len(content) <= 1000
    assert content.startswith("line 0\n") and content.endswith("line 4999")
    assert "characters" in content and "cut" in content and "read_file" in content


@pytest.mark.parametrize(
    ("mode", "applied"),
    [
        pytest.param("all", [["s1", "s2"]], id="all"),
        pytest.param("one-at-a-time", [["s1"], ["s2"]], id="one-at-a-time"),
    ],
)
async def test_steering_queue_modes(mode: str, applied: list[list[str]]) -> None:
    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        n = len(model.requests)
        if n == 1:
            agent.steer("s1")
            agent.steer("s2")
            return assistant("", call("echo", "c1", text="x"))
        if n == 2 and mode == "one-at-a-time":
            return assistant("", call("echo", "c2", text="y"))
        return assistant("done")

    model = FunctionModel(turn)
    agent, log = make_agent(model, steering_mode=mode)
    result = await agent.prompt("go")
    assert result.status == "completed"
    assert [e.texts for e in log.of("steering_applied")] == applied
    # Each steer reached the model in the order it was sent.
    last = [
        m.content
        for m in model.requests[-1].messages
        if isinstance(m, UserMessage) and m.origin == "steer"
    ]
    assert last == ["s1", "s2"]


async def test_a_tool_knows_which_tools_its_agent_is_offered() -> None:
    offered: list[frozenset[str] | None] = []

    async def look(args: EchoArgs, ctx: ToolContext) -> str:
        offered.append(ctx.offered)
        return args.text

    model = ReplayModel(
        [{"tool_calls": [{"name": "look", "arguments": {"text": "a"}}]}, {"text": "done"}]
    )
    agent, _ = make_agent(model, FunctionTool("look", look))
    await agent.prompt("go")
    assert offered == [frozenset(agent.tools.names())]
    assert "look" in (offered[0] or ())
