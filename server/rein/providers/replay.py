"""The replay model: a real :class:`~rein.harness.ports.Model` that plays a
scripted conversation, checks what it receives, and records every request.

Used by ``rein demo``, the evals and the tests; the mock server replays the
same format over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from rein.harness.errors import (
    AuthError,
    ContextLengthError,
    ProviderError,
    RateLimitError,
    RequestError,
    ScriptError,
    StreamError,
    TransientError,
)
from rein.harness.messages import AssistantMessage, Message
from rein.harness.ports import (
    ModelDelta,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    TurnDone,
)
from rein.providers._errors import is_context_length
from rein.providers.script import ReplayScript, ReplayTurn, check_expect, load_script

__all__ = ["RecordedRequest", "ReplayModel"]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    system: str
    messages: list[Message]
    tools: list[str]
    tool_choice: str | None


def _status_error(status: int, message: str, retry_after: float | None) -> ProviderError:
    if status == 429:
        return RateLimitError(message, status=status, retry_after=retry_after)
    if status in (401, 403):
        return AuthError(message, status=status)
    if status >= 500:
        return TransientError(message, status=status, retry_after=retry_after)
    if is_context_length(status, message):
        return ContextLengthError(message, status=status)
    return RequestError(message, status=status)


class ReplayModel:
    """Plays ``script`` turn by turn. Runs out loudly: a request past the end
    raises :class:`ScriptError` (the run fails with that reason)."""

    def __init__(
        self,
        script: ReplayScript | Sequence[ReplayTurn | dict[str, object]] | str | Path,
        *,
        record: bool = True,
        name: str = "replay",
    ) -> None:
        if isinstance(script, str | Path):
            script = load_script(script)
        elif not isinstance(script, ReplayScript):
            script = ReplayScript.from_data(
                [t.model_dump() if isinstance(t, ReplayTurn) else t for t in script]
            )
        self.script = script
        self.record = record
        self._name = name
        self.index = 0
        self.requests: list[RecordedRequest] = []
        self._messages: dict[int, AssistantMessage] = {}
        self._deltas: dict[int, list[ToolCallDelta]] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        return len(self.script.turns) - self.index

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        tool_names = [t.name for t in request.tools]
        tool_choice = request.options.tool_choice
        if self.record:
            self.requests.append(
                RecordedRequest(request.system, list(request.messages), tool_names, tool_choice)
            )
        if self.index >= len(self.script.turns):
            raise ScriptError(
                f"replay script {self.script.name!r} ran out: it has "
                f"{len(self.script.turns)} turns and turn {self.index + 1} was requested"
            )
        turn_index = self.index
        turn = self.script.turns[turn_index]
        self.index += 1
        if turn.expect is not None:
            failures = check_expect(
                turn.expect,
                system=request.system,
                messages=list(request.messages),
                tools=tool_names,
                tool_choice=tool_choice,
            )
            if failures:
                raise ScriptError(
                    f"replay script {self.script.name!r} turn {turn_index + 1}: "
                    + "; ".join(failures)
                )
        if turn.delay > 0:
            await anyio.sleep(turn.delay)
        fault = turn.fault
        if fault is not None and fault.kind == "status":
            body = fault.body if isinstance(fault.body, str) else json.dumps(fault.body)
            raise _status_error(fault.status, body or f"HTTP {fault.status}", fault.retry_after)
        chunks = 0
        if turn.thinking:
            yield ThinkingDelta(turn.thinking)
            chunks += 1
        if turn.text:
            size = turn.chunk_size or len(turn.text)
            for start in range(0, len(turn.text), size):
                if fault is not None and chunks >= fault.after_chunks:
                    break
                yield TextDelta(turn.text[start : start + size])
                chunks += 1
                if turn.chunk_delay > 0:
                    await anyio.sleep(turn.chunk_delay)
        if fault is not None:
            if fault.kind == "stall":
                await anyio.sleep(fault.seconds)
                raise TransientError("stream stalled", streamed=chunks > 0)
            if fault.kind == "malformed":
                raise StreamError("malformed chunk in the model stream", streamed=chunks > 0)
            raise TransientError("the stream was cut off", streamed=chunks > 0)
        message = self._messages.get(turn_index)
        if message is None:
            message = self._messages[turn_index] = turn.to_message(turn_index, self._name)
        deltas = self._deltas.get(turn_index)
        if deltas is None:
            deltas = self._deltas[turn_index] = [
                ToolCallDelta(
                    i,
                    turn.tool_call_id(turn_index, i),
                    call.name,
                    call.raw_arguments
                    if call.raw_arguments is not None
                    else (json.dumps(call.arguments) if call.arguments else "{}"),
                )
                for i, call in enumerate(turn.tool_calls)
            ]
        for delta in deltas:
            yield delta
        yield TurnDone(message)
