"""Bounds on what a model server may send: the bytes of one response and of
one line of it (a server that streams without end, or one endless line,
would otherwise grow Rein's memory until the machine gives out), and the
time a stream may go on with keep-alives only (Anthropic ``ping`` events,
``: comment`` lines, events whose delta is empty), which reset the idle
timeout but carry no reply."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TypeVar

import anyio
import httpx

from rein.harness.errors import StreamError, TransientError
from rein.harness.ports import ModelDelta, TextDelta, ThinkingDelta, ToolCallDelta

__all__ = ["MAX_LINE_BYTES", "MAX_RESPONSE_BYTES", "BoundedStream", "Progress", "is_progress"]

T = TypeVar("T")

#: One response body at most (a reply of 128k tokens streams well under
#: 10 MB of SSE).
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
#: One line of a response at most (Rein asks for an unencoded body and
#: refuses an encoded one, so these count the bytes the reply takes).
MAX_LINE_BYTES = 16 * 1024 * 1024


class BoundedStream(httpx.AsyncByteStream):
    """Passes a response body through; raises StreamError (not retried)
    once it passes ``max_total`` bytes, or, when ``max_line`` is given,
    once one line passes ``max_line`` bytes. It counts the bytes on the
    wire: an encoded body is refused before it is read (``_http``)."""

    def __init__(
        self,
        inner: httpx.AsyncByteStream,
        *,
        label: str,
        max_total: int = MAX_RESPONSE_BYTES,
        max_line: int | None = MAX_LINE_BYTES,
    ) -> None:
        self._inner = inner
        self._label = label
        self._max_total = max_total
        self._max_line = max_line

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        line = 0
        async for chunk in self._inner:
            total += len(chunk)
            if total > self._max_total:
                raise StreamError(
                    f"{self._label} sent more than {_mb(self._max_total)} in one response: "
                    "the request was cancelled"
                )
            if self._max_line is not None:
                end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
                line = len(chunk) - end - 1 if end >= 0 else line + len(chunk)
                if line > self._max_line:
                    raise StreamError(
                        f"{self._label} sent a line of more than {_mb(self._max_line)}: "
                        "the request was cancelled"
                    )
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"


def is_progress(delta: ModelDelta) -> bool:
    """Whether a delta is a part of the reply: text, thinking, a tool call's
    arguments, id or name. An event that yields none (a keep-alive, an empty
    ``delta``, an empty ``text_delta``) is not."""
    if isinstance(delta, TextDelta | ThinkingDelta):
        return bool(delta.text)
    if isinstance(delta, ToolCallDelta):
        return bool(delta.arguments_delta or delta.id or delta.name)
    return False


class Progress:
    """The clock of ``streamProgressTimeout``: :meth:`next` waits for the
    next item of a stream until ``seconds`` have passed since the last part
    of the reply (:meth:`saw`), then fails with a TransientError."""

    def __init__(self, seconds: float, label: str) -> None:
        self._seconds = seconds
        self._label = label
        self._deadline = anyio.current_time() + seconds

    def saw(self, deltas: Iterable[ModelDelta]) -> None:
        """Restart the clock when ``deltas`` hold a part of the reply."""
        if any(is_progress(d) for d in deltas):
            self._deadline = anyio.current_time() + self._seconds

    async def next(self, items: AsyncIterator[T]) -> T | None:
        """The next item of ``items``; None at its end."""
        with anyio.move_on_at(self._deadline):
            return await anext(items, None)
        raise TransientError(
            f"{self._label} sent no part of the reply for {self._seconds:g} s, only "
            "keep-alives (streamProgressTimeout): no text, thinking or tool call came; "
            "the request was cancelled"
        )
