"""Models: scripted and wrapped ``Model`` implementations, and the
messages and script turns tests feed them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import anyio
import anyio.lowlevel

from rein.harness.messages import (
    AssistantMessage,
    TextPart,
    ToolCall,
    Usage,
)
from rein.harness.ports import (
    ModelDelta,
    ModelRequest,
    TextDelta,
    ToolCallDelta,
    TurnDone,
)


class FunctionModel:
    """A Model whose turn is computed by ``fn(request) -> AssistantMessage``
    (sync or async). Records every request."""

    def __init__(
        self,
        fn: Callable[[ModelRequest], AssistantMessage | Awaitable[AssistantMessage]],
        name: str = "function",
    ) -> None:
        self.fn = fn
        self._name = name
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return self._name

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        self.requests.append(
            ModelRequest(request.system, list(request.messages), request.tools, request.options)
        )
        result = self.fn(request)
        if not isinstance(result, AssistantMessage):
            result = await result
        for part in result.content:
            if isinstance(part, TextPart):
                yield TextDelta(part.text)
        for i, call in enumerate(result.tool_calls):
            yield ToolCallDelta(i, call.id, call.name, "")
        yield TurnDone(result)


class YieldingModel:
    """Wraps a Model; yields to the event loop before each turn, as a model
    across a network does (a ReplayModel without delays never yields)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def requests(self) -> list[ModelRequest]:
        return list(self.inner.requests)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        await anyio.lowlevel.checkpoint()
        async for delta in self.inner.stream(request):
            yield delta


class StallingModel:
    """Wraps a Model; its turn number ``stall_turn`` (1-based) sets
    ``stalled`` and never answers, like a model that hangs: the test aborts
    the run there (or cancels it, as a kill would). Other turns are the
    inner model's."""

    def __init__(self, inner: Any, stall_turn: int) -> None:
        self.inner = inner
        self.stall_turn = stall_turn
        self.turn = 0
        self.stalled = anyio.Event()

    @property
    def name(self) -> str:
        return str(self.inner.name)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        self.turn += 1
        if self.turn == self.stall_turn:
            self.stalled.set()
            await anyio.sleep_forever()
        async for delta in self.inner.stream(request):
            yield delta


class PausingModel:
    """A Model that streams scripted turns delta by delta and pauses each
    turn listed in ``pause_turns`` (1-based) before its delta number
    ``pause_at`` (``len(deltas)``: before the final message): ``paused`` is
    set while it waits for :meth:`resume`. A turn is ``(deltas, final
    message)``; the final message ends the turn."""

    def __init__(
        self,
        turns: Sequence[tuple[Sequence[ModelDelta], AssistantMessage]],
        *,
        pause_at: int = 1,
        pause_turns: Sequence[int] = (1,),
    ) -> None:
        self.turns = list(turns)
        self.pause_at = pause_at
        self.pause_turns = set(pause_turns)
        self.requests: list[ModelRequest] = []
        self.paused = anyio.Event()
        self._resume = anyio.Event()

    @property
    def name(self) -> str:
        return "pausing"

    def resume(self) -> None:
        """Let the paused turn go on; ``paused`` is a fresh event from now."""
        resume = self._resume
        self.paused, self._resume = anyio.Event(), anyio.Event()
        resume.set()

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        self.requests.append(request)
        number = len(self.requests)
        deltas, final = self.turns[number - 1]
        for index, delta in enumerate([*deltas, TurnDone(final)]):
            if index == self.pause_at and number in self.pause_turns:
                resume = self._resume
                self.paused.set()
                await resume.wait()
            yield delta


def assistant(text: str = "", *calls: ToolCall, usage: Usage | None = None) -> AssistantMessage:
    parts: list[Any] = []
    if text:
        parts.append(TextPart(text=text))
    parts.extend(calls)
    return AssistantMessage(
        content=tuple(parts),
        stop_reason="tool_use" if calls else "stop",
        usage=usage or Usage(input_tokens=10, output_tokens=5),
    )


def call(name: str, call_id: str = "c1", **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def plan_turn(*steps: tuple[str, str]) -> dict[str, Any]:
    """A planner's script turn: ``submit_plan`` with (id, description) steps."""
    return {
        "tool_calls": [
            {
                "name": "submit_plan",
                "arguments": {"steps": [{"id": i, "description": d} for i, d in steps]},
            }
        ]
    }


def complete_turn(step: str, success: bool = True, summary: str = "done") -> dict[str, Any]:
    """An executor's script turn: ``complete_step``."""
    return {
        "tool_calls": [
            {
                "name": "complete_step",
                "arguments": {"step_id": step, "success": success, "summary": summary},
            }
        ]
    }
