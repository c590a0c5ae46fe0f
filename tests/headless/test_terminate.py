"""SIGTERM in a headless command (a real signal to this process):
``Termination.held`` keeps it off a block, which runs to its end and then
the task is cancelled; once one came, a held block does not start."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

import anyio
import pytest

from rein.headless.terminate import sigterm_cancels

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="the loop takes signals in the main thread only",
)


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
