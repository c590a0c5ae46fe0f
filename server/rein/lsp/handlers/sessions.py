"""What the server holds: ``rein/sessions`` (the stored and live
sessions), ``rein/session`` (one, with its messages), ``rein/closeSession``
(the person closed one), ``rein/serverState``, ``rein/mcpServers`` and
``rein/commands`` (the slash commands)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from rein.lsp import errors

if TYPE_CHECKING:
    from rein.lsp.server import ReinServer

__all__ = ["close_session", "commands", "mcp_servers", "server_state", "session", "sessions"]

#: Seconds ``rein/closeSession`` waits for an aborted run to end.
CLOSE_WAIT_S = 30.0


async def sessions(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import SessionsParams, parse

    parse(SessionsParams, params, "rein/sessions")
    return {"sessions": await server.manager.summaries()}


async def session(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import SessionParams, parse
    from rein.session.results import summary

    parsed = parse(SessionParams, params, "rein/session")
    found = server.isolated.session(parsed.session_id) or await server.load_session(
        parsed.session_id
    )
    if found is None:
        raise errors.no_session("rein/session", parsed.session_id)
    return {
        **summary(found),
        "messages": [m.model_dump(mode="json") for m in found.agent.messages],
    }


async def close_session(server: ReinServer, params: Any) -> dict[str, Any]:
    """``rein/closeSession``: the person closed (or cleared) a session: its
    run is aborted (waited for, bounded), its SessionEnd hooks run with the
    reason (bounded) and it leaves memory (a stored one stays in the store:
    a later prompt loads it again). While it closes, a prompt, steer or
    follow-up of it is refused; ``{closed: false, reason}`` when its run
    did not end within the bound or a run started meanwhile."""
    await server.ready()
    import asyncio

    from rein.lsp.params import CloseSessionParams, parse
    from rein.session.ending import end_sessions

    method = "rein/closeSession"
    parsed = parse(CloseSessionParams, params, method)
    if server.isolated.session(parsed.session_id) is not None:
        raise JsonRpcInvalidParams(
            f"{method}: invalid params: sessionId: an isolated session ends with "
            "rein/applyIsolated (keep, branch or discard)"
        )
    found = server.manager.sessions.get(parsed.session_id)
    if found is None:
        store = server.manager.store
        if store is not None and await store.get_session(parsed.session_id) is not None:
            return {"closed": False, "reason": "the session is not open (it is in the store)"}
        raise errors.no_session(method, parsed.session_id)
    # Closing from here on: a prompt, steer or follow-up is refused (one
    # that came first may still start a run: then it is not closed).
    found.closing = True
    if found.busy and found.task is not None:
        found.abort("the session was closed")
        await asyncio.wait([found.task], timeout=CLOSE_WAIT_S)
        if found.busy:
            found.closing = False
            return {
                "closed": False,
                "reason": f"its run did not end within {CLOSE_WAIT_S:g} s of the abort",
            }
    await end_sessions([found], parsed.reason)
    server.manager.discard(found)
    if server.manager.sessions.get(found.id) is found:
        found.closing = False
        return {"closed": False, "reason": "a run started while it was closing"}
    return {"closed": True}


def server_state(server: ReinServer, params: Any) -> dict[str, Any]:
    from rein.lsp.params import SessionsParams, parse

    parse(SessionsParams, params, "rein/serverState")
    return server.state()


def mcp_servers(server: ReinServer, params: Any) -> dict[str, Any]:
    from rein.lsp.params import McpServersParams, parse

    parse(McpServersParams, params, "rein/mcpServers")
    return server.mcp.snapshot()


async def commands(server: ReinServer, params: Any) -> dict[str, Any]:
    """``rein/commands``: the workspace's and the user's slash commands
    (read when asked: a file added since is listed), and the prompt files
    that are not commands, with the reason."""
    await server.ready()
    from rein.lsp.params import CommandsParams, parse
    from rein.session.setup_files import commands_of

    parse(CommandsParams, params, "rein/commands")
    found = commands_of(server.config, server.root)
    return {
        "commands": [c.json() for c in found.commands],
        "invalid": [{"path": i.path, "reason": i.reason} for i in found.invalid],
    }
