"""Isolated sessions: ``rein/newSession`` (``isolated: true`` makes its
copy of the folder), ``rein/isolatedHunks`` (its hunks against the folder
now) and ``rein/applyIsolated`` (keep all or the kept hunks, into the
person's open session or a new one; discard; keep as a branch). The parts
are in :mod:`rein.lsp.isolated_sessions`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from rein.lsp import errors

if TYPE_CHECKING:
    from rein.lsp.server import ReinServer

__all__ = ["apply_isolated", "isolated_hunks", "isolated_sessions", "new_session"]


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
    _isolated(server, parsed.session_id, "rein/applyIsolated")
    into = None
    if parsed.into_session_id is not None:
        await server.open_store()
        into = await server.isolated.into(parsed.into_session_id)
    try:
        return await server.isolated.bring_back(
            parsed.session_id, parsed.action, parsed.branch, keep=parsed.hunks, into=into
        )
    except GitError as exc:
        raise ConfigError(str(exc)) from exc


async def isolated_hunks(server: ReinServer, params: Any) -> dict[str, Any]:
    """An isolated session's hunks against the folder as it is now."""
    await server.ready()
    from rein.harness.errors import ConfigError
    from rein.isolation import GitError
    from rein.lsp.params import IsolatedHunksParams, parse

    parsed = parse(IsolatedHunksParams, params, "rein/isolatedHunks")
    _isolated(server, parsed.session_id, "rein/isolatedHunks")
    try:
        return await server.isolated.hunks(parsed.session_id)
    except GitError as exc:
        raise ConfigError(str(exc)) from exc


def _isolated(server: ReinServer, session_id: str, method: str) -> None:
    """InvalidParams naming ``sessionId`` unless it is a live isolated session."""
    if server.isolated.session(session_id) is None:
        if session_id in server.sessions:
            raise JsonRpcInvalidParams(
                f"{method}: invalid params: sessionId: the session "
                f"{errors.shown(session_id)} is not isolated"
            )
        raise errors.no_session(method, session_id)


async def isolated_sessions(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import SessionsParams, parse

    parse(SessionsParams, params, "rein/isolatedSessions")  # no fields
    return {"sessions": await server.isolated.listed()}
