"""Giving memory back to the system after a large message.

A large message (a 10 MB prompt, a file's text) passes through a few copies
of itself: the frame, its text, the parsed value. CPython frees them, but
glibc's allocator keeps the freed space in its arenas, and a server that
was sent a few such messages stayed 40 to 60 MB larger than it needed to be
(``rein fuzz``). :class:`MemoryRelease` asks glibc to return free memory
to the system (``malloc_trim``) once such a message has been handled: a
few milliseconds, only after messages of at least
:data:`LARGE_MESSAGE_BYTES`.
Elsewhere (no glibc) it does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import sys
from collections.abc import Callable

__all__ = ["LARGE_MESSAGE_BYTES", "RELEASE_DELAY_S", "MemoryRelease"]

#: Messages at least this large are followed by a trim.
LARGE_MESSAGE_BYTES = 1024 * 1024


def _find_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    return trim


_TRIM = _find_trim()


#: After a large message, free memory is given back this long later (its
#: handler has run by then), or when the next message arrives.
RELEASE_DELAY_S = 0.5


class MemoryRelease:
    """Gives free memory back once a large message has been handled: when
    the next message arrives, or :data:`RELEASE_DELAY_S` later when none
    does. One trim per large message at most."""

    def __init__(self) -> None:
        self._due = False

    def handled(self, size: int) -> None:
        """A message of ``size`` bytes was handed to its handler."""
        if _TRIM is None or size < LARGE_MESSAGE_BYTES:
            return
        self._due = True
        asyncio.get_running_loop().call_later(RELEASE_DELAY_S, self.release)

    def release(self) -> None:
        """Trim now if a large message came since the last trim."""
        if self._due and _TRIM is not None:
            self._due = False
            _TRIM(0)
