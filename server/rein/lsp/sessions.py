"""The event stream of a session to the client: gap-free ``seq`` per
session, text and thinking deltas coalesced. Sessions themselves are
host-neutral (:mod:`rein.session`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rein.harness.events import Event, MessageDelta

__all__ = ["EventStream"]

log = logging.getLogger(__name__)

#: Text deltas are flushed at most this often per session (~60 per second).
COALESCE_S = 0.016


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
        self.interval_s = interval_s
        self.seq = 0
        self._pending: list[MessageDelta] = []
        self._timer: asyncio.TimerHandle | None = None
        self._last_run_id: str | None = None
        self.sent = 0

    def __call__(self, event: Event) -> None:
        if event.type == "run_start":
            self._last_run_id = event.run_id
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
        self._emit(event.model_dump(mode="json"))

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        first = self._pending[0]
        merged = {
            "type": "message_delta",
            "kind": first.kind,
            "delta": "".join(e.delta for e in self._pending),
            "tool_call_id": None,
            "tool_name": None,
        }
        self._pending = []
        self._emit(merged)

    def _emit(self, payload: dict[str, Any]) -> None:
        self.seq += 1
        self.sent += 1
        self._send(
            {
                "sessionId": self.session_id,
                "runId": self._run_id() or self._last_run_id,
                "seq": self.seq,
                "event": payload,
            }
        )
