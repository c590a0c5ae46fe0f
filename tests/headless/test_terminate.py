"""SIGTERM in a headless command (a real signal to this process):
``Termination.held`` keeps it off a block, which runs to its end and then
the task is cancelled; once one came, a held block does not start, and a
second one after the block (the command's report, the loop's shutdown)
does not kill the process (a real process: it would kill this one)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from rein.headless.terminate import sigterm_cancels

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="the loop takes signals in the main thread only",
)


@pytest.fixture(autouse=True)
def sigterm_as_it_was() -> Iterator[None]:
    """Once one came, further SIGTERMs stay ignored after the block: this
    process (pytest) gets its own handling back."""
    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


def test_a_sigterm_inside_a_held_block_cancels_once_the_block_ends() -> None:
    async def main() -> list[str]:
        heard = anyio.Event()
        steps: list[str] = []
        with sigterm_cancels(heard.set) as terminated:
            try:
                with terminated.held():
                    os.kill(os.getpid(), signal.SIGTERM)
                    with anyio.fail_after(10):
                        await heard.wait()  # the loop took it, inside the block
                    steps.append("the block ran to its end")
                await asyncio.sleep(10)  # cancelled at once
                steps.append("not cancelled")
            except asyncio.CancelledError:
                steps.append("cancelled")
            assert terminated()
        return steps

    assert anyio.run(main) == ["the block ran to its end", "cancelled"]


def test_a_held_block_does_not_start_once_a_sigterm_came() -> None:
    async def main() -> list[str]:
        steps: list[str] = []
        with sigterm_cancels() as terminated:
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                await asyncio.sleep(10)  # cancelled at once
                steps.append("not cancelled")
            except asyncio.CancelledError:
                steps.append("cancelled")
            # The cancel is spent (as when a wait took it): the signal is
            # what a held block checks.
            try:
                with terminated.held():
                    steps.append("started")
            except asyncio.CancelledError:
                steps.append("refused")
        return steps

    assert anyio.run(main) == ["cancelled", "refused"]


#: A command stopped by SIGTERM that gets a second one while it reports
#: (after the block): it ends with its own code, not killed by it.
SECOND_SIGTERM = """
import asyncio, os, signal, sys
from rein.headless.terminate import EXIT_TERMINATED, sigterm_cancels

async def main() -> int:
    with sigterm_cancels() as terminated:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            pass
    assert terminated()
    os.kill(os.getpid(), signal.SIGTERM)  # while it reports (the default kills at once)
    return EXIT_TERMINATED

sys.exit(asyncio.run(main()))
"""


def test_a_second_sigterm_after_the_block_does_not_kill_the_process() -> None:
    server = Path(__file__).resolve().parents[2] / "server"
    done = subprocess.run(
        [sys.executable, "-c", SECOND_SIGTERM],
        env={**os.environ, "PYTHONPATH": str(server)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 143, done.stderr
