"""The analyzer gate's owed importers: the importers of a cold write whose
baseline was not taken before the write (:func:`~rein.analysis.cold_start.
file_baseline`'s ``importers_later``). Each is asked, with the analyzers
shown every changed file as it was (:func:`~rein.analysis.cold_start.
owed_baselines`), at the verdict that needs it; it stays owed until it is
had (a verdict without it is unverified).

A command's importers are owed theirs too, where its change is judged
file by file (a cold session, or open files only:
:meth:`~rein.analysis.run_baselines.RunBaselines.per_file`; only the
changed files are asked as they were, :mod:`rein.analysis.command_ahead`). A verdict asks the owed importers as
they are with the changed files, and then, with the changed files shown as
they were, only those in which it found errors (``only``): an importer
with none has nothing that could block, whatever its baseline (issue 32
item 7: a command edit's importers were checked twice, as they were and
as they are; on sympy that was most of a command edit's verdict). Such an
importer stays owed: a later verdict that finds errors in it asks then,
from the same texts before the run. Every owed importer, a command's as a
write's, is asked before a later deletion, rename or command, while the
changed files can still be shown as they were (a command is announced
without its paths: it may delete one, and an importer it then breaks must
block, not be "not had"); an importer without errors is so asked at most
once per run, as every one was at its command before."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from rein.analysis.baselines import FileBaseline
from rein.analysis.cold_start import owed_baselines
from rein.analysis.run_texts import reader, users_of_created
from rein.harness.gating.gate_types import FileByFileDiagnostics, ProgressReporter
from rein.harness.ports import Diagnostic, Workspace

__all__ = ["OwedImporters"]


class OwedImporters:
    """The paths owed a baseline, and the asking for them."""

    def __init__(self) -> None:
        self.paths: set[str] = set()
        #: Those the whole-workspace snapshot baselined as before the run
        #: instead (judged: counted among the importers checked).
        self.settled: set[str] = set()
        #: Of ``paths``, a cold command's importers: judged with the
        #: changed files (no verdict on the changed files' own errors
        #: first).
        self.commanded: set[str] = set()

    def owe(self, paths: Collection[str], *, commanded: bool = False) -> None:
        """``paths`` are owed a baseline (a cold write's importers, or a
        cold command's: ``commanded``)."""
        new = set(paths) - self.paths
        self.paths |= new
        if commanded:
            self.commanded |= new

    def discard(self, path: str) -> None:
        self.paths.discard(path)
        self.commanded.discard(path)

    def clear(self) -> None:
        self.paths.clear()
        self.commanded.clear()

    def first(self, touched: Collection[str]) -> set[str]:
        """The owed importers for which a verdict asks the changed files'
        own errors first: a write's (a command's are judged with them)."""
        return self.paths - self.commanded - set(touched)

    async def ask(
        self,
        cold: FileByFileDiagnostics,
        touched: Collection[str],
        files: Mapping[str, FileBaseline],
        late: dict[str, tuple[Diagnostic, ...]],
        workspace: Workspace | None,
        timeout_s: float,
        progress: ProgressReporter | None,
        only: Collection[str] | None = None,
    ) -> dict[str, str]:
        """The owed importers' baselines (those in ``only`` when given)
        join ``late``; returns those not had this time, with why (they stay
        owed: asked again at the next verdict). Called with the gate's
        ``_changing`` held."""
        asked = self.paths if only is None else self.paths & set(only)
        if not asked:
            return {}
        found, unknown = await owed_baselines(
            cold,
            asked,
            touched,
            files,
            reader(workspace),
            lambda paths: users_of_created(touched, files, workspace, paths),
            timeout_s,
            progress,
        )
        late.update(found)
        self.paths -= set(found)
        self.commanded -= set(found)
        return unknown
