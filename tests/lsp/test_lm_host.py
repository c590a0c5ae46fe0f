"""The language server's side of vscode-lm (rein.lsp.editor_lm.EditorLmHost) with
the client played by the test: deltas are routed by requestId, an answer
that overtook the client's last deltas waits for them, late deltas are
dropped, and a cancelled turn tells the client."""

from __future__ import annotations

import asyncio
from typing import Any

from rein.lsp.editor_lm import EditorLmHost
from tests.fakes.lm import FakeLmServer


async def settle() -> None:
    """Let the loop pass the answer on (a few callbacks: the concurrent
    future, its asyncio wrapper, the shield); not a wait for time."""
    for _ in range(5):
        await asyncio.sleep(0)


def host_and_server() -> tuple[EditorLmHost, FakeLmServer]:
    server = FakeLmServer()
    return EditorLmHost(server.protocol), server


async def test_an_answer_that_overtook_its_deltas_waits_for_them() -> None:
    host, server = host_and_server()
    got: list[dict[str, Any]] = []
    chat = asyncio.ensure_future(host.chat({"requestId": "r1"}, got.append))
    await asyncio.wait_for(server.protocol.sent.wait(), 5)
    (method, params, answer) = server.protocol.requests[0]
    assert method == "rein/lm/chat" and params == {"requestId": "r1"}
    host.on_delta({"requestId": "r1", "kind": "text", "text": "a"})
    answer.set_result({"stopReason": "stop", "deltas": 3})
    await settle()
    assert not chat.done()  # two deltas are still on their way
    host.on_delta({"requestId": "other", "kind": "text", "text": "not mine"})
    host.on_delta({"requestId": "r1", "kind": "text", "text": "b"})
    assert not chat.done()
    host.on_delta({"requestId": "r1", "kind": "text", "text": "c"})
    assert await asyncio.wait_for(chat, 5) == {"stopReason": "stop", "deltas": 3}
    assert [d["text"] for d in got] == ["a", "b", "c"]
    host.on_delta({"requestId": "r1", "kind": "text", "text": "late"})  # dropped
    assert len(got) == 3


async def test_cancelling_a_turn_sends_cancel_request() -> None:
    host, server = host_and_server()
    chat = asyncio.ensure_future(host.chat({"requestId": "r2"}, lambda d: None))
    await asyncio.wait_for(server.protocol.sent.wait(), 5)
    chat.cancel()
    try:
        await chat
    except asyncio.CancelledError:
        pass
    assert [m for m, _ in server.protocol.notifications] == ["$/cancelRequest"]
