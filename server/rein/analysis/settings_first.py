"""A run's change to the analyzers' settings waits for the run-start
snapshot, so that the snapshot is from before it.

A cold change (:mod:`rein.analysis.cold_start`) is judged against a
snapshot taken after it and corrected as before the run: the changed
files' earlier texts are shown to the analyzers again. That corrects a
module's change, not a setting's: basedpyright and ruff read their
settings from the disk (``pyproject.toml``'s ``[tool.basedpyright]``,
``pyrightconfig.json``, ``ruff.toml``), so a snapshot taken after the
write has every error the new settings add in its "before the run" too,
and the verdict would call them pre-existing. The snapshot is therefore
taken before such a change (and, with ``gates.analyzer.deferWorkspaceAnalysis``,
the deferred one is started for it): the change waits for it, reported
as the verdict's own wait for it is, and bounded by
``gates.analyzer.settleTimeoutMs`` as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from rein.analysis.run_baselines import RunBaselines
from rein.harness.gating.analyzer_inputs import analyzer_input

__all__ = ["snapshot_before_settings"]


async def snapshot_before_settings(baselines: RunBaselines, paths: Sequence[str]) -> None:
    """Before the run first changes one of ``paths`` that the analyzers
    read and that is no module (:func:`~rein.harness.gating.analyzer_inputs.analyzer_input`'s
    ``"read"``: a setting, an environment's file, what resolves an import),
    wait for the run-start snapshot (started now when it was deferred).
    Nothing to wait for once it was taken: :meth:`RunBaselines.ready`
    returns at once."""
    if baselines.snapshot.task is None:
        return
    if any(p not in baselines.files and analyzer_input(p) == "read" for p in paths):
        await baselines.ready()
