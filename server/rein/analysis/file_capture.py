"""A changed file's own baseline, captured just before the run first
changes it: its text, and its diagnostics once the analyzers settled on it
(the file is opened and they are waited on, bounded and reported).

Three ways, by what the source can do:

* while the run-start snapshot is still being taken, a source that can be
  asked file by file opens the file with its importers and asks for them
  (:func:`~rein.analysis.cold_start.file_baseline`);
* a source that settles (:class:`~rein.harness.ports.SettlingDiagnostics`)
  opens the file (and, analysing file by file, its importers) and is
  waited on; a write in open-files mode asks the file alone, its importers
  owed (:mod:`rein.analysis.open_files_first`);
* any other source: the run-start snapshot's entries for the file.

The importers opened with the file are returned with their diagnostics:
the gate adds them to its baseline of files first analysed after the run
started (``late``). A blind answer falls back on the run-start snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from rein.analysis.baselines import FileBaseline
from rein.analysis.cold_start import file_baseline
from rein.analysis.run_texts import exists
from rein.harness.errors import ReinError
from rein.harness.gating.gate_types import FileByFileDiagnostics, ProgressReporter
from rein.harness.gating.waiting import reported
from rein.harness.ports import Diagnostic, DiagnosticsSource, SettlingDiagnostics, Workspace

__all__ = ["Captured", "capture", "text_before"]


@dataclass(frozen=True)
class Captured:
    """A file's baseline and the importers opened with it (path -> their
    diagnostics before the change)."""

    baseline: FileBaseline
    importers: Mapping[str, tuple[Diagnostic, ...]] = field(default_factory=dict)
    #: Importers opened whose baseline is asked later (``importers_later``).
    owed: tuple[str, ...] = ()


async def text_before(path: str, workspace: Workspace) -> tuple[str | None, FileBaseline | None]:
    """``path``'s text before its first change (None: it exists but could
    not be read), and its whole baseline when that text is all of it (no
    such file, or an empty one: there are no diagnostics to ask for)."""
    try:
        text = (await workspace.read_text(path)).text
    except (ReinError, OSError):
        if not await exists(workspace, path):
            return "", FileBaseline(path, "", (), existed=False)
        return None, None
    return text, FileBaseline(path, text, ()) if text == "" else None


async def capture(
    path: str,
    text: str | None,
    source: DiagnosticsSource,
    cold: FileByFileDiagnostics | None,
    run_start: Callable[[str], tuple[Diagnostic, ...]],
    timeout_s: float,
    progress: ProgressReporter | None,
    *,
    importers_later: bool = False,
    own_first: FileByFileDiagnostics | None = None,
) -> Captured:
    """``path``'s baseline before its first change, its ``text`` read
    (:func:`text_before`; see the module docstring); ``cold``: the source
    to ask file by file, decided once the text was read (the run-start
    snapshot may have been taken meanwhile); ``run_start(path)``: its
    entries in the run-start snapshot; ``importers_later``: a cold write's
    importers are opened, not asked (:func:`~rein.analysis.cold_start.
    file_baseline`), and returned ``owed``; ``own_first``: a write in
    open-files mode, the same (:mod:`rein.analysis.open_files_first`)."""
    settled = True
    owed: tuple[str, ...] = ()
    if cold is not None:
        snap, opened = await file_baseline(
            cold, path, timeout_s, progress, importers_later=importers_later
        )
        if importers_later:
            opened, owed = [], tuple(opened)
    elif isinstance(source, SettlingDiagnostics):
        opened = [p for p in await source.ensure_open([path]) or () if p != path]
        if own_first is not None:
            # Opened as always (past maxImporters, left for later rounds);
            # only the file is asked now.
            snap = await reported(
                own_first.snapshot_files([path], timeout_s),
                progress,
                f"the analyzers: {path} before its first change",
                1,
            )
            opened, owed = [], tuple(opened)
        else:
            settled = await reported(
                source.wait_idle(timeout_s),
                progress,
                f"the analyzers: {path} before its first change",
                1 + len(opened),
            )
            snap = await source.snapshot([path, *opened], min_generation=0)
    else:
        return Captured(FileBaseline(path, text, run_start(path), settled))
    if snap.blind is not None:
        return Captured(FileBaseline(path, text, run_start(path), settled))
    importers = {other: tuple(d for d in snap.diagnostics if d.path == other) for other in opened}
    found = tuple(d for d in snap.diagnostics if d.path == path)
    return Captured(FileBaseline(path, text, found, settled and not snap.stale), importers, owed)
