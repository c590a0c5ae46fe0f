"""Property: however the bytes of a valid SSE stream are split into network
chunks, the provider assembles the same deltas and the same message."""

from __future__ import annotations

import functools
import itertools

import anyio
import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from rein.harness.messages import AssistantMessage, TextPart, ThinkingPart, ToolCall
from rein.harness.ports import ModelDelta
from rein.providers import _mock_wire as wire
from rein.providers.script import ReplayTurn
from tests.fakes.providers import ChunkedStream
from tests.providers.conftest import make_model, request, run_turn

TURN = ReplayTurn.model_validate(
    {
        "thinking": "Weighing: ünïcödé and 漢字 → fine.",
        "thinking_signature": "c2lnbmF0dXJl",
        "text": "Here is the plan — step 1, step 2. 🚀 Done?",
        "chunk_size": 3,
        "tool_calls": [
            {"name": "echo", "arguments": {"text": 'naïve "quoted" \\ path'}, "id": "c1"},
            {"name": "write_file", "arguments": {"path": "a/b.py", "content": "x = 1\n"}},
        ],
        "usage": {"input_tokens": 40, "output_tokens": 22, "cache_read_tokens": 8},
    }
)

# OpenAI: the mock's events, a keep-alive comment, a `reasoning` (not
# `reasoning_content`) chunk, and CRLF line ends in one event.
_OPENAI_EVENTS = wire.openai_events(TURN, 0, "gpt-test", include_usage=True)
OPENAI_STREAM = (
    b": keep-alive\n\n"
    + _OPENAI_EVENTS[0].data
    + b'data: {"choices":[{"index":0,"delta":{"reasoning":"Also: "}}]}\r\n\r\n'
    + b"".join(e.data for e in _OPENAI_EVENTS[1:])
)

# Anthropic: a redacted thinking block first, then the mock's events.
_ANTHROPIC_EVENTS = wire.anthropic_events(TURN, 0, "claude-test")
_REDACTED = (
    b'event: content_block_start\ndata: {"type":"content_block_start","index":9,'
    b'"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va"}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":9}\n\n'
)
ANTHROPIC_STREAM = (
    _ANTHROPIC_EVENTS[0].data + _REDACTED + b"".join(e.data for e in _ANTHROPIC_EVENTS[1:])
)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def _assemble(provider: str, chunks: list[bytes]) -> tuple[list[ModelDelta], AssistantMessage]:
    def handler(req: httpx.Request) -> httpx.Response:
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=headers, stream=ChunkedStream(chunks))

    model = make_model(provider, None, transport=httpx.MockTransport(handler))

    async def main() -> tuple[list[ModelDelta], AssistantMessage]:
        turn = await run_turn(model, request())
        await model.aclose()
        return turn.deltas, turn.done

    return anyio.run(main)


@functools.cache
def reference(provider: str) -> tuple[list[ModelDelta], AssistantMessage]:
    """The stream in one piece."""
    return _assemble(provider, [OPENAI_STREAM if provider == "openai" else ANTHROPIC_STREAM])


def test_the_reference_messages_are_complete() -> None:
    _, openai = reference("openai")
    assert openai.content == (
        ThinkingPart(thinking="Also: " + (TURN.thinking or "")),
        TextPart(text=TURN.text),
        ToolCall(id="c1", name="echo", arguments={"text": 'naïve "quoted" \\ path'}),
        ToolCall(
            id="call_0_1", name="write_file", arguments={"path": "a/b.py", "content": "x = 1\n"}
        ),
    )
    assert (openai.usage.input_tokens, openai.usage.cache_read_tokens) == (40, 8)
    _, anthropic = reference("anthropic")
    assert anthropic.content[:3] == (
        ThinkingPart(thinking=TURN.thinking or "", signature="c2lnbmF0dXJl"),
        TextPart(text=TURN.text),
        ToolCall(id="c1", name="echo", arguments={"text": 'naïve "quoted" \\ path'}),
    )
    # The redacted block (index 9) sorts after the others and keeps its data.
    assert anthropic.content[-1] == ThinkingPart(
        thinking="", signature="EmwKAhgBEgy3va", redacted=True
    )
    assert anthropic.stop_reason == "tool_use" and anthropic.usage.output_tokens == 22


cuts = st.lists(st.integers(min_value=0, max_value=10_000), max_size=60)


@settings(max_examples=60, deadline=None)
@given(cuts=cuts)
def test_openai_any_split_gives_the_same_message(cuts: list[int]) -> None:
    assert _assemble("openai", _split(OPENAI_STREAM, cuts)) == reference("openai")


@settings(max_examples=60, deadline=None)
@given(cuts=cuts)
def test_anthropic_any_split_gives_the_same_message(cuts: list[int]) -> None:
    assert _assemble("anthropic", _split(ANTHROPIC_STREAM, cuts)) == reference("anthropic")


def test_byte_by_byte() -> None:
    one_by_one = [OPENAI_STREAM[i : i + 1] for i in range(len(OPENAI_STREAM))]
    assert _assemble("openai", one_by_one) == reference("openai")
    one_by_one = [ANTHROPIC_STREAM[i : i + 1] for i in range(len(ANTHROPIC_STREAM))]
    assert _assemble("anthropic", one_by_one) == reference("anthropic")
