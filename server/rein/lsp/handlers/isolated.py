"""Isolated sessions: ``rein/newSession`` (``isolated: true`` makes its
copy of the folder) and ``rein/applyIsolated`` (keep, discard or keep as
a branch). The parts are in :mod:`rein.lsp.isolated`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rein.lsp.server import ReinServer

__all__ = ["apply_isolated", "new_session"]


async def new_session(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import NewSessionParams, parse

    parsed = parse(NewSessionParams, params, "rein/newSession")
    if not parsed.isolated:
        await server.open_store()
        session = server.new_session(mode=parsed.mode, title=parsed.title)
        return {"sessionId": session.id, "isolated": False}
    made = await server.isolated.new(parsed.mode, parsed.title)
    return {"sessionId": made.session.id, "isolated": True, "worktree": str(made.record.root)}


async def apply_isolated(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import ApplyIsolatedParams, parse

    parsed = parse(ApplyIsolatedParams, params, "rein/applyIsolated")
    return await server.isolated.bring_back(parsed.session_id, parsed.action, parsed.branch)
