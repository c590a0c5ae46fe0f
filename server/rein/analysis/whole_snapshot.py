"""The snapshot a verdict on the whole workspace judges: the changed files
opened (not their importers: an importer opened now would have no baseline
from before the change), the analyzers waited on until they say they are
done (bounded, reported), then everything they say.

Where the analyzers check the open files only (a large workspace), their
being done says nothing of the importers opened with a change: basedpyright
publishes the changed file first and an importer when it gets to it, with no
progress open in between, so the wait ended with the changed file's publish
and the importers' answers were from before the change, or from while the
analyzers were shown its earlier text (a command's baseline). So the
changed files and those ``importers`` are asked afresh first, file by file,
and the snapshot is stale when one is not answered in time."""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import replace

from rein.analysis.reach_verdict import open_files_only
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
    importers: Collection[str] = (),
) -> tuple[DiagnosticsSnapshot, bool]:
    """The snapshot (at ``generation`` or later) and whether the analyzers
    settled within ``timeout_s``; ``importers``: the changed files' importers
    opened with them, asked afresh where the analyzers check open files
    only (see the module)."""
    settled = True
    deadline = time.monotonic() + timeout_s
    stale: str | None = None
    if isinstance(source, SettlingDiagnostics):
        await source.ensure_open(sorted(touched), importers=False)
        asker = open_files_only(source)
        if asker is not None:
            asked = sorted({*touched, *importers})
            fresh = await reported(
                asker.snapshot_files(asked, timeout_s),
                progress,
                "the analyzers: the changed files and their importers",
                len(asked),
            )
            stale = fresh.stale_reason or ("not answered in time" if fresh.stale else None)
        settled = await reported(
            source.wait_idle(max(deadline - time.monotonic(), 0.0)),
            progress,
            "the analyzers: the changed files",
            len(touched),
        )
    snap = await source.snapshot(None, min_generation=generation)
    if stale is not None and not snap.stale:
        snap = replace(snap, stale=True, stale_reason=stale)
    return snap, settled
