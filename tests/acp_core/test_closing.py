"""``session/close`` while the prompt it cancels switches the session's
mode (a mode chosen during the previous prompt is applied as the next one
starts): the switch puts a new session (same id) in the table, and the close
must end that one, not the one it found before its wait."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from acp import helpers

from rein.acp.closing import CLOSED
from rein.acp.live import Live
from rein.acp.sessions import AcpSessions
from rein.providers.mock_server import MockServer
from rein.session import Mode
from tests.acp_core.conftest import config_for
from tests.fakes.acp_client import FakeAcpClient

BOUND_S = 30


async def test_a_close_during_a_mode_switch_ends_the_switched_session(
    connect: Callable[..., Any], mock_server: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release, marked = asyncio.Event(), asyncio.Event(), asyncio.Event()
    renewed: list[Live] = []
    switch, mark = AcpSessions._switch_mode, AcpSessions.mark_cancelled

    async def held_switch(self: AcpSessions, live: Live, mode: Mode) -> Live:
        # Held as it begins (a real switch awaits the store before it puts
        # the new session in the table) until the close waits.
        entered.set()
        await asyncio.wait_for(release.wait(), BOUND_S)
        renewed.append(await switch(self, live, mode))
        return renewed[-1]

    def noted_mark(self: AcpSessions, session_id: str, reason: str) -> bool:
        if reason == CLOSED:
            marked.set()  # the close reaches its wait with no await between
        return mark(self, session_id, reason)

    monkeypatch.setattr(AcpSessions, "_switch_mode", held_switch)
    monkeypatch.setattr(AcpSessions, "mark_cancelled", noted_mark)
    # The command is asked about and the question never answered: the first
    # prompt runs until its cancel.
    client = FakeAcpClient(hang=["session/request_permission"])
    config = config_for(mock_server, approval={"command": "ask"})
    async with connect(client=client, config=config) as c:
        c.server.load([{"tool_calls": [{"name": "run_command", "arguments": {"command": "true"}}]}])
        sid = await c.new()
        first = await c.prompt_to_its_tool_call(sid)
        await c.conn.set_session_mode(session_id=sid, mode_id="plan")  # from the next prompt
        await c.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(first, BOUND_S)).stop_reason == "cancelled"
        second = asyncio.create_task(
            c.conn.prompt(session_id=sid, prompt=[helpers.text_block("and now")])
        )
        await asyncio.wait_for(entered.wait(), BOUND_S)
        closing = asyncio.create_task(c.raw("session/close", {"sessionId": sid}))
        await asyncio.wait_for(marked.wait(), BOUND_S)
        release.set()
        closed = await asyncio.wait_for(closing, BOUND_S)
        stop = (await asyncio.wait_for(second, BOUND_S)).stop_reason

    assert closed == {} and stop == "cancelled"
    [live] = renewed
    assert live.session.mode == "plan"
    # The switched session left memory as the old one would have.
    assert live.host.manager.sessions.get(sid) is None
    assert len(c.server.requests) == 1
