"""Ending sessions when their host closes (``rein run`` finishing, the
editor's ``shutdown``, the ACP client leaving): each session's ``on_end``
(its SessionEnd hooks, :meth:`rein.bring.hooks_adapter.ClaudeHooks.end`)
runs, all sessions at once, within a bound, so a host's shutdown is never
held longer; what is still running then is cancelled and logged."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from rein.bring.hooks_adapter import SESSION_END_BOUND_S
from rein.session.session import Session

__all__ = ["END_GRACE_S", "RUN_END_WAIT_S", "abort_runs", "end_sessions"]

log = logging.getLogger(__name__)

#: Past the hooks' own bound: how long a host waits for the ends at most
#: (a stopped hook's process group is given its grace to exit).
END_GRACE_S = 4.0
#: How long a host's shutdown waits for the runs it aborted, so that their
#: last messages reach the transcript the SessionEnd hooks read.
RUN_END_WAIT_S = 2.0


async def abort_runs(sessions: Iterable[Session], reason: str) -> None:
    """Abort the runs of ``sessions`` and wait for them, within
    :data:`RUN_END_WAIT_S` (a run still going then is left to its end)."""
    tasks = []
    for session in list(sessions):
        session.abort(reason)
        if session.busy and session.task is not None:
            tasks.append(session.task)
    if tasks:
        await asyncio.wait(tasks, timeout=RUN_END_WAIT_S)


async def end_sessions(sessions: Iterable[Session], reason: str) -> None:
    """End ``sessions`` with SessionEnd's ``reason`` (``other``,
    ``prompt_input_exit``, ``clear``, ``logout``); never raises."""
    tasks = [asyncio.ensure_future(s.end(reason)) for s in list(sessions) if s.on_end]
    if not tasks:
        return
    _done, pending = await asyncio.wait(tasks, timeout=SESSION_END_BOUND_S + END_GRACE_S)
    for task in pending:
        task.cancel()
    if pending:
        log.warning("%d session end(s) did not finish in time: cancelled", len(pending))
