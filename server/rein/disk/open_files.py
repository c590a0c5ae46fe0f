"""Which files the analyzers have open, on request: a change's files (and,
in a workspace analysed file by file, their importers up to the pool's
``max_importers``, then the rest in later rounds), and their closing once
the changes are validated. Bound as methods of
:class:`~rein.disk.analyzers.AnalyzerPool`."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Protocol

from rein.disk.analyzer_server import _Analyzer
from rein.disk.file_presence import FilePresence
from rein.disk.importers import ImportIndex
from rein.disk.prior_texts import TextMemory

__all__ = [
    "close_unlisted",
    "ensure_open",
    "importers_left",
    "open_more_importers",
    "release_opened",
]


class AnalyzerPool(Protocol):
    """What these need of :class:`~rein.disk.analyzers.AnalyzerPool`."""

    analyzers: list[_Analyzer]
    imports: ImportIndex | None
    texts: TextMemory | None
    files: list[str]
    requested: list[str]
    max_importers: int
    #: Importers of changed files past ``max_importers``, not opened.
    importers_unopened: list[str]
    presence: FilePresence

    def read(self, path: str) -> str | None: ...
    def skipped(self, path: str) -> bool: ...
    async def started(self) -> None: ...
    def analyzer_active(self) -> None: ...
    def importers_left(self) -> list[str]: ...


async def ensure_open(
    pool: AnalyzerPool, paths: Sequence[str], *, importers: bool = True, listed: bool = True
) -> list[str]:
    """Open these files in every analyzer that owns them (not waiting);
    paths that do not exist, are skipped or owned by nobody are ignored.
    In a large workspace (``importers``) the files that import them are
    opened too in the analyzers that check file by file. Unless ``listed``
    is false (a navigation question's files, closed after its answer:
    :func:`close_unlisted`), they are listed as asked for (reopened after
    a restart, closed once the changes are validated). Returns the paths
    some analyzer opened now."""
    await pool.started()
    if importers and pool.imports is not None and not pool.imports.built:
        # Reading every file: off the event loop (one build; others wait).
        await asyncio.to_thread(pool.imports.build)
    opened: list[str] = []
    for path in paths:
        if pool.skipped(path) or pool.read(path) is None:
            continue
        targets = [path]
        if importers and pool.imports is not None:
            every = pool.imports.importers(path, sys.maxsize)
            targets += every[: pool.max_importers]
            for left in every[pool.max_importers :]:
                if left not in pool.importers_unopened:
                    pool.importers_unopened.append(left)
        for target in targets:
            if listed and target not in pool.files:
                pool.files.append(target)
            if listed and target not in pool.requested:
                pool.requested.append(target)
            for analyzer in pool.analyzers:
                if not (analyzer.alive and analyzer.owns(target)):
                    continue
                if target != path and not analyzer.file_by_file:
                    continue
                if target not in analyzer.versions:
                    analyzer.open(target)
                    if target not in opened:
                        opened.append(target)
    return opened


def importers_left(pool: AnalyzerPool) -> list[str]:
    """Importers of changed files past ``max_importers`` that are not
    open yet (:func:`open_more_importers` opens them)."""
    open_now = {p for a in pool.analyzers if a.alive for p in a.versions}
    pool.importers_unopened = [p for p in pool.importers_unopened if p not in open_now]
    return list(pool.importers_unopened)


async def open_more_importers(pool: AnalyzerPool) -> list[str]:
    """Open the next ``max_importers`` of :func:`importers_left` in the
    analyzers that check file by file; returns those opened now."""
    await pool.started()
    opened: list[str] = []
    for path in pool.importers_left()[: pool.max_importers]:
        if pool.skipped(path) or pool.read(path) is None:
            continue
        if path not in pool.requested:
            pool.requested.append(path)
        for analyzer in pool.analyzers:
            if analyzer.alive and analyzer.file_by_file and analyzer.owns(path):
                if path not in analyzer.versions:
                    analyzer.open(path)
                    if path not in opened:
                        opened.append(path)
        if path in pool.importers_unopened:
            pool.importers_unopened.remove(path)
    return opened


def release_opened(pool: AnalyzerPool) -> list[str]:
    """Close what the analyzers that check file by file have open (the
    changed files and their importers, opened for changes that are now
    validated): otherwise every later change makes basedpyright re-check
    all the files every earlier change opened (on sympy an edit took
    minutes after forty). Returns the closed paths."""
    closed: set[str] = set()
    for analyzer in pool.analyzers:
        if analyzer.alive and analyzer.file_by_file:
            for path in list(analyzer.versions):
                analyzer.close(path)
                closed.add(path)
    pool.importers_unopened.clear()
    if pool.texts is not None:
        pool.texts.forget_changes()
    pool.presence.forget_changes()
    if closed:
        pool.requested = [p for p in pool.requested if p not in closed]
        pool.analyzer_active()
    return sorted(closed)


def close_unlisted(pool: AnalyzerPool, opened: Sequence[tuple[_Analyzer, str]]) -> list[str]:
    """Close each of ``opened`` (an analyzer and a file opened in it with
    ``listed`` false) that no change has asked for since (listed in the
    what the analyzer opens at a restart: the pool's ``requested`` file by
    file, else its ``files``): a navigation question opened up to
    :data:`~rein.disk.nav_servers.OPEN_TO_SEE` files in a server seeing only
    its open files, and they stayed open (reopened after a restart, and
    checked again at every change) until the changes were validated.
    Returns the closed paths."""
    requested, listed = set(pool.requested), set(pool.files)
    closed: set[str] = set()
    for analyzer, path in opened:
        asked = requested if analyzer.file_by_file else listed
        if path not in asked and path in analyzer.versions:
            analyzer.close(path)
            closed.add(path)
    if closed:
        pool.analyzer_active()
    return sorted(closed)
