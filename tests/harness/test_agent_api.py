"""The Agent's API surface against the pi-port reference (docs/agent-api.md),
each item driven by a scripted model: the ``tool_executor`` port, the
``state`` snapshot, ``prompt_message``, ``wire_dump``, and the reference's
accessors (hooks one by one, ``stream_function``, ``tool_execution``)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from rein.harness import (
    Agent,
    AgentBusyError,
    AssistantMessage,
    Block,
    HarnessConfig,
    Hooks,
    ToolContext,
    ToolRegistry,
    ToolResult,
    ToolResultMessage,
    TurnOverrides,
    UserMessage,
)
from rein.harness.agent import dangling_tool_calls
from rein.harness.errors import ToolError
from rein.harness.messages import MessageAdapter
from rein.harness.ports import (
    ModelOptions,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from rein.harness.tools import Tool, execute_tool_call
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog, assert_well_formed
from tests.fakes.models import FunctionModel, PausingModel, assistant, call
from tests.fakes.tools import EchoArgs, EchoTool, FunctionTool


def observed(agent: Agent) -> EventLog:
    log = EventLog()
    agent.subscribe(log)
    return log


def tool_results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.messages if isinstance(m, ToolResultMessage)]


def two_echoes_then(text: str) -> ReplayModel:
    return ReplayModel(
        [
            {
                "tool_calls": [
                    {"name": "echo", "arguments": {"text": "a"}, "id": "c1"},
                    {"name": "echo", "arguments": {"text": "b"}, "id": "c2"},
                ]
            },
            {"text": text},
        ]
    )


# ------------------------------------------------------------- tool_executor


async def test_tool_executor_replaces_how_calls_run_and_each_call_keeps_its_one_result() -> None:
    """A "remote" executor: it never runs the tool in this process, answers
    itself, and finishes the second call before the first; the transcript
    still has one result per call, in call order."""
    ran_here: list[str] = []
    seen: list[tuple[str, str, str]] = []
    second_done = anyio.Event()

    async def remote(tool: Tool[Any], args: Any, ctx: ToolContext) -> ToolResult:
        seen.append((ctx.tool_call_id, tool.name, args.text))
        if ctx.tool_call_id == "c1":
            await second_done.wait()
        else:
            second_done.set()
        return ToolResult(f"remote {tool.name}: {args.text}", details={"host": "worker-1"})

    def local(args: EchoArgs, ctx: ToolContext) -> str:
        ran_here.append(args.text)
        return "local"

    model = two_echoes_then("done")
    agent = Agent(model, tools=[FunctionTool("echo", local)], tool_executor=remote)
    log = observed(agent)
    with anyio.fail_after(5):
        result = await agent.prompt("go")

    assert result.status == "completed"
    assert ran_here == []
    assert sorted(seen) == [("c1", "echo", "a"), ("c2", "echo", "b")]
    assert [(r.tool_call_id, r.content) for r in tool_results(agent)] == [
        ("c1", "remote echo: a"),
        ("c2", "remote echo: b"),
    ]
    # They ran concurrently and ended in the executor's order ...
    assert [e.tool_call_id for e in log.of("tool_call_end")] == ["c2", "c1"]
    assert log.of("tool_call_end")[0].details == {"host": "worker-1"}
    # ... and the model read both results, paired, in call order.
    assert [m.role for m in model.requests[1].messages] == ["user", "assistant", "tool", "tool"]
    assert dangling_tool_calls(agent.messages) == []
    assert_well_formed(log.types())


async def test_a_raising_tool_executor_becomes_an_error_result() -> None:
    async def flaky(tool: Tool[Any], args: Any, ctx: ToolContext) -> str:
        if args.text == "a":
            raise ToolError("the sandbox refused it")
        raise RuntimeError("worker died")

    agent = Agent(two_echoes_then("ok"), tools=[EchoTool()], tool_executor=flaky)
    log = observed(agent)
    result = await agent.prompt("go")
    assert result.status == "completed"
    assert [(r.is_error, r.content) for r in tool_results(agent)] == [
        (True, "the sandbox refused it"),
        (True, "echo failed: RuntimeError: worker died"),
    ]
    assert [e.where for e in log.of("error")] == ["tool:echo"]
    assert dangling_tool_calls(agent.messages) == []


async def test_the_tool_executor_sees_only_resolved_validated_allowed_calls() -> None:
    """Unknown tools, invalid arguments and calls a hook blocks never reach
    the port; after_tool_call sees what the port returned."""
    seen: list[str] = []

    async def executor(tool: Tool[Any], args: Any, ctx: ToolContext) -> str:
        seen.append(ctx.tool_call_id)
        return f"ran {args.text}"

    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {"name": "nope", "arguments": {}, "id": "c1"},
                    {"name": "echo", "arguments": {}, "id": "c2"},
                    {"name": "echo", "arguments": {"text": "blocked"}, "id": "c3"},
                    {"name": "echo", "arguments": {"text": "fine"}, "id": "c4"},
                ]
            },
            {"text": "ok"},
        ]
    )
    agent = Agent(
        model,
        tools=[EchoTool()],
        tool_executor=executor,
        before_tool_call=lambda c, a: Block("no") if c.arguments.get("text") == "blocked" else None,
        after_tool_call=lambda c, r: ToolResult(r.content.upper()),
    )
    await agent.prompt("go")
    assert seen == ["c4"]
    results = tool_results(agent)
    assert [r.is_error for r in results] == [True, True, True, False]
    assert results[3].content == "RAN FINE"


async def test_abort_while_the_tool_executor_runs_answers_every_call() -> None:
    started = anyio.Event()
    cancelled: list[str] = []

    async def hanging(tool: Tool[Any], args: Any, ctx: ToolContext) -> str:
        try:
            started.set()
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(ctx.tool_call_id)
            raise
        return "never"

    agent = Agent(two_echoes_then("never"), tools=[EchoTool()], tool_executor=hanging)
    log = observed(agent)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.prompt, "go")
            await started.wait()
            agent.abort("stop")
    assert sorted(cancelled) == ["c1", "c2"]
    assert [(r.tool_call_id, r.content) for r in tool_results(agent)] == [
        ("c1", "Tool call aborted: stop"),
        ("c2", "Tool call aborted: stop"),
    ]
    assert dangling_tool_calls(agent.messages) == []
    assert_well_formed(log.types())


async def test_tool_executor_defaults_to_running_the_tool_and_can_be_replaced_between_runs() -> (
    None
):
    model = ReplayModel(
        [
            {"tool_calls": [{"name": "echo", "arguments": {"text": "x"}, "id": "c1"}]},
            {"text": "one"},
            {"tool_calls": [{"name": "echo", "arguments": {"text": "y"}, "id": "c2"}]},
            {"text": "two"},
        ]
    )
    agent = Agent(model, tools=[EchoTool()])
    assert agent.tool_executor is execute_tool_call
    await agent.prompt("first")

    async def dry_run(tool: Tool[Any], args: Any, ctx: ToolContext) -> str:
        return f"dry run: {tool.name}({args.text})"

    agent.tool_executor = dry_run
    await agent.prompt("second")
    assert [r.content for r in tool_results(agent)] == ["echo: x", "dry run: echo(y)"]


# --------------------------------------------------------------------- state


def _final(text: str = "", *calls: Any) -> AssistantMessage:
    return assistant(text, *calls)


async def test_state_mid_stream_has_the_partial_message() -> None:
    model = PausingModel(
        [
            (
                [ThinkingDelta("plan"), TextDelta("Hel"), TextDelta("lo")],
                _final("Hello", call("echo", "c1", text="x")),
            ),
            (
                [
                    ToolCallDelta(0, "c2", "echo", '{"text": "y"}'),
                    ToolCallDelta(1, "c3", "echo", '{"te'),
                    ToolCallDelta(1, None, None, 'xt": "z"}'),
                ],
                _final("", call("echo", "c2", text="y"), call("echo", "c3", text="z")),
            ),
            ([TextDelta("done")], _final("done")),
        ],
        pause_at=2,
        pause_turns=(1, 2),
    )
    agent = Agent(model, tools=[EchoTool()])
    assert agent.state.status == "idle" and agent.state.streaming_message is None
    result_box: list[Any] = []

    async def run() -> None:
        result_box.append(await agent.prompt("go"))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await model.paused.wait()
            first = agent.state
            model.resume()
            await model.paused.wait()
            second = agent.state
            model.resume()

    # Turn 1, after "plan" and "Hel": the partial message, nothing pending.
    assert first.status == "running" and first.is_streaming
    assert first.run_id is not None and first.run_id == result_box[0].run_id
    assert first.streaming_message is not None
    assert first.streaming_message.thinking == "plan"
    assert first.streaming_message.text == "Hel"
    assert first.streaming_message.tool_calls == []
    assert first.pending_tool_calls == ()
    assert [m.role for m in first.messages] == ["user"]
    # Turn 2: one call's arguments complete, the other's still streaming.
    assert second.streaming_message is not None
    calls = second.streaming_message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("c2", "echo", {"text": "y"}),
        ("c3", "echo", {}),
    ]
    assert [m.role for m in second.messages] == ["user", "assistant", "tool"]
    # Idle again: no partial message, the last result.
    after = agent.state
    assert after.status == "idle" and after.streaming_message is None
    assert after.last_result is result_box[0] and after.error is None
    assert after.run_id is None and after.pending_tool_calls == ()
    assert len(after.messages) == len(agent.messages) == 7


async def test_state_mid_tool_has_the_pending_calls_and_the_queues() -> None:
    agent: Agent
    snapshots: list[Any] = []

    def probe(args: EchoArgs, ctx: ToolContext) -> str:
        if args.text == "first":
            agent.steer("steer it")
            agent.follow_up("and then")
        snapshots.append(agent.state)
        return "ok"

    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {"name": "probe", "arguments": {"text": "first"}, "id": "p1"},
                    {"name": "probe", "arguments": {"text": "second"}, "id": "p2"},
                ]
            },
            {"text": "done"},
            {"text": "followed up"},
        ]
    )
    agent = Agent(
        model,
        tools=[FunctionTool("probe", probe)],
        config=HarnessConfig(tool_execution="sequential"),
    )
    result = await agent.prompt("go")
    assert result.text == "followed up"

    first, second = snapshots
    assert first.status == "running" and first.streaming_message is None
    assert [c.id for c in first.pending_tool_calls] == ["p1", "p2"]
    assert [c.id for c in second.pending_tool_calls] == ["p2"]
    assert (first.queued_steering, first.queued_follow_ups) == (1, 1)
    last = first.messages[-1]
    assert isinstance(last, AssistantMessage) and len(last.tool_calls) == 2
    # A snapshot is frozen and keeps what it saw.
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.status = "idle"  # type: ignore[misc]
    assert len(first.messages) == 2 < len(agent.messages)
    state = agent.state
    assert (state.queued_steering, state.queued_follow_ups) == (0, 0)
    assert state.status == "idle"


def _ask(args: EchoArgs, ctx: ToolContext) -> ToolResult:
    return ToolResult("(no answer yet)", details={"no_answer": True, "question": args.text})


async def test_state_is_waiting_on_an_unanswered_question_and_prompt_message_answers_it() -> None:
    model = ReplayModel(
        [
            {"tool_calls": [{"name": "ask", "arguments": {"text": "which file?"}, "id": "q1"}]},
            {"text": "editing app.py", "expect": {"last_message_contains": "app.py"}},
        ]
    )
    agent = Agent(model, tools=[FunctionTool("ask", _ask)])
    first = await agent.prompt("fix it")
    assert first.status == "waiting"
    state = agent.state
    assert state.status == "waiting" and state.waiting_for == "q1"
    assert state.last_result is first

    second = await agent.prompt_message(UserMessage(content="app.py"))
    assert second.status == "completed"
    answered = tool_results(agent)[0]
    assert answered.content == "The person answered: app.py"
    assert agent.state.status == "idle" and agent.state.waiting_for is None


# ------------------------------------------------------------ prompt_message


async def test_prompt_message_starts_a_run_from_one_message() -> None:
    sent = UserMessage(content="mail from the inbox", origin="external")
    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        if len(model.requests) == 1:
            agent.follow_up("and reply")
        return assistant(f"turn {len(model.requests)}")

    model = FunctionModel(turn)
    agent = Agent(model)
    result = await agent.prompt_message(sent)
    assert model.requests[0].messages == [sent]
    assert agent.messages[0] is sent  # kept as given, origin and all
    assert result.text == "turn 2"  # the follow-up queued meanwhile ran after it
    assert [m.content for m in agent.messages if isinstance(m, UserMessage)] == [
        "mail from the inbox",
        "and reply",
    ]


async def test_prompt_message_while_running_is_refused() -> None:
    model = PausingModel([([TextDelta("a"), TextDelta("b")], assistant("ab"))])
    agent = Agent(model)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await model.paused.wait()
        with pytest.raises(AgentBusyError, match="steer"):
            await agent.prompt_message(UserMessage(content="again"))
        model.resume()


# ------------------------------------------------------------------ wire_dump


async def test_wire_dump_is_off_by_default() -> None:
    agent = Agent(ReplayModel([{"text": "ok"}]))
    log = observed(agent)
    assert agent.wire_dump is False
    await agent.prompt("x")
    assert log.of("model_request") == []


async def test_wire_dump_precedes_every_model_request_with_the_redacted_payload() -> None:
    secret = "Bearer sk-test-0123456789abcdef"

    def turn(request: ModelRequest) -> AssistantMessage:
        if len(model.requests) == 1:
            return assistant("", call("echo", "c1", text="x", authorization=secret))
        return assistant("done")

    model = FunctionModel(turn, name="scripted")
    agent = Agent(model, tools=[EchoTool()], system_prompt="Be brief.", wire_dump=True)
    log = observed(agent)
    await agent.prompt("go")

    types = log.types()
    dumps = log.of("model_request")
    assert len(dumps) == len(model.requests) == 2
    for index in (i for i, t in enumerate(types) if t == "model_request"):
        assert types[index + 1] == "message_start"  # the reply to that request
    assert [d.turn for d in dumps] == [1, 2]
    assert {d.model for d in dumps} == {"scripted"} and {d.format for d in dumps} == {"neutral"}
    first = dumps[0].payload
    assert first["system"] == "Be brief."
    assert [t["name"] for t in first["tools"]] == ["echo"]
    assert first["messages"] == [
        MessageAdapter.dump_python(m, mode="json") for m in model.requests[0].messages
    ]
    # The second request carries the tool call; its credential is redacted
    # in the dump, not in the transcript.
    sent_call = dumps[1].payload["messages"][1]["content"][0]
    assert sent_call["arguments"] == {"text": "x", "authorization": "[redacted]"}
    assert "sk-test-0123456789abcdef" not in json.dumps([d.model_dump() for d in dumps])
    stored = agent.messages[1]
    assert isinstance(stored, AssistantMessage)
    assert stored.tool_calls[0].arguments["authorization"] == secret
    assert_well_formed(types)


# ------------------------------------------------ the reference's accessors


async def test_hooks_by_their_own_names_win_over_hooks_and_can_be_set_later() -> None:
    calls: list[str] = []
    model = ReplayModel(
        [
            {"tool_calls": [{"name": "echo", "arguments": {"text": "x"}, "id": "c1"}]},
            {"text": "one"},
            {"tool_calls": [{"name": "echo", "arguments": {"text": "y"}, "id": "c2"}]},
            {"text": "two"},
        ]
    )
    shared = Hooks(before_tool_call=lambda c, a: calls.append("from hooks"))
    agent = Agent(
        model,
        tools=[EchoTool()],
        hooks=shared,
        before_tool_call=lambda c, a: calls.append("by name"),
    )
    await agent.prompt("one")
    assert calls == ["by name"]
    assert shared.before_tool_call is not agent.before_tool_call  # not mutated

    agent.before_tool_call = None
    agent.after_tool_call = lambda c, r: ToolResult("replaced")
    agent.transform_context = lambda messages: [*messages, UserMessage(content="injected")]
    assert agent.hooks.after_tool_call is agent.after_tool_call
    await agent.prompt("two")
    assert calls == ["by name"]
    assert tool_results(agent)[1].content == "replaced"
    assert model.requests[-1].messages[-1] == UserMessage(content="injected")
    assert UserMessage(content="injected") not in agent.messages


async def test_prepare_next_turn_by_name() -> None:
    second = ReplayModel([{"text": "from second", "expect": {"tool_choice": "none"}}])
    first = ReplayModel([{"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]}])

    def prepare(info: Any) -> TurnOverrides | None:
        return TurnOverrides(second, ModelOptions(tool_choice="none")) if info.turn == 2 else None

    agent = Agent(first, tools=[EchoTool()], prepare_next_turn=prepare)
    assert agent.prepare_next_turn is prepare
    assert (await agent.prompt("go")).text == "from second"


async def test_stream_function_is_the_model_and_is_settable() -> None:
    first = ReplayModel([{"text": "from first"}], name="first")
    second = ReplayModel([{"text": "from second"}], name="second")
    agent = Agent(first)
    assert agent.stream_function is first
    assert (await agent.prompt("a")).text == "from first"
    agent.stream_function = second
    assert agent.model is second
    assert (await agent.prompt("b")).text == "from second"
    assert len(first.requests) == 1 and len(second.requests) == 1


async def test_tool_execution_is_settable_between_runs() -> None:
    order: list[str] = []

    async def yielding(args: EchoArgs, ctx: ToolContext) -> str:
        order.append(f"start {args.text}")
        await anyio.lowlevel.checkpoint()  # parallel: the other call starts now
        order.append(f"end {args.text}")
        return args.text

    def batch() -> list[dict[str, Any]]:
        return [
            {
                "tool_calls": [
                    {"name": "t", "arguments": {"text": "a"}},
                    {"name": "t", "arguments": {"text": "b"}},
                ]
            },
            {"text": "ok"},
        ]

    agent = Agent(ReplayModel(batch() + batch()), tools=[FunctionTool("t", yielding)])
    assert agent.tool_execution == "parallel"
    await agent.prompt("parallel")
    assert order[:2] == ["start a", "start b"]
    order.clear()
    agent.tool_execution = "sequential"
    assert agent.config.tool_execution == "sequential"
    await agent.prompt("sequential")
    assert order == ["start a", "end a", "start b", "end b"]


async def test_system_prompt_tools_and_seed_messages_reach_the_model() -> None:
    seed = [UserMessage(content="earlier"), assistant("earlier answer")]
    model = FunctionModel(lambda request: assistant("ok"))
    agent = Agent(model, tools=[EchoTool()], system_prompt="You are terse.", messages=seed)
    await agent.prompt("now")
    request = model.requests[0]
    assert request.system == "You are terse."
    assert [t.name for t in request.tools] == ["echo"]
    assert list(request.messages) == [*seed, UserMessage(content="now")]
    assert list(agent.messages[:2]) == seed
    agent.system_prompt = "You are verbose."
    agent.tools = agent.tools.subset([])
    await agent.prompt("again")
    assert model.requests[1].system == "You are verbose." and model.requests[1].tools == []


async def test_steer_and_follow_up_take_text_or_a_user_message() -> None:
    agent: Agent

    def turn(request: ModelRequest) -> AssistantMessage:
        if len(model.requests) == 1:
            agent.steer(UserMessage(content="from the inbox", origin="external"))
            agent.follow_up(UserMessage(content="queued mail", origin="external"))
            return assistant("", call("echo", "c1", text="x"))
        return assistant(f"turn {len(model.requests)}")

    model = FunctionModel(turn)
    agent = Agent(model, tools=[EchoTool()])
    log = observed(agent)
    await agent.prompt("go")
    users = [(m.content, m.origin) for m in agent.messages if isinstance(m, UserMessage)]
    assert users == [("go", "prompt"), ("from the inbox", "external"), ("queued mail", "external")]
    assert log.of("steering_applied")[0].texts == ["from the inbox"]
    assert log.of("follow_up_started")[0].text == "queued mail"

    agent.steer("text")
    agent.follow_up("more")
    assert agent.has_queued_messages()
    assert agent.drain_steering_queue() == [UserMessage(content="text", origin="steer")]
    assert agent.has_queued_messages()  # the follow-up is still queued
    agent.clear_all_queues()
    assert not agent.has_queued_messages()


async def test_tools_take_a_registry_or_a_list_of_tools() -> None:
    registry = ToolRegistry([EchoTool()])
    agent = Agent(ReplayModel([]), tools=registry)
    assert agent.tools is registry
    listed = Agent(ReplayModel([]), tools=[EchoTool()])
    assert isinstance(listed.tools, ToolRegistry) and listed.tools.names() == ["echo"]
    assert Agent(ReplayModel([])).tools.names() == []


async def test_model_options_name_the_model_of_every_request() -> None:
    model = FunctionModel(lambda request: assistant(f"as {request.options.model}"))
    agent = Agent(model, options=ModelOptions(model="gpt-4.1", max_tokens=256))
    result = await agent.prompt("x")
    assert result.text == "as gpt-4.1"
    assert model.requests[0].options == ModelOptions(model="gpt-4.1", max_tokens=256)
