"""Bounds on what a model server may send: the bytes of one response and of
one line of it (a server that streams without end, or one endless line,
would otherwise grow Rein's memory until the machine gives out), and the
time a stream may go on with keep-alives only (Anthropic ``ping`` events,
``: comment`` lines), which reset the idle timeout but carry no reply."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

import anyio
import httpx
from httpx_sse import ServerSentEvent

from rein.harness.errors import StreamError, TransientError

__all__ = ["MAX_LINE_BYTES", "MAX_RESPONSE_BYTES", "BoundedStream", "with_progress"]

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


def is_progress(event: ServerSentEvent) -> bool:
    """Whether an event carries the reply (a keep-alive ``ping`` does not)."""
    return bool(event.data) and event.event != "ping"


async def with_progress(
    events: AsyncIterator[ServerSentEvent], seconds: float, label: str
) -> AsyncGenerator[ServerSentEvent, None]:
    """``events``, failing with a TransientError when ``seconds`` pass
    without an event that carries the reply (:func:`is_progress`)."""
    deadline = anyio.current_time() + seconds
    iterator = aiter(events)
    while True:
        event: ServerSentEvent | None = None
        with anyio.move_on_at(deadline) as scope:
            event = await anext(iterator, None)
        if scope.cancelled_caught:
            raise TransientError(
                f"{label} sent no part of the reply for {seconds:g} s, only keep-alives "
                "(streamProgressTimeout); the request was cancelled"
            )
        if event is None:
            return
        if is_progress(event):
            deadline = anyio.current_time() + seconds
        yield event
