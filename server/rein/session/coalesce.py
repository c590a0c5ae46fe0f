"""Text and thinking deltas, merged before they leave the process.

A model streams many small deltas; a client that draws each one spends its
time redrawing. :class:`DeltaCoalescer` sits between a session's events and
a host's sender (the language server's ``rein/event`` stream, ``rein acp``'s
``session/update`` notifications): consecutive deltas of one kind are merged
into one ``message_delta`` and passed on at most once per ``interval_s``;
any other event first flushes what is pending, so the order is kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rein.harness.events import Event, MessageDelta

__all__ = ["COALESCE_S", "DeltaCoalescer"]

#: Deltas are passed on at most this often per session (~60 per second).
COALESCE_S = 0.016


class DeltaCoalescer:
    """Passes every event to ``emit``; text and thinking deltas merged and
    passed at most once per ``interval_s`` (at once outside an event loop).
    Call :meth:`flush` when a run ends."""

    def __init__(self, emit: Callable[[Event], None], interval_s: float = COALESCE_S) -> None:
        self._emit = emit
        self.interval_s = interval_s
        self._pending: list[MessageDelta] = []
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, event: Event) -> None:
        if event.type == "message_delta" and event.kind in ("text", "thinking"):
            if self._pending and self._pending[-1].kind != event.kind:
                self.flush()
            self._pending.append(event)
            if self._timer is None:
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:
                    self.flush()
                    return
                self._timer = loop.call_later(self.interval_s, self.flush)
            return
        self.flush()
        self._emit(event)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        first = self._pending[0]
        merged = MessageDelta(kind=first.kind, delta="".join(e.delta for e in self._pending))
        self._pending = []
        self._emit(merged)
