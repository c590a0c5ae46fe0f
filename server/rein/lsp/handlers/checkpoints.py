"""``rein/checkpoints``, ``rein/restore`` and ``rein/checkpointContent``:
parse, find the session and its checkpoint store, call the harness. An
unknown session is InvalidParams naming ``sessionId``; an unknown or
pruned run, a path outside the workspace, unstored content, a running
session are RequestFailed (:mod:`rein.lsp.errors` maps Rein's errors);
nothing is changed then."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rein.lsp import errors

if TYPE_CHECKING:
    from rein.checkpoints.model import CheckpointStore
    from rein.lsp.server import ReinServer
    from rein.session import Session

__all__ = ["checkpoints", "content", "restore"]


async def _session(
    server: ReinServer, session_id: str, method: str
) -> tuple[Session, CheckpointStore]:
    await server.ready()
    await server.open_store()
    session = await server.load_session(session_id)
    if session is None:
        raise errors.no_session(method, session_id)
    if session.checkpoints is None:
        from rein.harness.errors import CheckpointsOffError

        raise CheckpointsOffError(
            "checkpoints are off for this session (rein.checkpoints.enabled is false)"
        )
    return session, session.checkpoints


async def checkpoints(server: ReinServer, params: Any) -> dict[str, Any]:
    from rein.checkpoints.views import list_checkpoints
    from rein.lsp.params import CheckpointsParams, parse

    parsed = parse(CheckpointsParams, params, "rein/checkpoints")
    _, store = await _session(server, parsed.session_id, "rein/checkpoints")
    return await list_checkpoints(store, parsed.session_id)


async def restore(server: ReinServer, params: Any) -> dict[str, Any]:
    from rein.checkpoints.restore import RestoreRequest
    from rein.lsp.params import RestoreParams, parse
    from rein.session.restoring import restore_in_session

    parsed = parse(RestoreParams, params, "rein/restore")
    session, store = await _session(server, parsed.session_id, "rein/restore")
    workspace, _ = server.adapters()
    request = RestoreRequest(
        parsed.session_id,
        parsed.run_id,
        parsed.turn,
        tuple(parsed.paths) if parsed.paths is not None else None,
    )
    # A prompt that is starting counts as running (BusyError: RequestFailed).
    result = await restore_in_session(
        session, store, workspace, request, in_use=server.manager.in_use(session.id)
    )
    return result.to_json()


async def content(server: ReinServer, params: Any) -> dict[str, Any]:
    from rein.checkpoints.views import checkpoint_content
    from rein.lsp.params import CheckpointContentParams, parse

    parsed = parse(CheckpointContentParams, params, "rein/checkpointContent")
    _, store = await _session(server, parsed.session_id, "rein/checkpointContent")
    return await checkpoint_content(
        store,
        parsed.session_id,
        str(server.root),
        parsed.run_id,
        parsed.path,
        parsed.side,
        parsed.turn,
    )
