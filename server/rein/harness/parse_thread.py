"""One thread for parsing Python off the event loop.

CPython 3.11 keeps ``ast``'s recursion count per interpreter, not per
thread: two parses at once in two threads can fail ("AST constructor
recursion depth mismatch"). The tests gate's per-test selection and the
edit tools' impact note parse in this one thread, one after the other,
so a parse never holds the event loop (seconds on a large project)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

__all__ = ["in_parse_thread"]

P = ParamSpec("P")
T = TypeVar("T")

_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rein-parse")


async def in_parse_thread(func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``func(*args, **kwargs)`` in the parse thread. Cancelled, the caller
    stops waiting; the call already started finishes in the thread."""
    call = functools.partial(func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_EXECUTOR, call)
