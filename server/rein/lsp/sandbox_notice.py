"""The language server's one warning when the model's commands should run
sandboxed and cannot (issue 38): the probe (a bubblewrap start, bounded,
once per process: :mod:`rein.sandboxing.probe`) runs in a thread, off the
event loop, and the warning is shown when it answers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from rein.sandboxing.probe import unavailable_notice

__all__ = ["say_if_unsandboxed"]

log = logging.getLogger(__name__)


async def _say(
    approval_command: str, bwrap: str, also: Sequence[str], show: Callable[[str], None]
) -> None:
    try:
        notice = await asyncio.to_thread(unavailable_notice, approval_command, bwrap, also)
    except Exception:
        log.exception("the sandbox probe failed")
        return
    if notice is not None:
        show(notice)


def say_if_unsandboxed(
    approval_command: str, bwrap: str, also: Sequence[str], show: Callable[[str], None]
) -> asyncio.Task[None] | None:
    """Start the probe; ``show`` gets the notice when there is one. The
    task is returned for the caller to keep (a task nobody holds may be
    collected before it ends). Without a running loop (a session made
    outside the server's loop) the probe runs here: None."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        notice = unavailable_notice(approval_command, bwrap, also)
        if notice is not None:
            show(notice)
        return None
    return loop.create_task(_say(approval_command, bwrap, also, show))
