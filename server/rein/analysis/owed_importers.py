"""The analyzer gate's owed importers: the importers of a cold write whose
baseline was not taken before the write (:func:`~rein.analysis.cold_start.
file_baseline`'s ``importers_later``). Each is asked, with the analyzers
shown every changed file as it was (:func:`~rein.analysis.cold_start.
owed_baselines`), at the verdict that needs it; it stays owed until it is
had (a verdict without it is unverified)."""

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

    async def ask(
        self,
        cold: FileByFileDiagnostics,
        touched: Collection[str],
        files: Mapping[str, FileBaseline],
        late: dict[str, tuple[Diagnostic, ...]],
        workspace: Workspace | None,
        timeout_s: float,
        progress: ProgressReporter | None,
    ) -> dict[str, str]:
        """The owed importers' baselines join ``late``; returns those not
        had this time, with why (they stay owed: asked again at the next
        verdict). Called with the gate's ``_changing`` held."""
        found, unknown = await owed_baselines(
            cold,
            self.paths,
            touched,
            files,
            reader(workspace),
            lambda paths: users_of_created(touched, files, workspace, paths),
            timeout_s,
            progress,
        )
        late.update(found)
        self.paths -= set(found)
        return unknown
