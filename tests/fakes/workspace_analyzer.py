"""An in-process stand-in for basedpyright in ``diagnosticMode:
workspace`` (a workspace under ``gates.analyzer.workspaceMaxFiles``), for
the analyzer pool's unit tests: a :class:`~tests.fakes.pull_analyzer.FileByFileServer`
(it publishes a document when it is opened or changed, and answers a pull
by checking the file then) that watches files for the client and, told of
a created or deleted file (``workspace/didChangeWatchedFiles``), republishes
the open files only when the test calls :meth:`WorkspaceModeServer.release`:
a loaded machine's basedpyright, which had not begun re-checking the
importers when the grace period passed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from rein.disk.owed_refresh import OwedRefresh
from tests.fakes.pull_analyzer import FileByFileServer, basedpyright_over

__all__ = ["WorkspaceModeServer", "pool_over_workspace_mode"]


class WorkspaceModeServer(FileByFileServer):
    """See the module."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        #: The uris it was told of by didChangeWatchedFiles, in order.
        self.watched: list[str] = []
        #: Pulls of these uris are never answered (a server too busy).
        self.silent: set[str] = set()

    def text_document_diagnostic_async(self, params: Any) -> asyncio.Future[Any]:
        if params.text_document.uri in self.silent:
            self.pulls.append(params.text_document.uri)
            return asyncio.get_running_loop().create_future()  # never set
        return super().text_document_diagnostic_async(params)

    def workspace_did_change_watched_files(self, params: Any) -> None:
        super().workspace_did_change_watched_files(params)
        self.watched.extend(change.uri for change in params.changes)

    def release(self) -> None:
        """Republish every open file as it checks now (the late re-check)."""
        for uri in list(self.shown):
            self._deliver(self._params(uri, self.check(uri)))


async def pool_over_workspace_mode(
    root: Path, settle_ms: int = 120_000
) -> tuple[AnalyzerPool, _Analyzer, WorkspaceModeServer]:
    """A workspace-mode analyzer pool of ``root`` whose one analyzer
    (basedpyright's) talks to a :class:`WorkspaceModeServer`, started with
    every file open (as start-up opens a small workspace's) and a grace
    period after a file-set change that has always passed already
    (:class:`~rein.disk.owed_refresh.OwedRefresh` on a clock far behind):
    what the pool waits for, it waits for without the clock. ``settle_ms``:
    the pool's settle bound (``gates.analyzer.settleTimeoutMs``)."""
    pool = AnalyzerPool(root, [DEFAULT_ANALYZERS[1]], owed_limit_ms=settle_ms)
    await pool.prepare()
    server = WorkspaceModeServer(pool.root)
    analyzer = basedpyright_over(pool, server)
    analyzer.watches_files = True
    analyzer.owed_refresh = OwedRefresh(clock=lambda: float("-inf"))
    for path in pool.files_to_open(file_by_file=False):
        analyzer.open(path)
    pool._started.set()
    return pool, analyzer, server
