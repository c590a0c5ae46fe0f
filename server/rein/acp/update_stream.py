"""A session's updates sent to the client: :class:`SessionUpdates`
subscribes an :class:`~rein.acp.updates.UpdateMapper` to a session, puts the
shared delta coalescer (:mod:`rein.session.coalesce`) in front of it, and
sends the updates in order through one queue, so that
:meth:`SessionUpdates.drain` can make sure every update of a run reached the
client before its ``session/prompt`` is answered."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from acp.schema import AgentMessageChunk

from rein.acp.updates import SessionUpdate, UpdateMapper
from rein.harness.events import Event
from rein.session.coalesce import COALESCE_S, DeltaCoalescer

__all__ = ["Send", "SessionUpdates"]

log = logging.getLogger("rein.acp.updates")

Send = Callable[[SessionUpdate], Awaitable[None]]


class SessionUpdates:
    """One session's events, mapped, coalesced and sent in order.

    Call it with events (subscribe it to the session); :meth:`say` adds an
    update of the agent's own (a message); :meth:`drain` returns once
    everything so far was sent. A send that fails is logged, and the rest go
    on (the client may have gone; the run is not the place to find out)."""

    def __init__(self, mapper: UpdateMapper, send: Send, *, interval_s: float = COALESCE_S) -> None:
        self._mapper = mapper
        self._send = send
        self._coalescer = DeltaCoalescer(self._mapped, interval_s)
        self._queue: asyncio.Queue[SessionUpdate] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None
        #: The agent's message text put out since :meth:`begin`.
        self._said: list[str] = []

    def __call__(self, event: Event) -> None:
        self._coalescer(event)

    def before_change(self, path: str, text: str) -> None:
        self._mapper.before_change(path, text)

    def say(self, update: SessionUpdate) -> None:
        self._coalescer.flush()
        self._put(update)

    def _mapped(self, event: Event) -> None:
        try:
            updates = self._mapper(event)
        except Exception:  # one odd event must not end the stream
            log.exception("mapping the %s event to session/update failed", event.type)
            return
        for update in updates:
            self._put(update)

    def begin(self) -> None:
        """A prompt starts: :meth:`said` counts from here."""
        self._coalescer.flush()
        self._said = []

    def said(self) -> str:
        """The agent's message text put out since :meth:`begin` (pending
        deltas included)."""
        self._coalescer.flush()
        return "".join(self._said)

    def _put(self, update: SessionUpdate) -> None:
        if isinstance(update, AgentMessageChunk) and update.content.type == "text":
            self._said.append(update.content.text)
        self._queue.put_nowait(update)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send_all())

    async def _send_all(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self._send(update)
            except Exception as exc:
                log.warning("a session/update could not be sent: %s", exc)
            finally:
                self._queue.task_done()

    async def drain(self) -> None:
        """Flush the coalescer and wait until every update so far was sent."""
        self._coalescer.flush()
        await self._queue.join()

    def close(self) -> None:
        if self._sender is not None:
            self._sender.cancel()
            self._sender = None
