"""Requests an editor may send that Rein cannot honour are refused, each
with InvalidParams naming the field, never taken in part: roots besides
``cwd`` (the capability is not offered; they were dropped silently), a
cursor Rein never gave (``-5`` read the list's end), a boolean for a select
option (it was read as the text ``True``); an unknown extension method is
Method not found without making the session side; a refused load, resume
or fork starts none of the client's MCP servers."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError, helpers
from acp.schema import McpServerStdio

from rein.acp.agent import ReinAcpAgent
from rein.config import ReinConfig
from tests.acp_core.test_agent import TOOLBOX


async def _refused(request: Any) -> RequestError:
    with pytest.raises(RequestError) as info:
        await request
    return info.value


async def test_roots_besides_cwd_are_refused_and_no_session_is_made(
    connect: Callable[..., Any], workspace: Path, tmp_path: Path
) -> None:
    extra = {"additionalDirectories": [str(tmp_path)], "mcpServers": []}
    async with connect() as c:
        session_id = await c.new()
        requests = {
            "session/new": {"cwd": str(workspace), **extra},
            "session/load": {"cwd": str(workspace), "sessionId": session_id, **extra},
            "session/resume": {"cwd": str(workspace), "sessionId": session_id, **extra},
            "session/fork": {"cwd": str(workspace), "sessionId": session_id, **extra},
        }
        for method, params in requests.items():
            error = await _refused(c.raw(method, params))
            assert error.code == -32602, method
            assert error.data == {"field": "additionalDirectories"}, method
            assert "sessionCapabilities.additionalDirectories" in str(error), method
        listed = await c.conn.list_sessions(cwd=str(workspace))
        assert [s.session_id for s in listed.sessions] == [session_id]
        # An empty list asks for nothing.
        empty = {"cwd": str(workspace), "mcpServers": [], "additionalDirectories": []}
        assert (await c.raw("session/new", empty))["sessionId"] != session_id


@pytest.mark.parametrize("cursor", ["-5", "05", "+1", "next"])
async def test_a_cursor_rein_never_gave_is_refused(
    connect: Callable[..., Any], workspace: Path, cursor: str
) -> None:
    async with connect() as c:
        await c.new()
        error = await _refused(c.conn.list_sessions(cwd=str(workspace), cursor=cursor))
        assert error.code == -32602 and error.data == {"field": "cursor"}


async def test_a_boolean_for_a_select_option_is_refused_naming_value(
    connect: Callable[..., Any],
) -> None:
    async with connect() as c:
        session_id = await c.new()
        for config_id in ("mode", "model"):
            params = {"sessionId": session_id, "configId": config_id, "type": "boolean"}
            error = await _refused(c.raw("session/set_config_option", {**params, "value": True}))
            assert error.data == {"field": "value"} and "not a boolean" in str(error), config_id
        unknown = {"sessionId": session_id, "configId": "yolo", "value": "on"}
        error = await _refused(c.raw("session/set_config_option", unknown))
        assert error.data == {"field": "configId"}


async def test_an_unknown_extension_method_does_not_make_the_session_side() -> None:
    async with anyio.create_task_group() as tg:
        agent = ReinAcpAgent(ReinConfig(), lambda _c: None, tg, storage=None)  # type: ignore[arg-type,return-value]
        error = await _refused(agent.ext_method("zed/unknown", {}))
        assert error.code == -32601 and error.data == {"method": "_zed/unknown"}
        assert agent._impl is None


async def test_a_refused_load_or_fork_starts_none_of_the_clients_mcp_servers(
    connect: Callable[..., Any], workspace: Path
) -> None:
    box = McpServerStdio(name="box", command=sys.executable, args=[str(TOOLBOX)], env=[])
    async with connect() as c:
        session_id = await c.new()
        refused = [
            c.conn.load_session(cwd=str(workspace), session_id="ses_unknown", mcp_servers=[box]),
            c.conn.resume_session(cwd=str(workspace), session_id="ses_unknown", mcp_servers=[box]),
            c.conn.fork_session(cwd=str(workspace), session_id="ses_unknown", mcp_servers=[box]),
        ]
        for request in refused:
            assert (await _refused(request)).code == -32002
        # The folder's sessions are offered no tool of the client's server.
        c.server.load([{"text": "No box.", "expect": {"tools_exclude": ["mcp__box__echo"]}}])
        await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block("tools?")])
        assert c.client.texts() == "No box."
