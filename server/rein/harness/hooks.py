"""Hooks the loop calls. Every hook is documented "must not raise"; the loop
guards them anyway: a hook that raises is reported as an ``error`` event and
treated as "no change". Hooks may be plain functions or coroutines.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

from rein.harness.messages import Message, ToolCall
from rein.harness.ports import ModelOptions

if TYPE_CHECKING:
    from rein.harness.ports import Model
    from rein.harness.tools import ToolResult

__all__ = ["Block", "Hooks", "TurnInfo", "TurnOverrides"]


@dataclass(frozen=True, slots=True)
class Block:
    """Returned by ``before_tool_call`` to refuse a call; ``reason`` is what
    the model reads."""

    reason: str


@dataclass(frozen=True, slots=True)
class TurnInfo:
    run_id: str
    turn: int
    messages: Sequence[Message]


@dataclass(frozen=True, slots=True)
class TurnOverrides:
    """What ``prepare_next_turn`` changes for the coming request. Fields left
    at None keep the run's own."""

    model: Model | None = None
    options: ModelOptions | None = None
    #: The messages of this request instead of the transcript. For this
    #: request only: they are not stored, and the next turn starts from the
    #: transcript again (``transform_context`` and the window guard still
    #: apply to them).
    messages: Sequence[Message] | None = None


BeforeToolCall = Callable[[ToolCall, BaseModel], "Block | Awaitable[Block | None] | None"]
AfterToolCall = Callable[
    [ToolCall, "ToolResult"], "ToolResult | Awaitable[ToolResult | None] | None"
]
TransformContext = Callable[[Sequence[Message]], "Sequence[Message] | Awaitable[Sequence[Message]]"]
PrepareNextTurn = Callable[[TurnInfo], "TurnOverrides | Awaitable[TurnOverrides | None] | None"]


@dataclass(slots=True)
class Hooks:
    #: May refuse a call (return :class:`Block`); runs after argument validation.
    before_tool_call: BeforeToolCall | None = None
    #: May replace a result (return a new ToolResult) or keep it (return None).
    after_tool_call: AfterToolCall | None = None
    #: Rewrites what is sent to the model, never what is stored.
    transform_context: TransformContext | None = None
    #: May change the model, its options or the request's messages before a turn.
    prepare_next_turn: PrepareNextTurn | None = None
