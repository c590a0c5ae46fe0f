"""The language server's event streams, one per session
(:class:`rein.lsp.event_stream.EventStream`), over the one ``rein/event``
notification; an event of no session goes with ``sessionId: null``.

Imported with the server (``rein serve`` starts fast): the streams
themselves are imported with the first session."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rein.harness.events import Event
    from rein.lsp.event_stream import EventStream
    from rein.session.session import Session

__all__ = ["SessionStreams"]


class SessionStreams:
    """Every session's :class:`EventStream` by session id, over one ``send``
    (the ``rein/event`` notification). A stream closed when its session is
    evicted keeps its ``seq``: the reloaded session's events go on from it."""

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._streams: dict[str, EventStream] = {}
        #: The last ``seq`` sent for each evicted session.
        self._evicted_seq: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._streams)

    def open(self, session: Session) -> EventStream:
        """Stream ``session``'s events from now on (flushed at each run's end)."""
        from rein.lsp.event_stream import EventStream

        stream = EventStream(session.id, self._send, lambda: session.current_run_id)
        stream.seq = self._evicted_seq.pop(session.id, 0)
        session.closers.append(session.subscribe(stream))
        session.on_run_end.append(stream.flush)
        self._streams[session.id] = stream
        return stream

    def close(self, session_id: str, *, evicted: bool = False) -> None:
        """The session's stream goes (what it holds is sent first); an
        ``evicted`` session's ``seq`` is remembered."""
        stream = self._streams.pop(session_id, None)
        if stream is not None:
            stream.flush()
            if evicted and stream.seq:
                self._evicted_seq[session_id] = stream.seq

    def send(self, session: Session | None, event: Event) -> None:
        """An event of ``session`` on its stream; without a session (or
        one without a stream) it is sent with ``sessionId: null``."""
        stream = self._streams.get(session.id) if session is not None else None
        if stream is not None:
            stream(event)
        else:
            self._send(
                {"sessionId": None, "runId": None, "seq": 0, "event": event.model_dump(mode="json")}
            )
