"""How the analyzer pool tells its analyzers of what changed besides their
open documents: the environment under them (an install: a
didChangeWatchedFiles for the changed paths and their settings again to
those that watch files, a restart for the others), files that appeared or
went (:func:`tell_file_set_changed`), and a changed setting it reads but is
not shown as a document (:class:`SettingChanges`: a didChangeWatchedFiles
event where it watches the file, a restart where it reads it only at start).

clangd (14 here) registers no file watching: it read ``compile_flags.txt``
when it first built a file and kept the flags. A run that changed them so
that an unchanged ``main.c`` no longer compiled kept ``main.c``'s start-up
diagnostics, and the verdict passed (review23; a re-pull or republish
does not re-read them, a restart does). ruff, basedpyright and gopls watch
their settings' files (their registered globs, :mod:`rein.disk.watch_globs`)
but were told only of created and deleted files: a run's
``select = ["ALL"]`` or ``typeCheckingMode`` change was never seen
(fix26)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types as lsp

from rein.disk.analyzer_server import _Analyzer
from rein.disk.owed_refresh import INSTALL_GRACE_S
from rein.disk.python_environment import PythonEnvironment
from rein.disk.ruff_extends import RuffExtends
from rein.harness.gating.analyzer_inputs import CODE_EXTENSIONS, custom_analyzers, never_read

__all__ = [
    "READ_AT_START",
    "SettingChanges",
    "tell_environment_changed",
    "tell_file_set_changed",
    "tell_installed",
]

log = logging.getLogger(__name__)

#: Per preset that watches no file: the settings (file names) it reads
#: only at start. clangd's: its compilation database and flags, its
#: project configuration and clang-tidy's (clangd.llvm.org/config,
#: /design/compile-commands).
READ_AT_START: dict[str, frozenset[str]] = {
    "clangd": frozenset({"compile_flags.txt", "compile_commands.json", ".clangd", ".clang-tidy"}),
    "typescript": frozenset({"tsconfig.json", "jsconfig.json"}),
}


async def tell_environment_changed(
    root: Path, analyzers: Sequence[_Analyzer], paths: Sequence[str]
) -> None:
    """Each analyzer told owes a fresh publish for its open files afterwards
    (it is refreshed), so the pool's ``wait_idle`` waits for it."""
    # A folder (site-packages) gained or lost packages: a structural
    # change; a file (a manifest, a lock file) changed in place.
    changes = [
        lsp.FileEvent(
            uri=(root / p).as_uri(),
            type=lsp.FileChangeType.Created if (root / p).is_dir() else lsp.FileChangeType.Changed,
        )
        for p in paths
    ]
    for analyzer in list(analyzers):
        if not analyzer.alive or analyzer.client is None:
            continue
        if analyzer.watches_files:
            analyzer.client.workspace_did_change_watched_files(
                lsp.DidChangeWatchedFilesParams(changes=changes)
            )
            if analyzer.settings:
                # basedpyright resolves imports anew only when its
                # settings change: a changed manifest alone leaves an
                # install's packages unresolved.
                analyzer.client.workspace_did_change_configuration(
                    lsp.DidChangeConfigurationParams(settings=analyzer.settings)
                )
            analyzer.refresh(INSTALL_GRACE_S)
        else:
            await analyzer.restart()


async def tell_installed(
    root: Path, analyzers: Sequence[_Analyzer], environment: PythonEnvironment
) -> None:
    """Something was installed into the analyzers' environment since it was
    last looked at (its site folders changed: a command's ``pip install``,
    inside the workspace or out of it): told as an install is
    (:func:`tell_environment_changed`)."""
    changed = await asyncio.to_thread(environment.changed)
    if changed:
        log.info("the Python environment changed (%s): the analyzers are told", ", ".join(changed))
        await tell_environment_changed(root, analyzers, changed)


def tell_file_set_changed(
    root: Path, analyzers: Sequence[_Analyzer], created: Sequence[str]
) -> None:
    """Files appeared or went (a write of a new file, a delete, a rename):
    what other files import resolves differently now. Each analyzer that
    watches files is told of the new ones (the deleted ones it heard of
    with their close) and owes a fresh analysis of its open files (pulled
    again, or a republish awaited), so the next verdict waits for what it
    makes of the importers, not only of the changed files."""
    events = [
        lsp.FileEvent(uri=(root / p).as_uri(), type=lsp.FileChangeType.Created) for p in created
    ]
    for analyzer in analyzers:
        if not analyzer.alive or analyzer.client is None or not analyzer.watches_files:
            continue
        if events:
            analyzer.client.workspace_did_change_watched_files(
                lsp.DidChangeWatchedFilesParams(changes=events)
            )
        analyzer.refresh()


