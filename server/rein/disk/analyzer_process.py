"""An analyzer's language-server process: started in its own process
group, in the child environment, its stderr drained to the debug log
(:func:`start_process`); stopped by asking it to shut down (bounded),
then, past the bound, ending its whole process group (:func:`stop_client`).

Each analyzer runs in its own process group (``start_new_session``): a
launcher's child (basedpyright-langserver is a Python script running node)
would otherwise outlive a terminated launcher and hold the pipes open, so
every wait after it ran out its bound."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pygls.lsp.client import LanguageClient

from rein.disk.analyzer_requests import drop_late
from rein.process.environment import child_environment

__all__ = ["BUSY_SHUTDOWN_S", "SHUTDOWN_S", "start_process", "stop_client"]

#: Logged as the analyzer server's (the log shows the name): its stderr was
#: logged from disk/analyzer_server.py, and its stop before disk/analyzer_stop.py.
log = logging.getLogger("rein.disk.analyzer_server")


async def start_process(
    client: LanguageClient, name: str, command: Sequence[str], root: Path
) -> asyncio.Task[None] | None:
    """Start ``client``'s server (``command``, in ``root``) in its own
    process group; returns the task draining its stderr (cancelled at its
    stop), None when it has none."""
    await client.start_io(
        command[0],
        *command[1:],
        cwd=str(root),
        env=child_environment(),
        start_new_session=True,
    )
    server = client._server
    if server is None or server.stderr is None:
        return None
    return asyncio.create_task(_drain(name, server.stderr))


async def _drain(name: str, stream: asyncio.StreamReader) -> None:
    while True:
        line = await stream.readline()
        if not line:
            return
        log.debug("%s stderr: %s", name, line.decode(errors="replace").rstrip())


#: How long a server is given to answer ``shutdown``.
SHUTDOWN_S = 3.0
#: The same for a server still in the middle of its work (a progress
#: open, or diagnostics still owed): it answers only once its current file
#: is done (basedpyright re-checking toolz's ``_signatures.py``: 2-3 s at a
#: session's close), and nothing more is asked of it, so it is not waited for.
BUSY_SHUTDOWN_S = 0.2


async def stop_client(name: str, client: Any, alive: bool, *, busy: bool = False) -> None:
    """Shut ``client``'s server down (a live one is asked first; a ``busy``
    one is given BUSY_SHUTDOWN_S to answer), end its process group if it is
    still running past the bounds, then stop the client."""
    said_bye = False
    try:
        if alive:
            # Shielded: an answer after the bound completes the request
            # instead of meeting a cancelled future (pygls logs that).
            answer = asyncio.ensure_future(client.shutdown_async(None))
            answer.add_done_callback(drop_late)
            await asyncio.wait_for(asyncio.shield(answer), BUSY_SHUTDOWN_S if busy else SHUTDOWN_S)
            client.exit(None)
            said_bye = True
    except Exception:
        log.debug("%s did not shut down cleanly", name, exc_info=True)
    server = client._server
    if server is not None and server.returncode is None:
        # One that answered exits by itself; one busy past the bound
        # (basedpyright mid-analysis) is terminated at once.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait(), 3 if said_bye else 0.1)
        if server.returncode is None:
            # The whole group: an orphaned child of a launcher held the
            # pipes open, the waits below ran out their bounds on it.
            _signal_group(server.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(server.wait(), 2)
            except TimeoutError:
                _signal_group(server.pid, signal.SIGKILL)
                # Reaped here, so its transport is closed before the loop is.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(server.wait(), 3)
    try:
        await asyncio.wait_for(client.stop(), 3)
    except (TimeoutError, Exception):
        log.debug("%s client stop", name, exc_info=True)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    """``sig`` to every process of the analyzer's group (it leads it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
