"""``session/list`` for ``rein acp``: the sessions this process serves and
the stored ones, of one folder or all, newest first, in pages of
:data:`PAGE_SIZE` (the cursor is the next page's offset); and the
``session_info_update`` that tells the client a session's new title."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp.schema import ListSessionsResponse, SessionInfo, SessionInfoUpdate

from rein.acp import errors
from rein.session import Session, SessionManager
from rein.store import SqliteStore

__all__ = ["PAGE_SIZE", "info_update", "session_page"]

log = logging.getLogger(__name__)

#: Sessions per ``session/list`` page.
PAGE_SIZE = 50


async def session_page(
    live: Sequence[tuple[Session, Path]],
    managers: Sequence[SessionManager],
    storage: str | Path | None,
    root: Path | None,
    cursor: str | None,
) -> ListSessionsResponse:
    """The page at ``cursor`` of the sessions in ``root`` (None: every
    folder): ``live`` ones (with their folders) first, then those stored
    (the first open store of ``managers``, else the store in ``storage``)."""
    try:
        start = int(cursor) if cursor else 0
    except ValueError:
        start = -1
    if start < 0 or (cursor and cursor != str(start)):
        # Only the page offsets this agent gives ("-5" read the list's end).
        raise errors.invalid_field("cursor", f"{cursor!r} is not a cursor this agent gave")
    found: dict[str, SessionInfo] = {}
    for session, folder in live:
        if root is None or folder == root:
            found[session.id] = _info(session.id, folder, session.title, session.updated_at)
    for record in await _stored_sessions(managers, storage):
        if record.id in found or not record.workspace:
            continue
        if root is None or Path(record.workspace) == root:
            found[record.id] = _info(
                record.id, Path(record.workspace), record.title, record.updated_at
            )
    ordered = sorted(found.values(), key=lambda s: s.updated_at or "", reverse=True)
    page = ordered[start : start + PAGE_SIZE]
    more = start + PAGE_SIZE < len(ordered)
    return ListSessionsResponse(sessions=page, next_cursor=str(start + PAGE_SIZE) if more else None)


async def _stored_sessions(
    managers: Sequence[SessionManager], storage: str | Path | None
) -> list[Any]:
    for manager in managers:
        if manager.store is not None:
            return await manager.store.list_sessions()
    if storage is None:
        return []
    try:
        store = SqliteStore.open(str(storage))
    except Exception as exc:
        log.warning("session/list: the session store cannot be read: %s", exc)
        return []
    try:
        return await store.list_sessions()
    finally:
        store.close()


def _info(session_id: str, root: Path, title: str, updated_at: float) -> SessionInfo:
    return SessionInfo(
        session_id=session_id,
        cwd=str(root),
        title=title or None,
        updated_at=datetime.fromtimestamp(updated_at, UTC).isoformat(),
    )


def info_update(title: str, updated_at: float) -> SessionInfoUpdate:
    """The session's title (its first prompt's, as ``session/list`` shows
    it) for the client's thread."""
    return SessionInfoUpdate(
        session_update="session_info_update",
        title=title,
        updated_at=datetime.fromtimestamp(updated_at, UTC).isoformat(),
    )
