"""The files the analyzer pool knows and what a change does to them: the
start's scan (the file set, and in a large workspace every text read), a
changed file shown to the analyzers that own it, files that appeared or
went told to every analyzer, the settings an analyzer reads only at start
(:class:`~rein.disk.pool_environment.SettingChanges`), which names were
ever files (:mod:`rein.disk.file_presence`), and the diagnostics fresh at
once (nobody analyses the file, or it is gone). Bound as methods of
:class:`~rein.disk.analyzers.AnalyzerPool`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.file_presence import FilePresence
from rein.disk.file_set_importers import FileSetImporters
from rein.disk.importers import ImportIndex
from rein.disk.pool_environment import (
    SettingChanges,
    tell_environment_changed,
    tell_file_set_changed,
)
from rein.disk.prior_texts import TextMemory
from rein.disk.python_environment import PythonEnvironment
from rein.harness.ports import Mutation
from rein.tools.ignore import WorkspaceFilter

__all__ = [
    "environment_changed",
    "file_set_changed",
    "on_mutation",
    "prepare",
    "refresh",
    "scan",
]


class AnalyzerPool(Protocol):
    """What these need of :class:`~rein.disk.analyzers.AnalyzerPool`."""

    root: Path
    specs: list[AnalyzerSpec]
    analyzers: list[_Analyzer]
    filter: WorkspaceFilter
    presence: FilePresence
    setting_changes: SettingChanges
    file_set: FileSetImporters
    on_diagnostics_changed: Callable[[list[str]], None] | None
    workspace_max_files: int
    max_files: int
    defer_workspace: bool
    large: bool
    deferring: bool
    texts: TextMemory | None
    imports: ImportIndex | None
    cold_imports: ImportIndex | None
    files: list[str]
    requested: list[str]
    existing: set[str]
    generation: int
    python_env: PythonEnvironment
    environment_look: asyncio.Future[None] | None

    def read(self, path: str) -> str | None: ...
    def skipped(self, path: str) -> bool: ...
    def file_set_changed(self, created: Sequence[str], deleted: Sequence[str]) -> None: ...
    async def started(self) -> None: ...


async def prepare(pool: AnalyzerPool) -> None:
    """Find the workspace's files (and in a large one read them: what a
    file said before a command changed it is known only if it was read
    before): fast, before the run's first change can happen."""
    found = scan(pool)
    pool.large = len(found) > pool.workspace_max_files
    pool.deferring = pool.defer_workspace and not pool.large
    pool.texts = TextMemory(pool.read) if pool.large else None
    if pool.texts is not None:
        await asyncio.to_thread(pool.texts.remember, found)
    pool.imports = ImportIndex(found, pool.texts.read) if pool.texts else None
    pool.files = found[: pool.max_files]
    pool.existing = set(found)
    # Before a command can install; not awaited (a child process for an
    # interpreter that is no venv's): what asks waits for it.
    pool.environment_look = asyncio.ensure_future(asyncio.to_thread(pool.python_env.look))


def scan(pool: AnalyzerPool) -> list[str]:
    """Every file the workspace filter keeps (hidden folders left out
    too), in path order; start-up opens the first ``max_files``."""
    extensions = {e for s in pool.specs for e in s.extensions}
    pool.filter = WorkspaceFilter(pool.root)
    found = [
        path
        for path in pool.filter.walk_files(extensions, pool.presence.saw_folder)
        if not any(part.startswith(".") for part in path.split("/")[:-1])
    ]
    return found


def refresh(pool: AnalyzerPool, paths: Sequence[str]) -> None:
    """Show the analyzers the text of ``paths`` again (the pool's ``read``),
    without a new generation: a text learnt other than by a change (the
    ACP client's unsaved buffer, read by the model)."""
    for path in paths:
        if pool.skipped(path):
            continue
        if path not in pool.requested:
            pool.requested.append(path)
        for analyzer in pool.analyzers:
            if analyzer.alive and analyzer.owns(path):
                analyzer.change(path)


def on_mutation(pool: AnalyzerPool, mutation: Mutation) -> None:
    """Send the change to every analyzer that owns the file."""
    pool.generation = max(pool.generation, mutation.generation)
    unowned: list[str] = []
    created: list[str] = []
    deleted: list[str] = []
    for path in mutation.paths:
        pool.presence.changed(path)
        if pool.skipped(path):
            unowned.append(path)
            continue
        if path not in pool.files and pool.read(path) is not None:
            pool.files.append(path)
        if path not in pool.requested:
            pool.requested.append(path)
        if pool.texts is not None:
            pool.texts.changed(path, pool.read(path))
        for index in (pool.imports, pool.cold_imports):
            if index is not None:
                index.update(path)
        owners = [a for a in pool.analyzers if a.alive and a.owns(path)]
        for down in (a for a in pool.analyzers if not a.alive and a.owns(path)):
            down.changed_while_down.add(path)  # what it knows of it is the old text
        exists = pool.read(path) is not None if owners else path in pool.existing
        if exists != (path in pool.existing):
            (created if exists else deleted).append(path)
            (pool.existing.add if exists else pool.existing.discard)(path)
        for analyzer in owners:
            analyzer.change(path)
        if not owners or not exists:
            unowned.append(path)  # a file that is gone has no diagnostics
    if created or deleted:
        pool.file_set_changed(created, deleted)
    pool.setting_changes.changed(pool.analyzers, mutation.paths)
    if unowned and pool.on_diagnostics_changed is not None:
        # Nobody analyses these files, or they are gone: their (empty)
        # diagnostics are fresh now (what their importers say is waited for
        # through file_set_changed).
        pool.on_diagnostics_changed(unowned)


def file_set_changed(pool: AnalyzerPool, created: Sequence[str], deleted: Sequence[str]) -> None:
    """Files appeared or went: :func:`~rein.disk.pool_environment.tell_file_set_changed`;
    in a workspace analysed as a whole their importers are asked afresh at
    the next wait (:mod:`rein.disk.file_set_importers`; file by file, the
    verdict asks the importers opened with the change itself)."""
    tell_file_set_changed(pool.root, pool.analyzers, created)
    if not pool.large and not pool.deferring:
        pool.file_set.changed([*created, *deleted])


async def environment_changed(pool: AnalyzerPool, paths: Sequence[str]) -> None:
    """Tell the analyzers the environment changed under them: a
    didChangeWatchedFiles for ``paths`` (manifests, site-packages) and
    their settings again (a didChangeConfiguration) to those that watch
    files, a restart for the others. Each owes a fresh
    publish for its open files afterwards, so the pool's ``wait_idle`` waits."""
    await pool.started()
    # Off the event loop: it waits while the interpreter is asked (up to 10 s).
    installed = await asyncio.to_thread(pool.python_env.changed)  # told now: not again
    await tell_environment_changed(pool.root, pool.analyzers, [*paths, *installed])
