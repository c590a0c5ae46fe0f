"""Stopping an analyzer at a session's close (issue 32 item 7): one still in
the middle of its work (a progress open, or a file's diagnostics owed, as
basedpyright between two passes of its workspace analysis) answers
``shutdown`` only once its current file is done, and nothing more is asked
of it, so it is ended instead of waited for; an idle one is shut down as
before."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest
from pygls.lsp.client import LanguageClient

from rein.disk.analyzer_process import start_process, stop_client
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.analyzers import AnalyzerPool
from tests.fakes.stdio_framing import FRAMING

#: Answers initialize; at ``initialized`` begins pyright's progress when
#: argv[2] is "busy"; answers shutdown only after 1 s, writing argv[1] first.
SLOW_TO_STOP = (
    FRAMING
    + """\
import time

for message in messages():
    method = message.get("method")
    if method == "initialize":
        send({"id": message["id"], "result": {"capabilities": {}}})
    elif method == "initialized" and sys.argv[2] == "busy":
        send({"method": "pyright/beginProgress", "params": None})
    elif method == "shutdown":
        time.sleep(1)
        with open(sys.argv[1], "w") as out:
            out.write("answered")
        send({"id": message["id"], "result": None})
    elif method == "exit":
        break
"""
)


async def _stop(tmp_path: Path, state: str) -> bool:
    """Start and stop the pool; whether the server answered ``shutdown``."""
    ws = tmp_path / state
    ws.mkdir()
    if state == "owing":
        (ws / "a.x").write_text("a\n")  # opened at start, never published
    script = tmp_path / "slow_to_stop.py"
    script.write_text(SLOW_TO_STOP)
    answered = tmp_path / f"{state}.answered"
    command = (sys.executable, str(script), str(answered), state)
    pool = AnalyzerPool(ws, [AnalyzerSpec("slow", command, frozenset({".x"}))])
    await pool.start()
    (analyzer,) = pool.analyzers
    while state == "busy" and not analyzer.progress:
        await pool.activity().wait()
    await pool.stop()
    return answered.exists()


async def test_a_busy_analyzer_is_ended_an_idle_one_shut_down(tmp_path: Path) -> None:
    assert not await _stop(tmp_path, "busy")
    assert await _stop(tmp_path, "idle")


async def test_an_analyzer_that_owes_diagnostics_is_ended(tmp_path: Path) -> None:
    # No progress open, but the file it was shown is not published yet.
    assert not await _stop(tmp_path, "owing")


async def test_a_servers_stderr_is_logged_as_the_analyzer_servers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Its lines go to the debug log under the name they had before the
    process's start moved out of disk/analyzer_server.py."""
    caplog.set_level(logging.DEBUG, logger="rein.disk")
    client = LanguageClient("rein-test", "0")
    command = (sys.executable, "-c", "import sys; print('warming up', file=sys.stderr)")
    drained = await start_process(client, "chatty", command, tmp_path)
    assert drained is not None
    await asyncio.wait_for(drained, 5)  # the stream ended with the process
    await stop_client("chatty", client, alive=False)
    said = ("rein.disk.analyzer_server", logging.DEBUG, "chatty stderr: warming up")
    assert said in caplog.record_tuples
