"""How the analyzer pool tells its analyzers of what changed besides their
open documents: the environment under them (an install: a
didChangeWatchedFiles for the changed paths and their settings again to
those that watch files, a restart for the others), files that appeared or
went (:func:`tell_file_set_changed`), and a setting an analyzer reads only
when it starts (:class:`SettingsRestarts`: a restart).

clangd (14 here) registers no file watching: it read ``compile_flags.txt``
when it first built a file and kept the flags. A run that changed them so
that an unchanged ``main.c`` no longer compiled kept ``main.c``'s start-up
diagnostics, and the verdict passed (review23; a re-pull or republish
does not re-read them, a restart does)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types as lsp

from rein.disk.analyzer_server import _Analyzer
from rein.disk.owed_refresh import INSTALL_GRACE_S

__all__ = ["READ_AT_START", "SettingsRestarts", "tell_environment_changed", "tell_file_set_changed"]

#: Per preset that watches no file: the settings (file names) it reads
#: only at start. clangd's: its compilation database and flags, its
#: project configuration and clang-tidy's (clangd.llvm.org/config,
#: /design/compile-commands).
READ_AT_START: dict[str, frozenset[str]] = {
    "clangd": frozenset({"compile_flags.txt", "compile_commands.json", ".clangd", ".clang-tidy"}),
}
_ALL_READ_AT_START: frozenset[str] = frozenset().union(*READ_AT_START.values())


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


class SettingsRestarts:
    """Analyzers owed a restart: a setting they read only at start
    (:data:`READ_AT_START`) changed. Noted as the change is heard (no
    wait there), done before the pool is next waited for (its
    ``wait_idle``), so a verdict sees what they make of every open file with
    the new settings."""

    def __init__(self) -> None:
        self._owed: set[str] = set()

    def changed(self, analyzers: Sequence[_Analyzer], paths: Sequence[str]) -> None:
        """``paths`` changed: note each analyzer that reads one of them only
        at start and is not told of files (it does not watch them)."""
        names = {p.rsplit("/", 1)[-1] for p in paths} & _ALL_READ_AT_START
        if not names:
            return  # an ordinary change: nothing to look at
        for analyzer in analyzers:
            reads = READ_AT_START.get(analyzer.spec.name, frozenset())
            if analyzer.alive and not analyzer.watches_files and names & reads:
                self._owed.add(analyzer.spec.name)

    async def apply(self, analyzers: Sequence[_Analyzer]) -> None:
        """Restart the analyzers owed one (each reopens the pool's files)."""
        owed, self._owed = self._owed, set()
        for analyzer in analyzers:
            if analyzer.spec.name in owed and analyzer.alive:
                await analyzer.restart()
