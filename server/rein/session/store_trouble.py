"""What the sessions do when their store fails under them.

A store call that fails mid-run (the disk is full, another process holds
the lock) does not end the run: the messages stay queued in the store and
the person is told once per cause, as an ``error`` event of the session
(``where: "store"``) and through the host's notice (a message in the
editor, a line in the terminal), and told again when the store works.
A database deleted while open is created again and filled with the
sessions in memory (:func:`session_image`), and the person is told that.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rein.harness.errors import StoreError
from rein.harness.events import ErrorEvent
from rein.session.builder import PLANNER_MEMORY, memory_key
from rein.session.session import Session
from rein.store.session_images import SessionImage, SessionRecord

__all__ = ["StoreTrouble", "session_image"]

log = logging.getLogger(__name__)


def session_image(session: Session, workspace: Path, state: dict[str, Any]) -> SessionImage:
    """``session`` as it is in memory: its row, its transcripts (the
    planner's too in plan mode) and its memory's ``state``."""
    record = SessionRecord(
        id=session.id,
        title=session.title,
        status=session.status,
        mode=session.mode,
        origin=session.origin,
        created_at=session.created_at,
        updated_at=session.updated_at,
        turns=session.turns,
        usage=session.usage.model_dump(exclude={"estimated"}),
        workspace=str(workspace),
    )
    memories = {memory_key(session.mode): list(session.agent.messages)}
    if session.planner is not None:
        memories[PLANNER_MEMORY] = list(session.planner.messages)
    return SessionImage(record, memories, {memory_key(session.mode): state})


class StoreTrouble:
    """Tells the person about store trouble: once per cause until the store
    works again. ``notify``: the host's notice (None: the log only);
    ``sessions``: the sessions in memory (the busy ones get the event)."""

    def __init__(
        self, notify: Callable[[str], None] | None, sessions: Callable[[], Iterable[Session]]
    ) -> None:
        self._notify = notify
        self._sessions = sessions
        #: The causes told and not passed yet.
        self._told: set[str] = set()

    def failed(self, exc: StoreError, *, kept: bool = True) -> None:
        """A store call failed. ``kept``: what it wrote stays queued (the
        messages are written when the store works again)."""
        cause = exc.reason or str(exc)
        if cause in self._told:
            log.debug("store still failing: %s", exc)
            return
        self._told.add(cause)
        tail = "; the messages are kept in memory and stored when it works again" if kept else ""
        self.notice(f"{exc}{tail}")

    def recovered(self) -> None:
        """A store call worked after failures: said once."""
        if self._told:
            self._told.clear()
            self.notice("the session database works again: the queued messages are stored")

    def notice(self, message: str) -> None:
        """``message`` to the host's notice (else the log's warnings) and the
        busy sessions' events."""
        log.log(logging.INFO if self._notify is not None else logging.WARNING, "%s", message)
        if self._notify is not None:
            try:
                self._notify(message)
            except Exception:
                log.exception("the store notice raised")
        for session in list(self._sessions()):
            if session.busy:
                session.emit_flow(ErrorEvent(message=message, where="store"))
