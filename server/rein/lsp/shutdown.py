"""How the language server's sessions end at ``shutdown``: every run
aborted, waited for with its prompts (bounded: the transcript and the
store get their ends), the sessions ended (SessionEnd hooks, bounded:
``prompt_input_exit``), the isolated copies closed once theirs ended,
then the sessions closed (their gates' kept processes reaped, bounded) and
the store; and the stopped disk watcher's task awaited, bounded.
:meth:`rein.lsp.server.ReinServer.shutdown_sessions` runs them in order."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rein.hosting.folder import FolderHost
    from rein.lsp.editor import EditorWorkspace
    from rein.lsp.isolated_sessions import IsolatedSessions

__all__ = ["WATCHER_END_S", "end_all_sessions", "watcher_ended"]

log = logging.getLogger(__name__)

#: How long a shutdown waits for the stopped disk watcher's task to end (its
#: OS watches notice the stop within a fraction of a second).
WATCHER_END_S = 5.0


async def end_all_sessions(
    folder: FolderHost[EditorWorkspace] | None, copies: IsolatedSessions | None
) -> None:
    """Abort, wait for and end the folder's sessions and the isolated ones
    (``copies``), then close them and the store."""
    from rein.session.ending import RUN_END_WAIT_S, abort_runs, end_sessions
    from rein.session.session import gates_closed

    isolated = [made.session for made in copies.live.values()] if copies is not None else []
    mine = list(folder.manager.sessions.values()) if folder and folder.has_manager else []
    await abort_runs([*isolated, *mine], "the server is shutting down")
    if folder is not None and folder.has_manager:
        await folder.manager.prompts_ended(RUN_END_WAIT_S)

    async def end_isolated() -> None:
        await end_sessions(isolated, "prompt_input_exit")
        if copies is not None:
            await copies.close()

    await asyncio.gather(end_sessions(mine, "prompt_input_exit"), end_isolated())
    if folder is not None and folder.has_manager:
        # The sessions' gates closed (the tests gate's warm pytest
        # reaped) before the answer to shutdown, and the store closed.
        folder.manager.close()
        await gates_closed()


async def watcher_ended(task: asyncio.Future[None] | None) -> None:
    """Wait, bounded, for the stopped disk watcher's task to end (its
    watches closed, its probe folder removed; never left unawaited, its
    streams unclosed, when the loop closes next); cancel it past the bound."""
    if task is None:
        return
    done, _ = await asyncio.wait({task}, timeout=WATCHER_END_S)
    if not done:
        log.warning("the disk watcher did not end within %g s of its stop", WATCHER_END_S)
        task.cancel()
        # Awaited too (bounded): a cancelled task left pending is
        # destroyed with the loop, with the warning this function avoids.
        await asyncio.wait({task}, timeout=WATCHER_END_S)
    elif not task.cancelled() and task.exception() is not None:
        log.warning("the disk watcher failed", exc_info=task.exception())
