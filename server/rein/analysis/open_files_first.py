"""A write in open-files mode (a workspace past ``workspaceMaxFiles``: the
analyzers check only the files opened for the changes) is judged as a cold
write in workspace mode (:mod:`rein.analysis.cold_start`):

* before the write, the file and its importers are opened, and the file's
  own diagnostics alone are asked (its text is captured then: its baseline
  is still from before its first change); the importers are owed a
  baseline (:mod:`rein.analysis.owed_importers`), asked at the verdict that
  needs them with the analyzers shown the changed files as they were;
* the verdict asks the changed files first and blocks on their own new
  errors at once, naming the importers not checked yet
  (:func:`~rein.analysis.cold_start.changed_files_first`); one that does not
  block asks the owed baselines, then judges every open file as before. An
  owed importer whose baseline is not had is not judged and the verdict is
  unverified, never a pass.

On sympy the write of ``printing/latex.py`` waited 22.6 s for its 30
importers before the write, and its verdict 40.9 s for them again: a
verdict that blocks on the file's own errors needs neither.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from rein.analysis.baselines import FileBaseline
from rein.analysis.cold_start import gone_files
from rein.analysis.reach_verdict import open_files_only
from rein.harness.gating.gate_types import FileByFileCounterfactual, FileByFileDiagnostics
from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, DiagnosticsSource

__all__ = ["ByPath", "own_first"]


async def own_first(
    source: DiagnosticsSource,
    writes: bool,
    files: Mapping[str, FileBaseline],
    now: Callable[[str], Awaitable[str | None]],
) -> FileByFileDiagnostics | None:
    """The source to ask a write's own file first (open-files mode, the
    source can show the analyzers a file as it was, and no file the run
    changed is gone: else the importers are asked before the write)."""
    opened = open_files_only(source)
    if (
        writes
        and isinstance(opened, FileByFileCounterfactual)
        and not await gone_files(files, files, now)
    ):
        return opened
    return None


class ByPath:
    """A snapshot's diagnostics by path, grouped once per snapshot."""

    def __init__(self) -> None:
        self._of: DiagnosticsSnapshot | None = None
        self._paths: dict[str, list[Diagnostic]] = {}

    def get(self, snapshot: DiagnosticsSnapshot | None, path: str) -> Sequence[Diagnostic]:
        if snapshot is None:
            return ()
        if self._of is not snapshot:
            self._paths = {}
            for d in snapshot.diagnostics:
                self._paths.setdefault(d.path, []).append(d)
            self._of = snapshot
        return self._paths.get(path, ())