class SettingChanges:
    """A changed setting an analyzer reads but is not shown as a document
    (``pyproject.toml``, ``pyrightconfig.json``, ``go.mod``,
    ``compile_flags.txt``), told the way it takes it: a
    ``workspace/didChangeWatchedFiles`` event when one of its registered
    watchers wants the path (ruff, basedpyright, gopls; their open files
    are then owed a fresh analysis), else a restart when it reads the
    setting only at start (:data:`READ_AT_START`: noted as the change is
    heard, done before the pool is next waited for, its ``wait_idle``), so
    a verdict sees what they make of every open file with the new
    settings. No preset re-reads a file on ``workspace/didChangeConfiguration``
    alone (that sends the client's settings, not the files').

    A file ruff's settings ``extend`` (``extends``, any name:
    :mod:`rein.disk.ruff_extends`) is a setting too; an analyzer whose
    watchers do not want it (ruff's want its settings' own names) is told
    instead that the settings files naming it changed, which it reloads
    with their chains."""

    def __init__(self, extends: RuffExtends | None = None) -> None:
        self._owed: set[str] = set()
        self._extends = extends

    def changed(self, analyzers: Sequence[_Analyzer], paths: Sequence[str]) -> None:
        """``paths`` changed: tell each analyzer that watches one of them it
        does not own, and note those owed a restart."""
        named = self._extends.named() if self._extends is not None else {}
        if self._extends is not None:
            self._extends.changed(paths)
        paths = [p for p in paths if p in named or _setting(p, custom=True)]
        if not paths:
            return  # sources only (the usual change): their documents are sent
        for analyzer in analyzers:
            if not analyzer.alive or analyzer.client is None:
                continue
            custom = custom_analyzers([analyzer.spec.name])
            read = [
                p
                for p in paths
                if not analyzer.owns(p) and (p in named or _setting(p, custom=custom))
            ]
            if not read:
                continue  # an ordinary change: its documents are sent
            root = analyzer.pool.root
            kinds = {p: _kind(root, p) for p in read}
            watches = analyzer.registrations.watches
            events = {p: kind for p, kind in kinds.items() if watches(root, p, kind)}
            # What an extend names, to one not watching it: the settings naming it changed.
            for p in read:
                for naming in named.get(p, ()) if p not in events else ():
                    if watches(root, naming, lsp.FileChangeType.Changed):
                        events.setdefault(naming, lsp.FileChangeType.Changed)
            told = [p for p in read if p in events or set(named.get(p, ())) & events.keys()]
            if events:
                changes = [
                    lsp.FileEvent(uri=(root / p).as_uri(), type=k) for p, k in events.items()
                ]
                analyzer.client.workspace_did_change_watched_files(
                    lsp.DidChangeWatchedFilesParams(changes=changes)
                )
                analyzer.refresh()
            untold = {p.rsplit("/", 1)[-1] for p in read if p not in told}
            if untold & READ_AT_START.get(analyzer.spec.name, frozenset()):
                self._owed.add(analyzer.spec.name)

    async def apply(self, analyzers: Sequence[_Analyzer]) -> None:
        """Restart the analyzers owed one (each reopens the pool's files)."""
        owed, self._owed = self._owed, set()
        for analyzer in analyzers:
            if analyzer.spec.name in owed and analyzer.alive:
                await analyzer.restart()


def _setting(path: str, *, custom: bool) -> bool:
    """``path`` may be a setting an analyzer reads: read by one
    (:func:`~rein.harness.gating.analyzer_inputs.never_read`) and no
    source of any language (another analyzer's document: basedpyright's
    ``**`` watcher would have it re-pull its files for every ``.c`` file)."""
    name = path.rsplit("/", 1)[-1]
    suffix = name[name.rfind(".") :].lower() if "." in name.lstrip(".") else ""
    if not custom and not suffix and name.isidentifier():
        # A preset's settings are named files (pyproject.toml, go.mod,
        # .clangd): a bare identifier is a folder or a command's temporary
        # file (sed -i's sedXXXXXX), which the file set's own notices cover;
        # telling basedpyright's ``**`` watcher of it re-pulled every open
        # file at each sed.
        return False
    return not never_read(path, custom=custom) and suffix not in CODE_EXTENSIONS


def _kind(root: Path, path: str) -> lsp.FileChangeType:
    """A setting's change: changed while it is there (a new one too: the
    servers reload on any event of their settings' files), else deleted."""
    return lsp.FileChangeType.Changed if (root / path).exists() else lsp.FileChangeType.Deleted
