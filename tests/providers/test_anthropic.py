"""The Anthropic provider against the mock server over real HTTP."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from rein.harness.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from rein.harness.ports import TextDelta, ThinkingDelta, ToolCallDelta
from rein.providers.anthropic import ANTHROPIC_VERSION, anthropic_messages, anthropic_tool_choice
from rein.providers.mock_server import MockServer
from tests.providers.conftest import ECHO, make_model, request, run_turn

_EPHEMERAL = {"type": "ephemeral"}


async def test_streams_text_with_usage_and_cache_counts(
    mock_server: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    mock_server.load(
        [
            {
                "text": "Bonjour, le monde",
                "chunk_size": 4,
                "usage": {
                    "input_tokens": 20,
                    "output_tokens": 9,
                    "cache_read_tokens": 1000,
                    "cache_write_tokens": 300,
                },
            }
        ]
    )
    turn = await run_turn(make_model("anthropic", mock_server), request("salut"))
    assert turn.text_deltas == ["Bonj", "our,", " le ", "mond", "e"]
    message = turn.done
    assert message.content == (TextPart(text="Bonjour, le monde"),)
    assert message.stop_reason == "stop"
    assert message.usage == Usage(
        input_tokens=20, output_tokens=9, cache_read_tokens=1000, cache_write_tokens=300
    )
    seen = mock_server.requests[0]
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == "sk-ant-test"
    assert seen.headers["anthropic-version"] == ANTHROPIC_VERSION
    assert "authorization" not in seen.headers
    assert seen.body["system"] == [
        {"type": "text", "text": "You are a test.", "cache_control": _EPHEMERAL}
    ]
    assert seen.body["max_tokens"] == 8192 and seen.body["stream"] is True
    assert seen.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "salut"}]}
    ]


async def test_parallel_tool_use_blocks_with_input_json_deltas(mock_server: MockServer) -> None:
    mock_server.load(
        [
            {
                "text": "Two calls.",
                "chunk_size": 5,
                "tool_calls": [
                    {"name": "echo", "arguments": {"text": "one"}, "id": "toolu_1"},
                    {"name": "echo", "arguments": {"text": "two", "n": [1, 2]}, "id": "toolu_2"},
                ],
            }
        ]
    )
    turn = await run_turn(make_model("anthropic", mock_server), request(tools=[ECHO]))
    calls = [d for d in turn.deltas if isinstance(d, ToolCallDelta)]
    assert calls[0] == ToolCallDelta(0, "toolu_1", "echo", "")
    assert "".join(d.arguments_delta for d in calls if d.index == 1) == json.dumps(
        {"text": "two", "n": [1, 2]}, separators=(",", ":")
    )
    message = turn.done
    assert message.stop_reason == "tool_use"
    assert message.content == (
        TextPart(text="Two calls."),
        ToolCall(id="toolu_1", name="echo", arguments={"text": "one"}),
        ToolCall(id="toolu_2", name="echo", arguments={"text": "two", "n": [1, 2]}),
    )


async def test_thinking_signature_is_kept_and_sent_back(mock_server: MockServer) -> None:
    mock_server.load(
        [
            {
                "thinking": "Consider the options.",
                "thinking_signature": "EqQBCkYIARgCKkD",
                "chunk_size": 7,
                "tool_calls": [{"name": "echo", "arguments": {"text": "x"}, "id": "toolu_9"}],
            },
            {"text": "done", "stop_reason": "length"},
        ]
    )
    model = make_model("anthropic", mock_server, thinking_budget=2048)
    first = await run_turn(model, request("think", tools=[ECHO]))
    assert "".join(d.text for d in first.deltas if isinstance(d, ThinkingDelta)) == (
        "Consider the options."
    )
    thinking = first.done.content[0]
    assert thinking == ThinkingPart(thinking="Consider the options.", signature="EqQBCkYIARgCKkD")
    transcript: list[Message] = [
        UserMessage(content="think"),
        first.done,
        ToolResultMessage(tool_call_id="toolu_9", tool_name="echo", content="echo: x"),
    ]
    second = await run_turn(model, request(transcript, tools=[ECHO]))
    assert second.done.stop_reason == "length"
    body = mock_server.requests[1].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "Consider the options.",
                "signature": "EqQBCkYIARgCKkD",
            },
            {
                "type": "tool_use",
                "id": "toolu_9",
                "name": "echo",
                "input": {"text": "x"},
                "cache_control": _EPHEMERAL,
            },
        ],
    }


def test_messages_merge_tool_results_and_mark_the_last_stable_message() -> None:
    transcript: list[Message] = [
        UserMessage(content="start"),
        UserMessage(content="and also this"),
        AssistantMessage(
            content=(
                ThinkingPart(thinking="unsigned, from another provider"),
                ThinkingPart(thinking="", signature="opaque-blob", redacted=True),
                TextPart(text="Two calls."),
                ToolCall(id="t1", name="echo", arguments={"text": "a"}),
                ToolCall(id="t2", name="echo", arguments={"text": "b"}),
            )
        ),
        ToolResultMessage(tool_call_id="t1", tool_name="echo", content="echo: a"),
        ToolResultMessage(tool_call_id="t2", tool_name="echo", content="boom", is_error=True),
        UserMessage(content="steer: use b"),
        AssistantMessage(content=(), stop_reason="aborted"),
    ]
    assert anthropic_messages(transcript) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "start"},
                {"type": "text", "text": "and also this"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "redacted_thinking", "data": "opaque-blob"},
                {"type": "text", "text": "Two calls."},
                {"type": "tool_use", "id": "t1", "name": "echo", "input": {"text": "a"}},
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "echo",
                    "input": {"text": "b"},
                    "cache_control": _EPHEMERAL,
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "echo: a"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": True},
                {"type": "text", "text": "steer: use b"},
            ],
        },
    ]


def test_a_single_user_turn_has_no_message_breakpoint() -> None:
    assert anthropic_messages([UserMessage(content="hi")]) == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        pytest.param("auto", {"type": "auto"}, id="auto"),
        pytest.param("required", {"type": "any"}, id="required"),
        pytest.param("none", {"type": "none"}, id="none"),
        pytest.param("echo", {"type": "tool", "name": "echo"}, id="named"),
    ],
)
async def test_tool_choice_reaches_the_wire(
    mock_server: MockServer, choice: str, wire: dict[str, Any]
) -> None:
    assert anthropic_tool_choice(choice) == wire
    mock_server.load([{"text": "ok", "expect": {"tool_choice": choice}}])
    await run_turn(make_model("anthropic", mock_server), request(tools=[ECHO], tool_choice=choice))
    body = mock_server.requests[0].body
    assert body["tool_choice"] == wire
    assert body["tools"] == [
        {"name": "echo", "description": ECHO.description, "input_schema": ECHO.parameters}
    ]


async def test_expectations_decode_the_anthropic_request(mock_server: MockServer) -> None:
    mock_server.load(
        [
            {
                "text": "ok",
                "expect": {
                    "last_role": "user",
                    "last_message_contains": "steer",
                    "messages_contain": ["echo: a", "echo {'text': 'a'}"],
                    "system_contains": "test",
                    "tools_include": ["echo"],
                },
            }
        ]
    )
    transcript: list[Message] = [
        UserMessage(content="go"),
        AssistantMessage(content=(ToolCall(id="t1", name="echo", arguments={"text": "a"}),)),
        ToolResultMessage(tool_call_id="t1", tool_name="echo", content="echo: a"),
        UserMessage(content="steer here"),
    ]
    turn = await run_turn(make_model("anthropic", mock_server), request(transcript, tools=[ECHO]))
    assert turn.done.text == "ok"


async def test_block_types_rein_does_not_use_are_skipped() -> None:
    def event(kind: str, body: dict[str, Any]) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **body})}\n\n".encode()

    stream = b"".join(
        [
            event("message_start", {"message": {"model": "claude-x", "usage": {"input_tokens": 3}}}),
            event("content_block_start", {"index": 0, "content_block": {"type": "server_tool_use", "id": "s1", "name": "web_search"}}),
            event("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
            event("content_block_stop", {"index": 0}),
            event("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}}),
            event("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": "Found it."}}),
            event("content_block_delta", {"index": 1, "delta": {"type": "citations_delta", "citation": {}}}),
            event("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}),
            event("message_stop", {}),
        ]
    )  # fmt: skip

    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream)

    model = make_model("anthropic", None, transport=httpx.MockTransport(handler))
    turn = await run_turn(model, request())
    assert turn.deltas == [TextDelta("Found it.")]
    assert turn.done.content == (TextPart(text="Found it."),)
    assert turn.done.model == "claude-x"
    assert turn.done.usage == Usage(input_tokens=3, output_tokens=4)


@pytest.mark.parametrize(
    ("start_usage", "delta_usage", "given_out"),
    [({}, None, None), ({"output_tokens": 1}, {"output_tokens": 6}, 6)],
    ids=["no-counts", "no-input-count"],
)
async def test_a_count_the_stream_does_not_give_is_estimated_not_zero(
    start_usage: dict[str, int], delta_usage: dict[str, int] | None, given_out: int | None
) -> None:
    """A server that leaves out ``input_tokens`` (or every count): the turn
    is not free; what is missing is estimated from the request and the
    reply, the usage marked ``estimated``; a count given is kept."""

    def event(kind: str, body: dict[str, Any]) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **body})}\n\n".encode()

    delta: dict[str, Any] = {"delta": {"stop_reason": "end_turn"}}
    if delta_usage is not None:
        delta["usage"] = delta_usage
    stream = b"".join(
        [
            event("message_start", {"message": {"model": "claude-x", "usage": start_usage}}),
            event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
            event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "The whole answer, in a few words."}}),
            event("content_block_stop", {"index": 0}),
            event("message_delta", delta),
            event("message_stop", {}),
        ]
    )  # fmt: skip

    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream)

    model = make_model("anthropic", None, transport=httpx.MockTransport(handler))
    usage = (await run_turn(model, request("a question of some length"))).done.usage
    assert usage.estimated
    assert usage.input_tokens > 5
    if given_out is None:
        assert usage.output_tokens >= 3
    else:
        assert usage.output_tokens == given_out
