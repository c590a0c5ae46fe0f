"""The snapshot a verdict on the whole workspace judges: the changed files
opened (not their importers: an importer opened now would have no baseline
from before the change), the analyzers waited on until they say they are
done (bounded, reported), then everything they say."""

from __future__ import annotations

from collections.abc import Collection

from rein.harness.gating.gate_types import ProgressReporter
from rein.harness.gating.waiting import reported
from rein.harness.ports import DiagnosticsSnapshot, DiagnosticsSource, SettlingDiagnostics

__all__ = ["whole_snapshot"]


async def whole_snapshot(
    source: DiagnosticsSource,
    touched: Collection[str],
    generation: int,
    timeout_s: float,
    progress: ProgressReporter | None,
) -> tuple[DiagnosticsSnapshot, bool]:
    """The snapshot (at ``generation`` or later) and whether the analyzers
    settled within ``timeout_s``."""
    settled = True
    if isinstance(source, SettlingDiagnostics):
        await source.ensure_open(sorted(touched), importers=False)
        settled = await reported(
            source.wait_idle(timeout_s), progress, "the analyzers: the changed files", len(touched)
        )
    return await source.snapshot(None, min_generation=generation), settled
