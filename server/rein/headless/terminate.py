"""SIGTERM ends ``rein run`` as Ctrl-C does: the run is aborted (its
commands stopped, its session stored as aborted, an isolated run's copy
removed) rather than the process dying where it stands (a session left
"running" that ``rein undo`` refused, a worktree left until the next
isolated start). What a CI job's cancel, ``timeout`` and ``docker stop``
send. ``rein apply`` takes it the same way, and holds it off the part that
must not be cut in two (:meth:`Termination.held`: its files' write)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["EXIT_TERMINATED", "Termination", "sigterm_cancels"]

#: ``rein run``'s exit code after a SIGTERM (128 + 15, as a shell says it).
EXIT_TERMINATED = 143


class Termination:
    """Whether a SIGTERM came (call it), and :meth:`held` to keep one off a
    block: the task is cancelled when the block ends, not inside it."""

    def __init__(
        self, task: asyncio.Task[object] | None, said: Callable[[], None] | None = None
    ) -> None:
        self._task = task
        self._said = said
        self._came = False
        self._holds = 0

    def __call__(self) -> bool:
        return self._came

    def check(self) -> None:
        """CancelledError once a SIGTERM came: a place where the work stops
        for it whatever became of the task's cancel (defensive: a cancel
        delivered inside a shielded wait is not seen there, and nothing
        here depends on where it lands)."""
        if self._came:
            raise asyncio.CancelledError

    def _cancel(self) -> None:
        if self._task is not None and not self._holds:
            self._task.cancel()

    def on_sigterm(self) -> None:
        first = not self._came
        self._came = True
        if first and self._said is not None:
            self._said()
        self._cancel()

    @contextmanager
    def held(self) -> Iterator[None]:
        """A SIGTERM inside the block cancels the task once it ends (the
        block itself must be bounded: it is never cut short); once one came,
        the block does not start (:meth:`check`)."""
        self.check()
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
            if self._came:
                self._cancel()


@contextmanager
def sigterm_cancels(said: Callable[[], None] | None = None) -> Iterator[Termination]:
    """While inside, a SIGTERM cancels the current task (the run's main
    one); yields the :class:`Termination` (called: whether one came).
    ``said`` is called when the first comes (to tell the person it was
    heard). Where the loop cannot take the signal (not the main thread, no
    Unix signals), SIGTERM keeps its default. Once one came, further ones
    are ignored after the block too, until the process exits."""
    loop = asyncio.get_running_loop()
    termination = Termination(asyncio.current_task(), said)
    try:
        loop.add_signal_handler(signal.SIGTERM, termination.on_sigterm)
    except (NotImplementedError, RuntimeError, ValueError):
        yield Termination(None)
        return
    try:
        yield termination
    finally:
        if not termination():
            loop.remove_signal_handler(signal.SIGTERM)
        else:
            # The process is ending for it (its report, the loop's shutdown):
            # a second SIGTERM must not kill it there (-15 instead of its 143).
            # A Python handler, not SIG_IGN: a command started from here
            # still gets the default (exec resets a caught signal). Blocked
            # while the loop's handler gives way to it (removing that one
            # restores the default for a moment): one that comes then waits
            # and finds ``_ignored``.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            try:
                loop.remove_signal_handler(signal.SIGTERM)
                signal.signal(signal.SIGTERM, _ignored)
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _ignored(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM after the first, once the work it stopped ended: ignored."""
