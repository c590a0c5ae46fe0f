"""The transcript: user, assistant and tool-result messages.

Messages are frozen pydantic models, so a transcript can be shared between the
agent, the store and a model request without copying, and round-trips through
JSON (``Message`` is a union discriminated by ``role``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "AssistantMessage",
    "ContentPart",
    "ImagePart",
    "Message",
    "MessageAdapter",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "dump_messages",
    "load_messages",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid", defer_build=True)


def _none(images: tuple[object, ...]) -> bool:
    return not images


class Usage(BaseModel):
    model_config = _FROZEN

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    #: The provider reported no counts: these are Rein's estimates
    #: (:mod:`rein.harness.conversation.tokens`). A sum with an estimate is an estimate.
    #: Left out of the JSON when False (most providers report counts).
    estimated: bool = Field(False, exclude_if=lambda estimated: not estimated)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            estimated=self.estimated or other.estimated,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class ToolCall(BaseModel):
    """A tool call requested by the model.

    ``parse_error`` is set by a provider when the arguments the model sent were
    not valid JSON; the loop answers such a call with an error result.
    """

    model_config = _FROZEN

    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    parse_error: str | None = None


class TextPart(BaseModel):
    model_config = _FROZEN

    type: Literal["text"] = "text"
    text: str


class ThinkingPart(BaseModel):
    """Model reasoning. ``signature`` (Anthropic) must be sent back verbatim."""

    model_config = _FROZEN

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str | None = None
    redacted: bool = False


class ImagePart(BaseModel):
    """An image the model sees: from a tool result (an MCP tool's screenshot)
    or the person. ``data`` is base64; providers that take no images get a
    placeholder naming it instead."""

    model_config = _FROZEN

    type: Literal["image"] = "image"
    mime_type: str
    data: str

    @property
    def size(self) -> int:
        """The decoded size in bytes (from the base64 length)."""
        return len(self.data) * 3 // 4 - self.data[-2:].count("=")

    def placeholder(self, why: str) -> str:
        return f"[image {self.mime_type}, {self.size} bytes, not shown: {why}]"


ContentPart = Annotated[TextPart | ThinkingPart | ToolCall, Field(discriminator="type")]


class UserMessage(BaseModel):
    model_config = _FROZEN

    role: Literal["user"] = "user"
    content: str
    #: Where the message came from: "prompt", "steer", "follow_up", "repair",
    #: "bootstrap", "nudge" ... The model sees only the content.
    origin: str = "prompt"
    #: Images attached to the message (after the text); left out of the
    #: JSON when there are none.
    images: tuple[ImagePart, ...] = Field(default=(), exclude_if=_none)


StopReason = Literal["stop", "tool_use", "length", "aborted", "error"]


class AssistantMessage(BaseModel):
    model_config = _FROZEN

    role: Literal["assistant"] = "assistant"
    content: tuple[ContentPart, ...] = ()
    stop_reason: StopReason = "stop"
    usage: Usage = Usage()
    model: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def thinking(self) -> str:
        return "".join(p.thinking for p in self.content if isinstance(p, ThinkingPart))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.content if isinstance(p, ToolCall)]

    def is_empty(self) -> bool:
        """No text and no tool calls: a degenerate reply."""
        return not any(
            (isinstance(p, TextPart) and p.text.strip()) or isinstance(p, ToolCall)
            for p in self.content
        )


class ToolResultMessage(BaseModel):
    model_config = _FROZEN

    role: Literal["tool"] = "tool"
    tool_call_id: str
    tool_name: str
    content: str
    is_error: bool = False
    #: Images the tool returned (an MCP tool's screenshot), after the text;
    #: left out of the JSON when there are none.
    images: tuple[ImagePart, ...] = Field(default=(), exclude_if=_none)


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]
MessageAdapter: TypeAdapter[Message] = TypeAdapter(Message)
_MessageList: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


def dump_messages(messages: list[Message]) -> str:
    return _MessageList.dump_json(messages).decode()


def load_messages(data: str | bytes) -> list[Message]:
    return _MessageList.validate_json(data)
