"""Rein's own analyzer servers as the navigator of a host whose client has no
navigation of its own (``rein serve`` with an LSP client that does not offer
``rein/navigate``): a :class:`~rein.disk.pool_navigator.PoolNavigator` over a
pool of its own, started on the first question, never before.

The servers are shown the client's live buffers: the pool reads a file's
text through ``read`` (an open buffer's, else the disk's), every change
recorded in the folder's mutation log (a person's didChange, Rein's own
edits, a command's writes) is sent on, and before each question the
documents the client has open are opened in their servers and those whose
buffer was opened, changed or closed without a change (an unsaved buffer
discarded) are sent again. So an answer reflects unsaved text.

The start is bounded: each server's ``initialize`` by the pool's request
bound, the first answers by the pool navigator's index wait (after which
the references are marked as possibly incomplete, as headless).
:meth:`LazyPoolNavigator.aclose` stops the servers with the folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rein.disk.analyzers import AnalyzerPool, AnalyzerSpec
from rein.disk.pool_navigator import PoolNavigator
from rein.harness.generations import MutationLog
from rein.harness.navigation_ports import (
    CodeLocation,
    CodeSymbol,
    NavigationUnavailable,
    Position,
    TextReplacement,
)

__all__ = ["LazyPoolNavigator"]

log = logging.getLogger(__name__)


class LazyPoolNavigator:
    """A :class:`~rein.harness.navigation_ports.Navigator` whose analyzer
    pool starts on the first question, over the client's buffers.

    ``read`` is the client's buffer of a workspace path (None: not open),
    ``open_paths`` the workspace paths the client has open now."""

    def __init__(
        self,
        root: Path,
        specs: Sequence[AnalyzerSpec],
        mutations: MutationLog,
        read: Callable[[str], str | None],
        open_paths: Callable[[], Sequence[str]],
        *,
        request_timeout_ms: int = 10_000,
        workspace_max_files: int = 1_000,
        index_wait_s: float | None = None,
    ) -> None:
        self.root = root
        self.specs = list(specs)
        self._mutations = mutations
        self._open_paths = open_paths
        self._read = read
        self.pool = AnalyzerPool(
            root,
            self.specs,
            on_report=lambda message: log.warning("navigation: %s", message),
            request_timeout_ms=request_timeout_ms,
            workspace_max_files=workspace_max_files,
            read=read,
        )
        self.navigator = (
            PoolNavigator(self.pool)
            if index_wait_s is None
            else PoolNavigator(self.pool, index_wait_s=index_wait_s)
        )
        self._start: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None
        #: The client's open documents at the last question: one closed
        #: since is sent again (its unsaved text is gone).
        self._buffers: set[str] = set()
        self._closed = False

    @property
    def source(self) -> str:
        return self.navigator.source

    @property
    def started(self) -> bool:
        """Whether the first question started the servers."""
        return self._start is not None

    # ------------------------------------------------------------ plumbing

    async def _run_start(self) -> None:
        # Changes from now on reach the servers; what came before is read
        # (the buffers, else the disk) when the servers open the files.
        self._unsubscribe = self._mutations.subscribe(self.pool.on_mutation)
        await self.pool.start()

    async def _ready(self) -> PoolNavigator:
        if self._closed:
            raise NavigationUnavailable("the workspace folder is closed.")
        if self._start is None:
            log.info("navigation: starting %s", ", ".join(s.name for s in self.specs))
            self._start = asyncio.ensure_future(self._run_start())
        # Shielded: a question cancelled while the servers start leaves the
        # start running for the next one.
        try:
            await asyncio.shield(self._start)
        except Exception as exc:  # each server's own failure is reported, not raised
            raise NavigationUnavailable(f"Rein's language servers did not start: {exc}") from None
        self._sync_buffers()
        return self.navigator

    def _sync_buffers(self) -> None:
        """Open the client's documents in their servers, and send again
        each open one whose text is not what its servers were last sent."""
        live = [a for a in self.pool.analyzers if a.alive]
        now = {
            path
            for path in self._open_paths()
            if not self.pool.skipped(path) and any(a.owns(path) for a in live)
        }
        stale: list[str] = []
        for path in sorted(now | self._buffers):
            text = self.pool.read(path)  # the buffer, else (closed since) the disk
            owners = [a for a in live if a.owns(path)]
            # An open buffer a server has not open yet is opened with its text.
            if any(path in a.sent and a.sent[path] != text for a in owners) or (
                path in now and any(path not in a.sent for a in owners)
            ):
                stale.append(path)
        self.pool.refresh(stale)
        self._buffers = now

    async def aclose(self) -> None:
        """Stop the servers (a start under way is cancelled first)."""
        self._closed = True
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._start is None:
            return
        if not self._start.done():
            self._start.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._start
        await self.pool.stop()

    # ----------------------------------------------------------- Navigator

    async def definition(self, path: str, position: Position) -> Sequence[CodeLocation]:
        return await (await self._ready()).definition(path, position)

    async def references(
        self, path: str, position: Position, *, include_declaration: bool = True
    ) -> Sequence[CodeLocation]:
        navigator = await self._ready()
        return await navigator.references(path, position, include_declaration=include_declaration)

    async def hover(self, path: str, position: Position) -> str | None:
        return await (await self._ready()).hover(path, position)

    async def document_symbols(self, path: str) -> Sequence[CodeSymbol]:
        return await (await self._ready()).document_symbols(path)

    async def workspace_symbols(self, query: str) -> Sequence[CodeSymbol]:
        return await (await self._ready()).workspace_symbols(query)

    async def rename(
        self, path: str, position: Position, new_name: str
    ) -> Mapping[str, Sequence[TextReplacement]]:
        return await (await self._ready()).rename(path, position, new_name)
