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
        #: Steers and pokes so far, and how many of them the last boundary saw:
        #: a tool phase is woken only by what arrived since.
        self._arrivals = 0
        self._seen = 0
        #: Queued messages that were there before the current run began.
        self.late: set[int] = set()
        self._listeners: list[Callable[[], None]] = []

    def steer(self, message: UserMessage) -> None:
        self.queue.append(message)
        self._arrive()

    def poke(self) -> None:
        """Steering arrived outside the queue (an inbox): wake the tools."""
        self._arrive()

    def _arrive(self) -> None:
        self._arrivals += 1
        self.signal.set()
        for listener in list(self._listeners):
            listener()

    @property
    def arrived(self) -> bool:
        """Something arrived since the last boundary (:meth:`take`)."""
        return self._arrivals > self._seen

    def on_arrival(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` (it must not raise) at each steer or poke from
        now on (a model's retry wait ends at once); returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def new_phase(self) -> None:
        """A tool phase starts: its signal is set only by what arrived
        since the last boundary (a steer left queued by one-at-a-time mode
        does not cut every later tool short)."""
        self.signal.rearm()
        if self._arrivals > self._seen:
            self.signal.set()

    def run_begins(self) -> None:
        """What is queued now was queued before this run's prompt."""
        self.late = {id(m) for m in (*self._external_backlog, *self.queue)}

    def is_late(self, messages: list[UserMessage]) -> bool:
        return any(id(m) in self.late for m in messages)

    async def waiting(self) -> bool:
        """At the run's final check: anything to deliver? The external
        source is drained here too (mail that came during the final turn
        starts another turn instead of waiting for the next prompt)."""
        await self._pull_external()
        return await self.probe()

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
        self._seen = self._arrivals
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
