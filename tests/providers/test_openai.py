"""The OpenAI-compatible provider against the mock server over real HTTP."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rein.harness.errors import RequestError
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
from rein.providers.mock_server import MockServer
from rein.providers.openai import openai_messages, openai_tool_choice
from tests.providers.conftest import ECHO, make_model, request, run_turn


async def test_streams_text_deltas_usage_and_the_final_message(
    mock_server: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    mock_server.load(
        [
            {
                "text": "Hello there, streaming world",
                "chunk_size": 6,
                "usage": {"input_tokens": 12, "output_tokens": 7, "cache_read_tokens": 30},
            }
        ]
    )
    model = make_model("openai", mock_server)
    turn = await run_turn(model, request("hi"))
    assert turn.text_deltas == ["Hello ", "there,", " strea", "ming w", "orld"]
    message = turn.done
    assert message.content == (TextPart(text="Hello there, streaming world"),)
    assert message.stop_reason == "stop"
    assert message.usage == Usage(input_tokens=12, output_tokens=7, cache_read_tokens=30)
    assert message.model == "openai-test"
    seen = mock_server.requests[0]
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer sk-test-key"
    assert seen.body["stream"] is True
    assert seen.body["stream_options"] == {"include_usage": True}
    assert seen.body["messages"] == [
        {"role": "system", "content": "You are a test."},
        {"role": "user", "content": "hi"},
    ]
    assert "tools" not in seen.body and "max_tokens" not in seen.body
    assert seen.outcome == "completed"


async def test_parallel_tool_calls_interleaved_by_index_are_assembled(
    mock_server: MockServer,
) -> None:
    mock_server.load(
        [
            {
                "chunk_size": 3,
                "tool_calls": [
                    {"name": "echo", "arguments": {"text": "first call"}, "id": "call_a"},
                    {"name": "echo", "arguments": {"text": "second"}, "id": "call_b"},
                    {"name": "read_file", "arguments": {"path": "src/x.py"}},
                ],
            }
        ]
    )
    turn = await run_turn(make_model("openai", mock_server), request(tools=[ECHO]))
    calls = [d for d in turn.deltas if isinstance(d, ToolCallDelta)]
    firsts = {d.index: d for d in reversed(calls)}  # the first delta of each index
    assert [(firsts[i].id, firsts[i].name) for i in range(3)] == [
        ("call_a", "echo"),
        ("call_b", "echo"),
        ("call_0_2", "read_file"),
    ]
    # The wire interleaves the calls' fragments; each index reassembles alone.
    assert [d.index for d in calls[3:6]] == [0, 1, 2]
    for index, expected in enumerate(
        [{"text": "first call"}, {"text": "second"}, {"path": "src/x.py"}]
    ):
        raw = "".join(d.arguments_delta for d in calls if d.index == index)
        assert json.loads(raw) == expected
    message = turn.done
    assert message.stop_reason == "tool_use"
    assert message.tool_calls == [
        ToolCall(id="call_a", name="echo", arguments={"text": "first call"}),
        ToolCall(id="call_b", name="echo", arguments={"text": "second"}),
        ToolCall(id="call_0_2", name="read_file", arguments={"path": "src/x.py"}),
    ]


async def test_reasoning_text_and_calls_come_in_that_order(mock_server: MockServer) -> None:
    mock_server.load(
        [
            {
                "thinking": "Let me think about it.",
                "text": "Calling echo.",
                "chunk_size": 8,
                "tool_calls": [{"name": "echo", "arguments": {"text": "x"}, "id": "c1"}],
            }
        ]
    )
    turn = await run_turn(make_model("openai", mock_server), request(tools=[ECHO]))
    kinds = [type(d).__name__ for d in turn.deltas]
    assert kinds[0] == "ThinkingDelta" and kinds[-1] == "ToolCallDelta"
    assert "".join(d.text for d in turn.deltas if isinstance(d, ThinkingDelta)) == (
        "Let me think about it."
    )
    assert turn.done.content == (
        ThinkingPart(thinking="Let me think about it."),
        TextPart(text="Calling echo."),
        ToolCall(id="c1", name="echo", arguments={"text": "x"}),
    )


async def test_invalid_tool_arguments_become_a_parse_error(mock_server: MockServer) -> None:
    mock_server.load(
        [
            {
                "tool_calls": [
                    {"name": "echo", "raw_arguments": '{"text": "unterminated', "id": "bad"},
                    {"name": "echo", "raw_arguments": "[1, 2]", "id": "list"},
                    {"name": "echo", "raw_arguments": "", "id": "empty"},
                ]
            }
        ]
    )
    message = (await run_turn(make_model("openai", mock_server), request(tools=[ECHO]))).done
    bad, listed, empty = message.tool_calls
    assert bad.arguments == {} and bad.parse_error and "unterminated" in bad.parse_error
    assert listed.parse_error == "the arguments are a JSON list, not an object"
    assert empty.arguments == {} and empty.parse_error is None


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_deeply_nested_tool_arguments_become_a_parse_error(
    provider: str, mock_server: MockServer
) -> None:
    # 254 levels failed the run's events, 1,000 the parser (RecursionError).
    def nested(depth: int) -> str:
        return '{"text": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    mock_server.load(
        [
            {
                "tool_calls": [
                    {"name": "echo", "raw_arguments": nested(depth), "id": f"d{depth}"}
                    for depth in (64, 65, 254, 1_000, 100_000)
                ]
            }
        ]
    )
    message = (await run_turn(make_model(provider, mock_server), request(tools=[ECHO]))).done
    at_limit, *deep = message.tool_calls
    assert at_limit.parse_error is None
    for call in deep:
        assert call.arguments == {}
        assert call.parse_error == "the arguments are nested deeper than 64 levels", call.id


async def test_length_stop_reason(mock_server: MockServer) -> None:
    mock_server.load([{"text": "cut", "stop_reason": "length"}])
    message = (await run_turn(make_model("openai", mock_server), request())).done
    assert message.stop_reason == "length"


def test_messages_mapping_skips_empty_assistant_messages() -> None:
    transcript: list[Message] = [
        UserMessage(content="do it"),
        AssistantMessage(content=(ThinkingPart(thinking="hm"),), stop_reason="aborted"),
        UserMessage(content="again"),
        AssistantMessage(
            content=(
                ThinkingPart(thinking="private"),
                TextPart(text="sure"),
                ToolCall(id="c1", name="echo", arguments={"text": "é"}),
            )
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="echo", content="echo: é"),
        AssistantMessage(content=(ToolCall(id="c2", name="echo", arguments={}),)),
    ]
    assert openai_messages("SYS", transcript) == [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": "do it"},
        {"role": "user", "content": "again"},
        {
            "role": "assistant",
            "content": "sure",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "echo", "arguments": json.dumps({"text": "é"})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "echo: é"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "echo", "arguments": "{}"}}
            ],
        },
    ]
    assert openai_messages("", [UserMessage(content="x")]) == [{"role": "user", "content": "x"}]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        pytest.param("auto", "auto", id="auto"),
        pytest.param("required", "required", id="required"),
        pytest.param("none", "none", id="none"),
        pytest.param("echo", {"type": "function", "function": {"name": "echo"}}, id="named"),
    ],
)
async def test_tool_choice_reaches_the_wire(
    mock_server: MockServer, choice: str, wire: Any
) -> None:
    assert openai_tool_choice(choice) == wire
    mock_server.load([{"text": "ok", "expect": {"tool_choice": choice, "tools_include": ["echo"]}}])
    model = make_model("openai", mock_server)
    await run_turn(model, request(tools=[ECHO], tool_choice=choice))
    body = mock_server.requests[0].body
    assert body["tool_choice"] == wire
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "echo",
                "description": ECHO.description,
                "parameters": ECHO.parameters,
            },
        }
    ]


async def test_options_headers_and_no_key(mock_server: MockServer) -> None:
    mock_server.load([{"text": "a"}, {"text": "b"}])
    model = make_model(
        "openai",
        mock_server,
        max_tokens=256,
        temperature=0.2,
        extra_headers={"HTTP-Referer": "https://rein.dev", "X-Title": "Rein"},
    )
    await run_turn(model, request())
    await run_turn(model, request(max_tokens=99, temperature=0.0, model="other-model"))
    first, second = (r.body for r in mock_server.requests)
    assert (first["max_tokens"], first["temperature"], first["model"]) == (256, 0.2, "openai-test")
    assert (second["max_tokens"], second["temperature"], second["model"]) == (
        99,
        0.0,
        "other-model",
    )
    headers = mock_server.requests[0].headers
    assert headers["http-referer"] == "https://rein.dev" and headers["x-title"] == "Rein"
    assert "authorization" not in headers  # no key: fine for local servers


async def test_a_failed_expectation_is_a_request_error_naming_it(mock_server: MockServer) -> None:
    mock_server.load([{"text": "x", "expect": {"last_message_contains": "the magic word"}}])
    with pytest.raises(RequestError, match=r"mock expectation failed.*the magic word") as info:
        await run_turn(make_model("openai", mock_server), request("hello"))
    assert info.value.status == 400
    assert len(mock_server.requests) == 1  # a 400 is never retried


async def test_expectations_see_tool_results_sent_back(mock_server: MockServer) -> None:
    mock_server.load(
        [
            {
                "text": "done",
                "expect": {
                    "last_role": "tool",
                    "last_message_contains": "echo: hi",
                    "messages_contain": ["echo {'text': 'hi'}"],
                    "system_contains": "a test",
                },
            }
        ]
    )
    transcript: list[Message] = [
        UserMessage(content="go"),
        AssistantMessage(content=(ToolCall(id="c1", name="echo", arguments={"text": "hi"}),)),
        ToolResultMessage(tool_call_id="c1", tool_name="echo", content="echo: hi"),
    ]
    turn = await run_turn(make_model("openai", mock_server), request(transcript, tools=[ECHO]))
    assert turn.done.text == "done"
    assert [d for d in turn.deltas if isinstance(d, TextDelta)] == [TextDelta("done")]


async def test_an_extra_header_replaces_a_built_in_one(
    mock_server: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ignored")
    mock_server.load([{"text": "a"}])
    model = make_model("openai", mock_server, extra_headers={"Authorization": "Token gateway"})
    await run_turn(model, request())
    assert mock_server.requests[0].headers["authorization"] == "Token gateway"
