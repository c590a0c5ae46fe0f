"""The Agent's listeners: :meth:`~rein.harness.agent.Agent.subscribe`, and
how each event reaches them (a sync listener at once; an async one's
handling queued in the run's :class:`Outbox` and awaited in order)."""

from __future__ import annotations

import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable

import anyio

from rein.harness.agent_state import RunTracker
from rein.harness.events import Event, WatchdogPaused

__all__ = ["EventListeners", "Listener", "Outbox"]

log = logging.getLogger("rein.harness.agent")

#: A listener; an async one is awaited, in order, before the next event.
Listener = Callable[[Event], "Awaitable[None] | None"]
_Delivery = tuple[str, Awaitable[None]]


class Outbox:
    """Async listeners' pending handling, in order: filled by ``_emit``
    (sync), drained by one task that wakes once per burst of events."""

    __slots__ = ("_closed", "_items", "_ready")

    def __init__(self) -> None:
        self._items: deque[_Delivery] = deque()
        self._ready = anyio.Event()
        self._closed = False

    def put(self, item: _Delivery) -> None:
        self._items.append(item)
        if not self._ready.is_set():
            self._ready.set()

    def close(self) -> None:
        self._closed = True
        self._ready.set()

    def __aiter__(self) -> Outbox:
        return self

    async def __anext__(self) -> _Delivery:
        while not self._items:
            if self._closed:
                raise StopAsyncIteration
            await self._ready.wait()
            self._ready = anyio.Event()
        return self._items.popleft()


class EventListeners:
    """Mixed into :class:`~rein.harness.agent.Agent`."""

    _listeners: list[Listener]
    _outbox: Outbox | None
    _tracker: RunTracker
    on_run_watchdog_paused: Callable[[], None] | None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns the function that removes it. An async
        listener (a coroutine function) is awaited: events reach it in order,
        and :meth:`wait_for_idle` waits until it has handled them all."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _emit(self, event: Event) -> None:
        if self.on_run_watchdog_paused is not None and isinstance(event, WatchdogPaused):
            try:
                self.on_run_watchdog_paused()
            except Exception:
                log.exception("on_run_watchdog_paused raised")
        self._tracker.observe(event)
        for listener in self._listeners:
            try:
                outcome = listener(event)
            except Exception:
                log.exception("event listener raised on %s", event.type)
                continue
            if outcome is not None and inspect.isawaitable(outcome):
                if self._outbox is not None:
                    self._outbox.put((event.type, outcome))
                elif inspect.iscoroutine(outcome):
                    outcome.close()  # no run to await it in
                    log.warning("async listener got %s outside a run: dropped", event.type)

    @staticmethod
    async def _deliver(outbox: Outbox) -> None:
        """Await the async listeners' handling of each event, in order."""
        async for kind, outcome in outbox:
            try:
                await outcome
            except Exception:
                log.exception("async event listener raised on %s", kind)
