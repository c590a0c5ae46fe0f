"""A model request's retries as the person meets them, whatever the request
is for: each :class:`~rein.harness.ports.RetryWait` the model yields becomes
a ``model_retry`` event (redacted, with what the request is for), and the
model's stream is closed as soon as it is no longer read, so an abort or a
steer ends a retry's wait at once and releases the HTTP response.

Used by the turn's stream (:mod:`rein.harness.run.streaming`) and by
compaction's summary request (:mod:`rein.harness.conversation.context`).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Protocol, runtime_checkable

import anyio

from rein.harness.events import ModelRetry, RetryPurpose
from rein.harness.ports import ModelDelta, RetryWait
from rein.harness.redaction import redact

__all__ = ["closing_stream", "retry_event"]


def retry_event(wait: RetryWait, purpose: RetryPurpose) -> ModelRetry:
    """The ``model_retry`` event announcing ``wait`` (a request for ``purpose``)."""
    return ModelRetry(
        provider=redact(wait.provider),
        reason=redact(wait.reason),
        attempt=wait.attempt,
        max_attempts=wait.max_attempts,
        wait_s=round(wait.wait_s, 3),
        purpose=purpose,
    )


@runtime_checkable
class _Closable(Protocol):
    """A stream that can be closed early (an async generator, PEP 525, or an
    iterator over an HTTP response)."""

    def aclose(self) -> Awaitable[object]: ...


@asynccontextmanager
async def closing_stream(
    stream: AsyncIterator[ModelDelta],
) -> AsyncIterator[AsyncIterator[ModelDelta]]:
    """Close the model's stream (and its HTTP response) as soon as we stop
    reading it, not when it is garbage collected."""
    try:
        yield stream
    finally:
        # An async generator that ran to its end has nothing to close.
        finished = inspect.isasyncgen(stream) and stream.ag_frame is None
        if isinstance(stream, _Closable) and not finished:
            with anyio.CancelScope(shield=True):
                await stream.aclose()
