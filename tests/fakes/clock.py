"""Virtual time: an asyncio loop on a fake clock."""

from __future__ import annotations

import asyncio
import selectors
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

_T = TypeVar("_T")


class _JumpingSelector(selectors.DefaultSelector):
    """Polls for real I/O; when there is none and the loop would wait for a
    timer, moves the loop's clock to that timer instead of waiting."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:  # no timer at all: only real I/O can wake the loop
            return super().select(None)
        ready = super().select(0)
        if ready or timeout <= 0:
            return ready
        self._loop.now += timeout
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on a fake clock: time starts at 0 and, whenever every
    task waits, jumps to the next timer. Sleeps and timeouts take no wall
    time and happen in exact order. For in-memory tests only: a thread or a
    real process does not hold the clock back."""

    def __init__(self) -> None:
        self.now = 0.0
        super().__init__(_JumpingSelector(self))

    def time(self) -> float:
        return self.now


def run_in_virtual_time(main: Callable[[], Awaitable[_T]]) -> _T:
    """Run ``main()`` on a :class:`VirtualTimeLoop`. ``time.monotonic`` reads
    the same fake clock meanwhile: the harness measures idle time and tool
    heartbeats with it. Bound waits with ``anyio.fail_after``: a stuck test
    then jumps to its deadline and fails at once."""

    async def run() -> _T:
        return await main()

    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        real_monotonic = time.monotonic
        time.monotonic = runner.get_loop().time
        try:
            return runner.run(run())
        finally:
            time.monotonic = real_monotonic
