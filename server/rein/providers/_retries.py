"""When a failed model request is tried again: the backoff policy, the
decision after one failed attempt (retried, or raised with why not), and a
server's Retry-After that outlives a dropped request. The HTTP shell
(:mod:`rein.providers._http`) makes the attempts and the waits."""

from __future__ import annotations

import random
from dataclasses import dataclass

from rein.harness.errors import ModelError, ProviderError

__all__ = ["Held", "RetryPolicy", "retry_wait", "server_asked"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter for retryable errors (429, 5xx,
    connection errors, stalls). A ``Retry-After`` above 0 wins over the
    backoff (one of 0 or less is no wait at all: the backoff stands); a
    server asking for more than ``max_retry_after`` seconds fails the turn
    at once instead. A steer may end a backoff wait (the request is
    dropped and the steered one sent at once), never the server's: the
    model keeps its deadline and the next request waits out the rest of it
    (an abort ends either at once). A request spends at most ``max_total``
    seconds on its retries (the waits and the retried attempts,
    ``rein.model.maxRetryWait``): a retry whose wait would pass it is not
    made."""

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0
    max_total: float = 120.0

    def delay(self, retry: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait before retry number ``retry`` (1-based), or None
        to give up."""
        if retry > self.max_retries:
            return None
        if retry_after is not None and retry_after > 0:
            return retry_after if retry_after <= self.max_retry_after else None
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (retry - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def retry_wait(
    policy: RetryPolicy, exc: ModelError, streamed: bool, retry: int, spent: float
) -> float:
    """The wait before retrying after ``exc`` (``retry`` retries made,
    ``spent`` seconds spent on them); raises ``exc`` (amended with why)
    when it is not retried."""
    if streamed:
        exc.streamed = True
        if exc.retryable:
            _amend(exc, "not retried: part of the reply had already been streamed")
        raise exc
    if not exc.retryable:
        raise exc
    retry_after = exc.retry_after if isinstance(exc, ProviderError) else None
    wait = policy.delay(retry + 1, retry_after)
    if wait is None:
        if retry_after is not None and retry_after > policy.max_retry_after:
            _amend(exc, f"the server asked to retry after {retry_after:g} s")
        else:
            _amend(exc, f"gave up after {_attempts(retry + 1)}")
        raise exc
    if spent + wait > policy.max_total:
        _amend(
            exc,
            f"gave up after {_attempts(retry + 1)}: {spent:.1f} s spent on retries, and "
            f"waiting {wait:.1f} s more would pass rein.model.maxRetryWait "
            f"({policy.max_total:g} s)",
        )
        raise exc
    return wait


@dataclass(frozen=True, slots=True)
class Held:
    """A wait a server asked for (Retry-After): no request before ``until``
    (``anyio.current_time()``); ``reason`` and ``attempt`` announce it again."""

    until: float
    reason: str
    attempt: int


def server_asked(exc: ModelError) -> bool:
    """The wait after ``exc`` is the server's (a Retry-After above 0), not
    a backoff of Rein's choosing."""
    return isinstance(exc, ProviderError) and (exc.retry_after or 0) > 0


def _amend(exc: ModelError, note: str) -> None:
    """Append ``note`` to the error's message (keeps its type and fields)."""
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (f"{exc.args[0]} ({note})", *exc.args[1:])


def _attempts(count: int) -> str:
    return "1 attempt" if count == 1 else f"{count} attempts"
