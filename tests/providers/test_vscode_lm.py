"""The vscode-lm provider against a fake editor (tests/fakes.FakeLmHost):
what ``rein/lm/chat`` carries, how deltas become the turn, stop reasons,
errors, consent, cancellation and estimated usage."""

from __future__ import annotations

import asyncio

import pytest

from rein.harness import Agent
from rein.harness.errors import ConfigError, ModelError, ProviderError, StreamError
from rein.harness.messages import (
    AssistantMessage,
    ImagePart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from rein.harness.ports import (
    ModelDelta,
    ModelOptions,
    ModelRequest,
    TextDelta,
    ToolCallDelta,
    ToolSchema,
    TurnDone,
)
from rein.providers import create_model
from rein.providers.config import ModelConfig
from rein.providers.vscode_lm import CONSENT_REQUIRED, ConsentRequired, VsCodeLmModel
from rein.session.results import usage_json
from tests.fakes.events import EventLog
from tests.fakes.lm import FakeLmHost, LmReply
from tests.fakes.tools import EchoTool

ECHO = ToolSchema(
    name="echo",
    description="Echo the text.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}},
)
READ = ToolSchema(name="read_file", description="Read a file.", parameters={"type": "object"})


def request(**options: object) -> ModelRequest:
    return ModelRequest(
        system="You are Rein.",
        messages=[UserMessage(content="hello")],
        tools=[ECHO, READ],
        options=ModelOptions(**options),  # type: ignore[arg-type]
    )


async def collect(model: VsCodeLmModel, req: ModelRequest) -> list[ModelDelta]:
    return [d async for d in model.stream(req)]


def text(value: str) -> dict[str, object]:
    return {"kind": "text", "text": value}


def tool_call(ident: str, name: str, arguments: object) -> dict[str, object]:
    return {"kind": "tool_call", "id": ident, "name": name, "input": arguments}


async def test_the_request_carries_the_selector_system_messages_tools_and_mode() -> None:
    host = FakeLmHost([LmReply(deltas=[text("hi")])])
    model = VsCodeLmModel(host, "copilot/gpt-4o", session_id="s1", max_tokens=512)
    transcript = [
        UserMessage(content="fix it", images=(ImagePart(mime_type="image/png", data="AAAA"),)),
        AssistantMessage(
            content=(
                ThinkingPart(thinking="hmm"),
                TextPart(text="reading"),
                ToolCall(id="c1", name="read_file", arguments={"path": "a.py"}),
            ),
            stop_reason="tool_use",
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="read_file", content="x = 1", is_error=True),
    ]
    await collect(model, ModelRequest(system="sys", messages=transcript, tools=[ECHO]))
    (params,) = host.requests
    assert params["model"] == "copilot/gpt-4o"
    assert params["sessionId"] == "s1"
    assert params["system"] == "sys"
    assert params["maxTokens"] == 512
    assert params["toolMode"] == "auto"
    assert params["tools"] == [
        {"name": "echo", "description": "Echo the text.", "inputSchema": ECHO.parameters}
    ]
    user, reply, result = params["messages"]
    assert user["role"] == "user"
    assert user["text"].startswith("fix it\n[image image/png")  # no images over this API
    assert reply == {
        "role": "assistant",
        "text": "reading",
        "toolCalls": [{"id": "c1", "name": "read_file", "input": {"path": "a.py"}}],
    }
    assert result == {
        "role": "tool",
        "toolCallId": "c1",
        "name": "read_file",
        "text": "x = 1",
        "isError": True,
    }
    assert isinstance(params["requestId"], str) and params["requestId"]


@pytest.mark.parametrize(
    ("choice", "tools", "mode"),
    [
        pytest.param(None, ["echo", "read_file"], "auto", id="default"),
        pytest.param("required", ["echo", "read_file"], "required", id="required"),
        pytest.param("none", [], "auto", id="none-offers-no-tool"),
        pytest.param("read_file", ["read_file"], "required", id="one-named-tool"),
    ],
)
async def test_tool_choice_maps_to_the_apis_tool_mode(
    choice: str | None, tools: list[str], mode: str
) -> None:
    host = FakeLmHost([LmReply(deltas=[text("ok")])])
    await collect(VsCodeLmModel(host), request(tool_choice=choice))
    (params,) = host.requests
    assert [t["name"] for t in params["tools"]] == tools
    assert params["toolMode"] == mode
    assert params["model"] == ""  # no selector: the editor's first model
    assert "maxTokens" not in params


async def test_deltas_stream_in_order_and_build_the_final_message() -> None:
    host = FakeLmHost(
        [
            LmReply(
                deltas=[
                    text("Let me "),
                    text("look."),
                    tool_call("call-1", "echo", {"text": "a"}),
                    tool_call("call-2", "read_file", {"path": "b.py"}),
                ],
                stop_reason="tool_use",
            )
        ]
    )
    deltas = await collect(VsCodeLmModel(host, "test/echo"), request())
    assert deltas[:4] == [
        TextDelta("Let me "),
        TextDelta("look."),
        ToolCallDelta(index=0, id="call-1", name="echo", arguments_delta='{"text": "a"}'),
        ToolCallDelta(index=1, id="call-2", name="read_file", arguments_delta='{"path": "b.py"}'),
    ]
    done = deltas[-1]
    assert isinstance(done, TurnDone)
    message = done.message
    assert message.text == "Let me look."
    assert message.tool_calls == [
        ToolCall(id="call-1", name="echo", arguments={"text": "a"}),
        ToolCall(id="call-2", name="read_file", arguments={"path": "b.py"}),
    ]
    assert message.stop_reason == "tool_use"
    assert message.model == "vscode-lm:test/echo"


async def test_a_tool_call_with_stop_reason_stop_is_still_a_tool_turn() -> None:
    host = FakeLmHost([LmReply(deltas=[tool_call("c", "echo", {})], stop_reason="stop")])
    done = (await collect(VsCodeLmModel(host), request()))[-1]
    assert isinstance(done, TurnDone)
    assert done.message.stop_reason == "tool_use"


async def test_length_stop_is_kept() -> None:
    host = FakeLmHost([LmReply(deltas=[text("cut")], stop_reason="length")])
    done = (await collect(VsCodeLmModel(host), request()))[-1]
    assert isinstance(done, TurnDone)
    assert done.message.stop_reason == "length"


async def test_input_that_is_not_an_object_is_a_call_the_loop_answers_with_an_error() -> None:
    host = FakeLmHost([LmReply(deltas=[tool_call("c", "echo", "[1, 2]")])])
    done = (await collect(VsCodeLmModel(host), request()))[-1]
    assert isinstance(done, TurnDone)
    (call,) = done.message.tool_calls
    assert call.parse_error is not None and "not a JSON object" in call.parse_error


async def test_usage_is_estimated_and_marked() -> None:
    host = FakeLmHost([LmReply(deltas=[text("a fairly short answer")])])
    done = (await collect(VsCodeLmModel(host), request()))[-1]
    assert isinstance(done, TurnDone)
    usage = done.message.usage
    assert usage.estimated is True
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert usage_json(usage)["estimated"] is True
    assert "estimated" not in usage_json(Usage(input_tokens=3))


@pytest.mark.parametrize(
    ("reply", "error", "fragment"),
    [
        pytest.param(
            LmReply(error="the model refused", stop_reason="error"),
            ProviderError,
            "the model refused",
            id="stop-reason-error",
        ),
        pytest.param(
            LmReply(error_code=-32603, error="no model matches copilot/x"),
            ProviderError,
            "no model matches copilot/x",
            id="error-answer",
        ),
        pytest.param(
            LmReply(stop_reason="finished"), StreamError, "unknown stopReason", id="bad-stop"
        ),
        pytest.param(
            LmReply(deltas=[{"kind": "image"}]), StreamError, "unknown kind", id="bad-delta"
        ),
        pytest.param(
            LmReply(deltas=[{"kind": "tool_call", "name": "echo", "input": {}}]),
            StreamError,
            "without id or name",
            id="call-without-id",
        ),
    ],
)
async def test_failures_are_model_errors_with_the_reason(
    reply: LmReply, error: type[ModelError], fragment: str
) -> None:
    with pytest.raises(error, match=fragment):
        await collect(VsCodeLmModel(FakeLmHost([reply])), request())


async def test_consent_required_is_its_own_error() -> None:
    host = FakeLmHost([LmReply(error_code=CONSENT_REQUIRED, error="consent required")])
    with pytest.raises(ConsentRequired, match="consent required"):
        await collect(VsCodeLmModel(host), request())


async def test_a_silent_editor_stalls_the_turn_after_the_idle_bound() -> None:
    host = FakeLmHost([LmReply(deltas=[text("half")], hang=True)])
    with pytest.raises(StreamError, match=r"sent nothing for 0\.05 s") as caught:
        await collect(VsCodeLmModel(host, idle_timeout=0.05), request())
    assert caught.value.streamed is True
    await asyncio.wait_for(host.cancelled.wait(), 5)  # the editor's request is cancelled


async def test_closing_the_stream_cancels_the_editors_request() -> None:
    host = FakeLmHost([LmReply(deltas=[text("streaming")], hang=True)])
    stream = VsCodeLmModel(host).stream(request())
    assert await anext(stream) == TextDelta("streaming")
    await asyncio.wait_for(host.hanging.wait(), 5)
    await stream.aclose()  # type: ignore[attr-defined]
    await asyncio.wait_for(host.cancelled.wait(), 5)


async def test_an_aborted_run_cancels_the_editors_request() -> None:
    host = FakeLmHost([LmReply(deltas=[text("thinking...")], hang=True)])
    agent = Agent(VsCodeLmModel(host), tools=[EchoTool()])
    run = asyncio.ensure_future(agent.prompt("go"))
    await asyncio.wait_for(host.hanging.wait(), 5)
    agent.abort()
    result = await asyncio.wait_for(run, 5)
    assert result.status == "aborted"
    assert host.cancelled.is_set()


async def test_a_run_through_the_provider_calls_tools_and_marks_usage_estimated() -> None:
    host = FakeLmHost(
        [
            LmReply(deltas=[tool_call("c1", "echo", {"text": "ping"})], stop_reason="tool_use"),
            LmReply(deltas=[text("done")]),
        ]
    )
    agent = Agent(VsCodeLmModel(host), tools=[EchoTool()])
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    assert result.text == "done"
    second = host.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and second[-1]["toolCallId"] == "c1"
    assert "ping" in second[-1]["text"]
    assert all(e.usage.estimated for e in log.of("turn_end"))
    assert result.usage.estimated


async def test_a_run_without_consent_fails_with_that_reason() -> None:
    host = FakeLmHost([LmReply(error_code=CONSENT_REQUIRED, error="consent required")])
    result = await Agent(VsCodeLmModel(host)).prompt("go")
    assert result.status == "failed"
    assert result.error is not None and "consent required" in result.error
    assert len(host.requests) == 1  # not retried


def test_create_model_builds_it_with_a_host_and_refuses_without_one() -> None:
    config = ModelConfig(provider="vscode-lm", model="copilot/gpt-4o", max_tokens=99)
    host = FakeLmHost([])
    model = create_model(config, lm_host=host)
    assert isinstance(model, VsCodeLmModel)
    assert model.selector == "copilot/gpt-4o"
    with pytest.raises(ConfigError, match="only in the VS Code extension"):
        create_model(config)
