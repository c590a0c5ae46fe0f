"""A session's own hosts over the real ``rein acp`` (issue 38's
``allowHosts``, the ACP way): ``session/new`` with ``_meta.rein.allowHosts``
lets that session's sandboxed commands reach the host at once, without
asking; a bad host, or hosts for an isolated session, is InvalidParams
naming the field before any session starts."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp import RequestError
from acp.helpers import text_block

from rein.providers.mock_server import MockServer
from tests.acp.conftest import (
    REQUEST_S,
    Home,
    assert_used_up,
    call,
    load_scenario,
    running_agent,
    tool_turn,
)
from tests.fakes.acp_client import FakeAcpClient
from tests.sandboxing.hello_host import HELLO, hello_host


def _new(cwd: Path, rein: object) -> dict[str, object]:
    return {"cwd": str(cwd), "mcpServers": [], "_meta": {"rein": rein}}


async def test_a_session_started_with_a_host_reaches_it_from_the_sandbox(
    tmp_path: Path, home: Home, mock: MockServer
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    # No terminal offered: the model's commands run here, in the sandbox
    # (approval.command "sandboxed", the default), where nothing is reached
    # but the session's hosts.
    editor = FakeAcpClient(ws, terminal=False)
    with hello_host() as port:
        host = f"127.0.0.1:{port}"
        await load_scenario(
            mock,
            "hosts",
            [
                tool_turn(call("run_command", command=f"curl -sSf -m 5 http://{host}/")),
                {"expect": {"messages_contain": [HELLO.decode().strip()]}, "text": "reached"},
            ],
        )
        async with running_agent(editor, home) as agent:
            await agent.initialize()
            with pytest.raises(RequestError, match=r"_meta\.rein\.allowHosts: .*'http://x'") as bad:
                await agent.raw("session/new", _new(ws, {"allowHosts": ["http://x"]}))
            assert bad.value.data == {"field": "_meta.rein.allowHosts"}
            with pytest.raises(RequestError, match=r"_meta\.rein\.allowHosts: not available"):
                await agent.raw("session/new", _new(ws, {"allowHosts": ["pypi"], "isolated": True}))
            with pytest.raises(RequestError, match=r"_meta\.rein\.allowHosts: must be a list"):
                await agent.raw("session/new", _new(ws, {"allowHosts": "pypi"}))

            made = await agent.raw("session/new", _new(ws, {"allowHosts": [host]}))
            sid = made["sessionId"]
            with anyio.fail_after(REQUEST_S):
                answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("fetch")])
    assert answer.stop_reason == "end_turn"
    assert editor.permission_requests == []  # reached without asking
    [run] = [c for c in editor.tool_calls(sid).values() if c.get("kind") == "execute"]
    assert run["status"] == "completed", run
    assert HELLO.decode().strip() in str(run["content"])
    await assert_used_up(mock)
