"""What the server holds: ``rein/sessions`` (the stored and live
sessions), ``rein/session`` (one, with its messages), ``rein/serverState``,
``rein/mcpServers`` and ``rein/commands`` (the slash commands)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rein.lsp import errors

if TYPE_CHECKING:
    from rein.lsp.server import ReinServer

__all__ = ["commands", "mcp_servers", "server_state", "session", "sessions"]


async def sessions(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import SessionsParams, parse

    parse(SessionsParams, params, "rein/sessions")
    return {"sessions": await server.manager.summaries()}


async def session(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import SessionParams, parse
    from rein.session.manager import summary

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
