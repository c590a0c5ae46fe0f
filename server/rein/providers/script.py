"""The replay script format, shared by the replay model and the mock server.

A script is a YAML (or JSON) document: either a list of turns or a mapping
with ``turns`` (and optional ``name``/``description``). docs/replay.md
documents every field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rein.harness.calls.arguments import parse_arguments
from rein.harness.errors import ConfigError
from rein.harness.messages import (
    AssistantMessage,
    ContentPart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = ["Expect", "Fault", "ReplayScript", "ReplayToolCall", "ReplayTurn", "load_script"]

_STRICT = ConfigDict(extra="forbid")


class ReplayToolCall(BaseModel):
    model_config = _STRICT

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    #: Send these raw argument characters instead of ``arguments`` (to test
    #: invalid JSON from a model).
    raw_arguments: str | None = None


class Expect(BaseModel):
    """Assertions on the request this turn answers; a mismatch fails loudly."""

    model_config = _STRICT

    #: The last message sent contains this text.
    last_message_contains: str | None = None
    #: Some message contains each of these texts.
    messages_contain: list[str] = Field(default_factory=list)
    #: No message contains any of these texts.
    messages_exclude: list[str] = Field(default_factory=list)
    system_contains: str | None = None
    #: These tools are offered.
    tools_include: list[str] = Field(default_factory=list)
    #: These tools are not offered.
    tools_exclude: list[str] = Field(default_factory=list)
    last_role: Literal["user", "assistant", "tool"] | None = None
    tool_choice: str | None = None


class Fault(BaseModel):
    """A failure to inject instead of (or in the middle of) the reply.

    * ``status``: answer with this HTTP status and ``body`` (mock server);
      the replay model raises the matching Rein error.
    * ``cut``: send the first ``after_chunks`` chunks, then drop the
      connection.
    * ``stall``: send ``after_chunks`` chunks, then go silent for ``seconds``.
    * ``malformed``: send a chunk that is not valid JSON.
    """

    model_config = _STRICT

    kind: Literal["status", "cut", "stall", "malformed"] = "status"
    status: int = 500
    body: str | dict[str, Any] | None = None
    retry_after: float | None = None
    after_chunks: int = 0
    seconds: float = 30.0


class ReplayTurn(BaseModel):
    model_config = _STRICT

    text: str = ""
    thinking: str | None = None
    thinking_signature: str | None = None
    tool_calls: list[ReplayToolCall] = Field(default_factory=list)
    expect: Expect | None = None
    #: Seconds to wait before replying.
    delay: float = 0.0
    #: Stream text in pieces of this many characters (0: one piece).
    chunk_size: int = 0
    #: Seconds between streamed text pieces (the replay model only).
    chunk_delay: float = 0.0
    usage: Usage | None = None
    stop_reason: Literal["stop", "tool_use", "length"] | None = None
    fault: Fault | None = None

    def tool_call_id(self, turn_index: int, call_index: int) -> str:
        call = self.tool_calls[call_index]
        return call.id or f"call_{turn_index}_{call_index}"

    def to_message(self, turn_index: int, model: str) -> AssistantMessage:
        parts: list[ContentPart] = []
        if self.thinking:
            parts.append(ThinkingPart(thinking=self.thinking, signature=self.thinking_signature))
        if self.text:
            parts.append(TextPart(text=self.text))
        for i, call in enumerate(self.tool_calls):
            arguments, parse_error = call.arguments, None
            if call.raw_arguments is not None:
                arguments, parse_error = parse_arguments(call.raw_arguments)
            parts.append(
                ToolCall(
                    id=self.tool_call_id(turn_index, i),
                    name=call.name,
                    arguments=arguments,
                    parse_error=parse_error,
                )
            )
        usage = self.usage or Usage(input_tokens=0, output_tokens=max(1, (len(self.text) + 3) // 4))
        stop = self.stop_reason or ("tool_use" if self.tool_calls else "stop")
        return AssistantMessage(content=tuple(parts), stop_reason=stop, usage=usage, model=model)


class ReplayScript(BaseModel):
    model_config = _STRICT

    name: str = "script"
    description: str = ""
    turns: list[ReplayTurn]

    @classmethod
    def from_data(cls, data: Any, source: str = "<script>") -> ReplayScript:
        if isinstance(data, list):
            data = {"turns": data}
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"invalid replay script {source}: {exc}") from exc


def load_script(path: str | Path) -> ReplayScript:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read replay script {path}: {exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"replay script {path} is not valid YAML: {exc}") from exc
    script = ReplayScript.from_data(data, str(path))
    if not script.name or script.name == "script":
        script = script.model_copy(update={"name": path.stem})
    return script


def _text_of(message: Message) -> str:
    if isinstance(message, UserMessage | ToolResultMessage):
        return message.content
    parts: list[str] = []
    for p in message.content:
        if isinstance(p, TextPart):
            parts.append(p.text)
        elif isinstance(p, ToolCall):
            parts.append(f"{p.name} {p.arguments}")
    return "\n".join(parts)


def check_expect(
    expect: Expect,
    *,
    system: str,
    messages: list[Message],
    tools: list[str],
    tool_choice: str | None,
) -> list[str]:
    """Return the list of failed expectations (empty when all hold)."""
    failures: list[str] = []
    texts = [_text_of(m) for m in messages]
    if expect.last_message_contains is not None:
        last = texts[-1] if texts else ""
        if expect.last_message_contains not in last:
            failures.append(
                f"last message does not contain {expect.last_message_contains!r}; "
                f"it was: {last[:300]!r}"
            )
    for needle in expect.messages_contain:
        if not any(needle in t for t in texts):
            failures.append(f"no message contains {needle!r}")
    for needle in expect.messages_exclude:
        if any(needle in t for t in texts):
            failures.append(f"a message contains {needle!r}, which was not expected")
    if expect.system_contains is not None and expect.system_contains not in system:
        failures.append(f"system prompt does not contain {expect.system_contains!r}")
    for name in expect.tools_include:
        if name not in tools:
            failures.append(f"tool {name!r} was not offered (offered: {tools})")
    for name in expect.tools_exclude:
        if name in tools:
            failures.append(f"tool {name!r} was offered but should not be")
    if expect.last_role is not None:
        role = messages[-1].role if messages else None
        if role != expect.last_role:
            failures.append(f"last message role is {role!r}, expected {expect.last_role!r}")
    if expect.tool_choice is not None and expect.tool_choice != tool_choice:
        failures.append(f"tool_choice is {tool_choice!r}, expected {expect.tool_choice!r}")
    return failures
