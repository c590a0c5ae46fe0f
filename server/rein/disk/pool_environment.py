"""How the analyzer pool tells its analyzers that the environment changed
under them (an install): a didChangeWatchedFiles for the changed paths and
their settings again to those that watch files, a restart for the others."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types as lsp

from rein.disk.analyzer_server import _Analyzer
from rein.disk.owed_refresh import INSTALL_GRACE_S

__all__ = ["tell_environment_changed"]


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
