"""A provider's "the prompt is too long" answer is a ContextLengthError (over
real HTTP, from the mock server), and the Agent answers it with relief and
one retry."""

from __future__ import annotations

from typing import Any

import pytest

from rein.harness import Agent, AssistantMessage, HarnessConfig, ToolResultMessage, UserMessage
from rein.harness.errors import ContextLengthError, RequestError
from rein.harness.messages import Message, TextPart, ToolCall
from rein.providers._errors import error_from_payload, is_context_length
from rein.providers.mock_server import MockServer
from tests.fakes.events import EventLog
from tests.providers.conftest import make_model, request, run_turn

TOO_LONG: dict[str, dict[str, Any]] = {
    "openai": {
        "error": {
            "message": "This model's maximum context length is 8192 tokens. However, your "
            "messages resulted in 9000 tokens.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
    "anthropic": {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 210000 tokens > 200000 maximum",
        },
    },
}
PROVIDERS = [pytest.param("openai", id="openai"), pytest.param("anthropic", id="anthropic")]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_too_long_prompt_is_a_context_length_error(
    mock_server: MockServer, provider: str
) -> None:
    mock_server.load([{"fault": {"status": 400, "body": TOO_LONG[provider]}}])
    model = make_model(provider, mock_server)
    with pytest.raises(ContextLengthError) as caught:
        await run_turn(model, request())
    await model.aclose()
    assert caught.value.status == 400
    assert len(mock_server.requests) == 1  # not retried by the provider


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_another_refusal_is_a_plain_request_error(
    mock_server: MockServer, provider: str
) -> None:
    body = {"error": {"type": "invalid_request_error", "message": "temperature: too high"}}
    mock_server.load([{"fault": {"status": 400, "body": body}}])
    model = make_model(provider, mock_server)
    with pytest.raises(RequestError) as caught:
        await run_turn(model, request())
    await model.aclose()
    assert not isinstance(caught.value, ContextLengthError)


def test_the_classifier_reads_codes_messages_and_in_stream_errors() -> None:
    assert is_context_length(400, '{"error": {"code": "context_length_exceeded"}}')
    assert is_context_length(413, "prompt is too long")
    assert is_context_length(None, "the request exceeds the available context size")
    assert not is_context_length(500, "prompt is too long")  # a server error stays transient
    assert not is_context_length(400, "invalid model")
    streamed = {"type": "error", "error": TOO_LONG["anthropic"]["error"]}
    assert isinstance(error_from_payload(streamed, label="Anthropic"), ContextLengthError)


def history(results: int) -> list[Message]:
    out: list[Message] = [UserMessage(content="read them")]
    for i in range(results):
        out.append(
            AssistantMessage(
                content=(ToolCall(id=f"c{i}", name="big", arguments={}),), stop_reason="tool_use"
            )
        )
        out.append(ToolResultMessage(tool_call_id=f"c{i}", tool_name="big", content="word " * 1000))
    out.append(AssistantMessage(content=(TextPart(text="read"),)))
    return out


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_agent_relieves_and_retries_once_over_http(
    mock_server: MockServer, provider: str
) -> None:
    mock_server.load(
        [
            {"fault": {"status": 400, "body": TOO_LONG[provider]}},
            {"text": "fits now", "expect": {"last_message_contains": "go on"}},
        ]
    )
    model = make_model(provider, mock_server)
    agent = Agent(model, messages=history(6), config=HarnessConfig(run_idle_timeout_ms=10_000))
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("go on")
    await model.aclose()
    assert result.status == "completed", result.error
    assert result.text == "fits now"
    assert [r.outcome for r in mock_server.requests] == ["fault:status", "completed"]
    assert [c.kind for c in log.of("compaction")] == ["elide"]
