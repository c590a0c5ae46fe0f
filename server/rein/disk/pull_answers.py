"""What a pull's answer means for the file it asked of: one analyzer
server's question for a file's diagnostics at a version (asked through
:func:`~rein.disk.analyzer_pull.ask_diagnostics`), and what its answer, or
its failure, does to the file. Only the file's latest question to the
current server counts; an answer for an older version, one read after the
server's process exited, or one given without an analysis after a publish
settled the file says nothing. An answer is the file's findings and
settles its debt (:class:`~rein.disk.owed_publishes.OwedFiles`); one
asked of a server that publishes holds it busy PULL_GRACE_S more. A
question not answered leaves the file stale, saying why, if it is still
owed. The server (:class:`~rein.disk.analyzer_server._Analyzer`) decides
when to ask."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, Protocol

from pygls.lsp.client import LanguageClient

from rein.disk.analyzer_findings import Findings
from rein.disk.analyzer_pull import LatestPulls, ask_diagnostics
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.owed_publishes import OwedFiles

__all__ = ["PULL_GRACE_S", "PullingServer", "ask_pull"]

#: Logged as the analyzer server's (the log shows the name), as it was
#: before the pull's answer moved out of disk/analyzer_server.py.
log = logging.getLogger("rein.disk.analyzer_server")

#: Not idle this long after answering a pull it was asked though it publishes
#: (:mod:`rein.disk.file_checks`: the answer ends basedpyright's progress).
PULL_GRACE_S = 1.0


class _Owner(Protocol):
    @property
    def root(self) -> Path: ...
    @property
    def request_timeout_s(self) -> float: ...
    def analyzer_published(self, path: str) -> None: ...


class PullingServer(Protocol):
    """What asking a pull and taking its answer read and settle of the server."""

    last_activity: float
    hold_until: float

    @property
    def spec(self) -> AnalyzerSpec: ...
    @property
    def pool(self) -> _Owner: ...
    @property
    def client(self) -> LanguageClient | None: ...
    @property
    def exited(self) -> bool: ...
    @property
    def pull(self) -> bool: ...
    @property
    def findings(self) -> Findings: ...
    @property
    def pulls(self) -> LatestPulls: ...
    @property
    def versions(self) -> dict[str, int]: ...
    @property
    def awaiting(self) -> OwedFiles: ...
    async def bounded_request(
        self, what: str, request: Awaitable[Any], bound_s: float = 0.0, bound: str = ""
    ) -> Any: ...
    def not_answered(self, path: str, version: int, reason: str) -> None: ...


def ask_pull(
    server: PullingServer,
    path: str,
    version: int,
    *,
    force: bool = False,
    bound_s: float = 0.0,
    bound: str = "",
    answered: bool = False,
) -> None:
    """Ask ``server`` for ``path``'s diagnostics at ``version`` if it answers
    pulls, or ``force``: within ``bound_s`` (named ``bound``) or the pool's
    request bound, the file's latest question from now on; the question
    shows the server working for no longer than the request bound;
    ``answered``: only its answer settles the file, a publish meanwhile
    does not (:meth:`~rein.disk.analyzer_pull.LatestPulls.asking_at`)."""
    client = server.client
    if not (server.pull or force) or client is None:
        return
    request_s = server.pool.request_timeout_s
    working_s = min(bound_s or request_s, request_s)
    server.pulls.ask(
        path,
        _pull(server, client, path, version, bound_s, bound),
        working_s,
        version if answered else None,
    )


async def _pull(
    server: PullingServer,
    client: LanguageClient,
    path: str,
    version: int,
    bound_s: float,
    bound: str,
) -> None:
    """Ask ``server`` for the diagnostics of ``path`` at ``version`` (pull
    model), within ``bound_s`` (named ``bound``) or the pool's request
    bound. Only the file's latest question to the current server
    (``client``, the one asked) counts, and its timeout only while the file
    is still owed: an earlier question (asked again since), a server's from
    before a restart, or a question whose debt a publish settled meanwhile
    says nothing."""
    me = asyncio.current_task()

    def latest() -> bool:
        return server.client is client and server.pulls.is_latest(path, me)

    published = server.findings.publishes(path)
    report, failure = await ask_diagnostics(
        client,
        server.spec,
        server.pool.root,
        path,
        server.findings.result_ids.get(path),
        lambda what, request: server.bounded_request(what, request, bound_s, bound),
        lambda: server.versions.get(path) == version,
    )
    if failure is not None:
        # Not owed any more (the wait would run to the settle bound
        # for nothing): the snapshot says this file is stale, and why.
        if latest() and path in server.awaiting:
            log.warning("%s", failure)
            server.not_answered(path, version, failure)
        return
    if server.versions.get(path) != version:
        return  # a newer version is already being pulled
    if not latest():
        # Asked again since (the file's version the same: another file
        # was shown another text meanwhile): this answer may predate it.
        return
    if server.exited:
        return  # read after its process exited: see _Analyzer.on_publish
    if server.findings.blind(report) and (
        path not in server.awaiting or server.findings.publishes(path) != published
    ):
        # Not analysed, and a publish came meanwhile (it settled the file,
        # or it settles it now: the question's answer says nothing): that
        # stands.
        server.awaiting.pop(path, None)
        return
    server.pulls.answered(me)
    server.findings.answered(path, report)
    wanted = server.awaiting.get(path)
    if wanted is not None and wanted <= version:
        del server.awaiting[path]
    server.last_activity = time.monotonic()
    if not server.pull:  # asked though it publishes: see PULL_GRACE_S
        server.hold_until = server.last_activity + PULL_GRACE_S
    server.pool.analyzer_published(path)
