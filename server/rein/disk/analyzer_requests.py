"""Requests to an analyzer server, bounded: one answer waits at most
``gates.analyzer.requestTimeoutMs``, then :class:`AnalyzerTimeout`; a late
answer is dropped, never met by a cancelled future."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

from rein.harness.errors import ReinError

__all__ = ["AnalyzerTimeout", "bounded"]

log = logging.getLogger(__name__)


class AnalyzerTimeout(ReinError):
    """An analyzer did not answer a request within ``gates.analyzer.requestTimeoutMs``."""

    def __init__(self, name: str, what: str, seconds: float, bound: str = "") -> None:
        self.seconds = seconds
        bound = bound or "gates.analyzer.requestTimeoutMs"
        super().__init__(f"{name} did not answer {what} within {seconds:g} s ({bound})")


def drop_late(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled() and answer.exception() is not None:
        log.debug("a late analyzer answer: %s", answer.exception())


async def bounded(
    name: str, what: str, seconds: float, request: Awaitable[Any], bound: str = ""
) -> Any:
    """Await ``request`` at most ``seconds``; past it :class:`AnalyzerTimeout`
    (naming ``bound``, the setting ``seconds`` came from; by default
    ``gates.analyzer.requestTimeoutMs``)."""
    # Shielded: a late answer completes the request instead of meeting a
    # cancelled future (pygls logs that as an error); it is dropped.
    answer = asyncio.ensure_future(request)
    answer.add_done_callback(drop_late)
    try:
        return await asyncio.wait_for(asyncio.shield(answer), seconds)
    except TimeoutError:
        raise AnalyzerTimeout(name, what, seconds, bound) from None
