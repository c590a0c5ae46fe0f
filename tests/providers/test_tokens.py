"""Token estimates (rein.harness.conversation.tokens): cheap, roughly right, safe-side."""

from __future__ import annotations

import uuid

import pytest

from rein.harness.conversation import tokens
from rein.harness.conversation.tokens import (
    MESSAGE_OVERHEAD,
    estimate_message_tokens,
    estimate_tokens,
)
from rein.harness.messages import (
    AssistantMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

PROSE = "The quick brown fox jumps over the lazy dog. It was the best of times. " * 20


def test_estimates_are_close_to_chars_over_four_for_prose_and_code() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello") == 1
    assert estimate_tokens("hello, world!") == 4
    chars = len(PROSE) / 4
    assert 0.8 * chars <= estimate_tokens(PROSE) <= 1.3 * chars
    code = "def parse_arguments(raw: str) -> dict[str, Any]:\n    return json.loads(raw)\n" * 20
    assert 0.8 * len(code) / 4 <= estimate_tokens(code) <= 1.5 * len(code) / 4


def test_non_ascii_text_counts_about_one_token_a_character() -> None:
    assert estimate_tokens("日本語のテキスト") == 8
    assert estimate_tokens("naïve café") >= 2


def test_message_estimates_cover_every_part() -> None:
    user = UserMessage(content=PROSE)
    assert estimate_message_tokens(user) == MESSAGE_OVERHEAD + estimate_tokens(PROSE)
    call = ToolCall(id="c1", name="write_file", arguments={"path": "a.py", "content": PROSE})
    assistant = AssistantMessage(
        content=(ThinkingPart(thinking="hmm " * 50), TextPart(text="Writing."), call)
    )
    only_text = AssistantMessage(content=(TextPart(text="Writing."),))
    assert estimate_message_tokens(assistant) > estimate_message_tokens(only_text) + 50 + (
        estimate_tokens(PROSE)
    )
    result = ToolResultMessage(tool_call_id="c1", tool_name="write_file", content="ok")
    assert MESSAGE_OVERHEAD < estimate_message_tokens(result) < 10


def test_re_estimating_a_transcript_does_not_tokenize_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokenized: list[str] = []
    real = tokens._PIECES

    class Counting:
        def findall(self, text: str) -> list[str]:
            tokenized.append(text)
            return real.findall(text)

    monkeypatch.setattr(tokens, "_PIECES", Counting())
    marker = uuid.uuid4().hex  # texts no earlier test has estimated
    transcript = [UserMessage(content=f"{marker} {i} " + PROSE * 5) for i in range(200)]
    first = sum(estimate_message_tokens(m) for m in transcript)
    assert len(tokenized) == 200
    for _ in range(10):
        assert sum(estimate_message_tokens(m) for m in transcript) == first
    assert len(tokenized) == 200  # cached: unchanged messages are not tokenized again
