"""A session's updates sent to the client (rein.acp.update_stream): deltas
coalesced, order kept, everything sent before drain returns, a failing send
not the end of the stream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rein.acp.update_stream import SessionUpdates
from rein.acp.updates import UpdateMapper
from rein.harness.events import ErrorEvent, MessageDelta, ToolCallStart


@pytest.fixture
def mapper(tmp_path: Path) -> UpdateMapper:
    return UpdateMapper(tmp_path, {"app.py": "x = 1\n"}.get, lambda: 128_000)


async def test_the_stream_coalesces_deltas_keeps_order_and_drains(
    mapper: UpdateMapper,
) -> None:
    sent: list[Any] = []

    async def send(update: Any) -> None:
        sent.append(update)

    stream = SessionUpdates(mapper, send, interval_s=3600)
    for piece in ("Hel", "lo"):
        stream(MessageDelta(kind="text", delta=piece))
    stream(MessageDelta(kind="thinking", delta="hm"))
    stream(ToolCallStart(tool_call_id="c1", name="read_file", arguments={"path": "app.py"}))
    stream(MessageDelta(kind="text", delta="done"))
    await stream.drain()
    assert [u.session_update for u in sent] == [
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "agent_message_chunk",
    ]
    assert [getattr(getattr(u, "content", None), "text", None) for u in sent] == [
        "Hello",
        "hm",
        None,
        "done",
    ]


async def test_a_failing_send_does_not_stop_the_stream(mapper: UpdateMapper) -> None:
    sent: list[Any] = []

    async def send(update: Any) -> None:
        if not sent:
            sent.append("failed")
            raise ConnectionError("gone")
        sent.append(update)

    stream = SessionUpdates(mapper, send)
    stream(ErrorEvent(message="one"))
    stream(ErrorEvent(message="two"))
    await stream.drain()
    assert sent[0] == "failed" and "two" in sent[1].content.text
