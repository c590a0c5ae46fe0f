"""The event stream of a session to the client: gap-free ``seq`` per
session, text and thinking deltas coalesced (:mod:`rein.session.coalesce`).
Sessions themselves are host-neutral (:mod:`rein.session`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rein.session.coalesce import COALESCE_S, DeltaCoalescer

if TYPE_CHECKING:
    from rein.harness.events import Event

__all__ = ["EventStream"]

log = logging.getLogger(__name__)


class EventStream:
    """Numbers events per session and sends them; text and thinking deltas
    are merged and sent at most once per ``COALESCE_S``."""

    def __init__(
        self,
        session_id: str,
        send: Callable[[dict[str, Any]], None],
        run_id: Callable[[], str | None],
        interval_s: float = COALESCE_S,
    ) -> None:
        self.session_id = session_id
        self._send = send
        self._run_id = run_id
        self.seq = 0
        self._last_run_id: str | None = None
        self.sent = 0
        self._coalescer = DeltaCoalescer(self._emit, interval_s)

    @property
    def interval_s(self) -> float:
        return self._coalescer.interval_s

    def __call__(self, event: Event) -> None:
        if event.type == "run_start":
            self._last_run_id = event.run_id
        self._coalescer(event)

    def flush(self) -> None:
        self._coalescer.flush()

    def _emit(self, event: Event) -> None:
        self.seq += 1
        self.sent += 1
        self._send(
            {
                "sessionId": self.session_id,
                "runId": self._run_id() or self._last_run_id,
                "seq": self.seq,
                "event": event.model_dump(mode="json"),
            }
        )
