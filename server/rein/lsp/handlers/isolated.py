"""Isolated sessions: ``rein/newSession`` (``isolated: true`` makes its
copy of the folder) and ``rein/applyIsolated`` (keep, discard or keep as
a branch). The parts are in :mod:`rein.lsp.isolated_sessions`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from rein.lsp import errors

if TYPE_CHECKING:
    from rein.lsp.server import ReinServer

__all__ = ["apply_isolated", "isolated_sessions", "new_session"]


async def new_session(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import NewSessionParams, parse

    parsed = parse(NewSessionParams, params, "rein/newSession")
    if not parsed.isolated:
        await server.open_store()
        session = server.new_session(
            mode=parsed.mode, title=parsed.title, allow_hosts=parsed.allow_hosts
        )
        return {"sessionId": session.id, "isolated": False}
    from rein.harness.errors import ConfigError
    from rein.isolation import GitError

    try:
        made = await server.isolated.new(parsed.mode, parsed.title)
    except GitError as exc:  # RequestFailed with git's words
        raise ConfigError(str(exc)) from exc
    return {"sessionId": made.session.id, "isolated": True, "worktree": str(made.record.root)}


async def apply_isolated(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.harness.errors import ConfigError
    from rein.isolation import GitError
    from rein.lsp.params import ApplyIsolatedParams, parse

    parsed = parse(ApplyIsolatedParams, params, "rein/applyIsolated")
    if server.isolated.session(parsed.session_id) is None:
        if parsed.session_id in server.sessions:
            raise JsonRpcInvalidParams(
                "rein/applyIsolated: invalid params: sessionId: the session "
                f"{errors.shown(parsed.session_id)} is not isolated"
            )
        raise errors.no_session("rein/applyIsolated", parsed.session_id)
    try:
        return await server.isolated.bring_back(parsed.session_id, parsed.action, parsed.branch)
    except GitError as exc:
        raise ConfigError(str(exc)) from exc


async def isolated_sessions(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import SessionsParams, parse

    parse(SessionsParams, params, "rein/isolatedSessions")  # no fields
    return {"sessions": await server.isolated.listed()}
