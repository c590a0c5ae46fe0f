"""``rein/checkpoints``, ``rein/restore`` and ``rein/checkpointContent``:
parse, find the session and its checkpoint store, call the harness, map
its errors (an unknown session: InvalidParams naming ``sessionId``; an
unknown or pruned run, a path outside the workspace, unstored content, a
running session: RequestFailed; nothing is changed then)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from rein.checkpoints.model import CheckpointStore
from rein.checkpoints.restore import RestoreRequest
from rein.checkpoints.views import checkpoint_content, list_checkpoints
from rein.harness.errors import RestoreError, StoreError
from rein.lsp.params import CheckpointContentParams, CheckpointsParams, RestoreParams, parse
from rein.lsp.server import ReinServer, RequestFailed
from rein.session import Session, SessionBusyError
from rein.session.restoring import restore_in_session

__all__ = ["checkpoints", "content", "restore"]


async def _session(ls: ReinServer, session_id: str, method: str) -> tuple[Session, CheckpointStore]:
    await ls.open_store()
    session = await ls.load_session(session_id)
    if session is None:
        shown = session_id if len(session_id) <= 80 else session_id[:80] + "…"
        raise JsonRpcInvalidParams(f"{method}: invalid params: sessionId: no session {shown!r}")
    if session.checkpoints is None:
        raise RequestFailed(
            f"{method}: checkpoints are off for this session (rein.checkpoints.enabled is false)"
        )
    return session, session.checkpoints


async def checkpoints(ls: ReinServer, params: Any) -> dict[str, Any]:
    parsed = parse(CheckpointsParams, params, "rein/checkpoints")
    _, store = await _session(ls, parsed.session_id, "rein/checkpoints")
    try:
        return await list_checkpoints(store, parsed.session_id)
    except StoreError as exc:
        raise RequestFailed(f"rein/checkpoints: {exc}") from exc


async def restore(ls: ReinServer, params: Any) -> dict[str, Any]:
    parsed = parse(RestoreParams, params, "rein/restore")
    session, store = await _session(ls, parsed.session_id, "rein/restore")
    if ls.manager.in_use(session.id):  # a prompt that is starting counts as running
        raise RequestFailed(
            f"rein/restore: session {session.id} is running a task; abort or wait for the run "
            "before restoring"
        )
    workspace, _ = ls.adapters()
    request = RestoreRequest(
        parsed.session_id,
        parsed.run_id,
        parsed.turn,
        tuple(parsed.paths) if parsed.paths is not None else None,
    )
    try:
        result = await restore_in_session(session, store, workspace, request)
    except (RestoreError, SessionBusyError, StoreError) as exc:
        raise RequestFailed(f"rein/restore: {exc}") from exc
    return result.to_json()


async def content(ls: ReinServer, params: Any) -> dict[str, Any]:
    parsed = parse(CheckpointContentParams, params, "rein/checkpointContent")
    _, store = await _session(ls, parsed.session_id, "rein/checkpointContent")
    try:
        return await checkpoint_content(
            store,
            parsed.session_id,
            str(ls.root),
            parsed.run_id,
            parsed.path,
            parsed.side,
            parsed.turn,
        )
    except (RestoreError, StoreError) as exc:
        raise RequestFailed(f"rein/checkpointContent: {exc}") from exc
