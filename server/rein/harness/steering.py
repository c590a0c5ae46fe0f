"""Steering: the in-process queue, an external source, and the signal a
running tool can await.

Messages are *delivered* only at a turn boundary (before the first model
call of a run and after each turn), never in the middle of a tool call. What
a tool sees mid-call is the **arrival signal**: :class:`SteeringSignal` is set
when a steer is queued (:meth:`Steering.steer`), when the host pokes it
(:meth:`Steering.poke`: the external-inbox fast path, nothing queued), or
when the slow external probe says mail is waiting. A long tool awaits
``ctx.steering_arrived.wait()`` next to its own work and wraps up softly.

At each boundary :meth:`Steering.take` drains the external source first
(its contract: never raise, return [] when nothing arrived; a raising source
is reported and the run goes on), then the in-process queue, per the mode:
``one-at-a-time`` delivers one message per boundary, ``all`` every queued one.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

import anyio

from rein.harness.config import QueueMode
from rein.harness.messages import UserMessage

__all__ = [
    "ExternalSteeringProbe",
    "ExternalSteeringSource",
    "Steering",
    "SteeringSignal",
]

log = logging.getLogger(__name__)

#: Returns the messages that arrived outside the process (an inbox); [] when none.
ExternalSteeringSource = Callable[[], Awaitable[Sequence[UserMessage | str]]]
#: True when the external source has messages waiting (does not drain them).
ExternalSteeringProbe = Callable[[], Awaitable[bool]]


class SteeringSignal:
    """Set when steering arrived during the current tool phase; a tool can
    poll :meth:`is_set` or ``await`` :meth:`wait`."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()

    def rearm(self) -> None:
        """A new tool phase: what arrived before it was delivered."""
        if self._event.is_set():
            self._event = anyio.Event()


class Steering:
    """The steering queue of one Agent, its external source and its signal."""

    def __init__(self, mode: QueueMode = "one-at-a-time") -> None:
        self.mode: QueueMode = mode
        self.queue: deque[UserMessage] = deque()
        self.signal = SteeringSignal()
        self.external_source: ExternalSteeringSource | None = None
        self.external_probe: ExternalSteeringProbe | None = None
        #: Messages the external source returned beyond what the mode
        #: delivers now (one-at-a-time): delivered at the next boundaries.
        self._external_backlog: deque[UserMessage] = deque()
        #: Called with a message when the external source raised.
        self.on_error: Callable[[str], None] = lambda message: None

    def steer(self, message: UserMessage) -> None:
        self.queue.append(message)
        self.signal.set()

    def poke(self) -> None:
        """Steering arrived outside the queue (an inbox): wake the tools."""
        self.signal.set()

    @property
    def pending(self) -> bool:
        """Something is queued here (the external source is asked at the
        boundary; :meth:`probe` asks it without draining)."""
        return bool(self.queue or self._external_backlog)

    async def probe(self) -> bool:
        """Queued here, or the external probe says mail is waiting."""
        if self.pending:
            return True
        if self.external_probe is None:
            return False
        try:
            return bool(await self.external_probe())
        except Exception as exc:
            log.exception("the external steering probe raised")
            self.on_error(f"the external steering probe raised {type(exc).__name__}: {exc}")
            return False

    async def _pull_external(self) -> None:
        if self.external_source is None:
            return
        try:
            arrived = await self.external_source()
        except Exception as exc:
            log.exception("the external steering source raised")
            self.on_error(f"the external steering source raised {type(exc).__name__}: {exc}")
            return
        for item in arrived or ():
            message = (
                item
                if isinstance(item, UserMessage)
                else UserMessage(content=str(item), origin="steer")
            )
            self._external_backlog.append(message)

    async def take(self) -> list[UserMessage]:
        """The messages due at this boundary: external ones first."""
        await self._pull_external()
        if self.mode == "all":
            items = [*self._external_backlog, *self.queue]
            self._external_backlog.clear()
            self.queue.clear()
            return items
        if self._external_backlog:
            return [self._external_backlog.popleft()]
        if self.queue:
            return [self.queue.popleft()]
        return []

    def drain(self) -> list[UserMessage]:
        """Every queued message (the abort path: they land, never vanish)."""
        items = [*self._external_backlog, *self.queue]
        self._external_backlog.clear()
        self.queue.clear()
        return items

    def clear(self) -> None:
        self.queue.clear()
        self._external_backlog.clear()
