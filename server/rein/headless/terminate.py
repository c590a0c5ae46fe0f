"""SIGTERM ends ``rein run`` as Ctrl-C does: the run is aborted (its
commands stopped, its session stored as aborted, an isolated run's copy
removed) rather than the process dying where it stands (a session left
"running" that ``rein undo`` refused, a worktree left until the next
isolated start). What a CI job's cancel, ``timeout`` and ``docker stop``
send."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["EXIT_TERMINATED", "sigterm_cancels"]

#: ``rein run``'s exit code after a SIGTERM (128 + 15, as a shell says it).
EXIT_TERMINATED = 143


@contextmanager
def sigterm_cancels() -> Iterator[Callable[[], bool]]:
    """While inside, a SIGTERM cancels the current task (the run's main
    one); yields whether one came. Where the loop cannot take the signal
    (not the main thread, no Unix signals), SIGTERM keeps its default."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    came: list[bool] = []

    def on_sigterm() -> None:
        came.append(True)
        if task is not None:
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (NotImplementedError, RuntimeError, ValueError):
        yield lambda: False
        return
    try:
        yield lambda: bool(came)
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
