"""``rein/closeSession`` through the real ``rein serve`` while a prompt
arrives: once the close has begun (here: its SessionEnd hook is running),
a prompt, steer or follow-up of the session is refused with InvalidParams
naming ``sessionId``, and the close ends the session for good (it leaves
memory; the store still has it)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e


async def test_a_closing_session_takes_no_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "ws"
    (root / ".claude").mkdir(parents=True)
    fifo = tmp_path / "hook.fifo"
    os.mkfifo(fifo)
    # The SessionEnd hook blocks until the test closes its end of the FIFO.
    hook = {"type": "command", "command": f"cat {fifo} > /dev/null"}
    settings_file = root / ".claude" / "settings.json"
    settings_file.write_text(json.dumps({"hooks": {"SessionEnd": [{"hooks": [hook]}]}}))
    write_script(tmp_path, [{"text": "one"}, {"text": "two"}])
    settings = {"gates": {"analyzer": {"enabled": False}}}
    async with running_server(root, tmp_path, settings=settings) as editor:
        editor.confirm_answer = True
        send = editor.client.protocol.send_request_async
        first = await send("rein/prompt", {"text": "hi"})
        sid = first["sessionId"]
        close = asyncio.ensure_future(send("rein/closeSession", {"sessionId": sid}))
        # Opening the FIFO for writing returns once the hook reads it.
        opening = asyncio.to_thread(os.open, fifo, os.O_WRONLY)
        try:
            writer = await asyncio.wait_for(opening, 20)
        except TimeoutError:
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # free the thread
            raise AssertionError("the SessionEnd hook did not run") from None
        try:
            for method, params in (
                ("rein/prompt", {"text": "again", "sessionId": sid}),
                ("rein/steer", {"text": "this way", "sessionId": sid}),
                ("rein/followUp", {"text": "then", "sessionId": sid}),
            ):
                with pytest.raises(JsonRpcException, match=f"{method}: .*sessionId: .* is closing"):
                    await send(method, params)
        finally:
            os.close(writer)
        assert await asyncio.wait_for(close, 20) == {"closed": True}
        again = await send("rein/closeSession", {"sessionId": sid})
        assert again["closed"] is False and "not open" in again["reason"]
