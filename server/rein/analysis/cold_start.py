"""A cold session's first changes, judged file by file.

The analyzer gate's run-start snapshot is the whole workspace's
diagnostics: on a cold start basedpyright analyses every file before it
says it is done, which takes many times the command line's check of the
changed files and their importers. A change that comes before that
snapshot is complete does not wait for it when the source can be asked
file by file (:class:`~rein.harness.gating.gate_types.FileByFileDiagnostics`):

* its baseline is taken as in a workspace analysed file by file: before
  the change, the file and its importers are opened and their diagnostics
  asked for (the file's own baseline; the importers' join ``late``, the
  gate's baseline of files first analysed after the run started);
* the verdict asks for the changed files' and those importers' diagnostics
  afresh and judges them only; it says it is partial (the rest of the
  workspace was not looked at yet), as a verdict of a workspace analysed
  file by file looks no further than the importers either;
* the whole-workspace snapshot goes on in the background and serves the
  verdicts after it completes (the files baselined here keep their own
  baselines: it was taken after their change).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence

from rein.harness.gating.gate_types import FileByFileDiagnostics, ProgressReporter
from rein.harness.gating.waiting import reported
from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, DiagnosticsSource

__all__ = ["PARTIAL", "cold_source", "file_baseline", "verdict_snapshot"]

#: What a cold verdict's detail says.
PARTIAL = (
    "partial: judged on the changed files and their importers (the workspace "
    "analysis had not finished; later verdicts use it)"
)


def cold_source(
    source: DiagnosticsSource, taking: asyncio.Task[None] | None
) -> FileByFileDiagnostics | None:
    """The source to ask file by file while the run-start snapshot is still
    being taken; None when it is taken (or the source cannot be asked so)."""
    if taking is None or taking.done():
        return None
    if isinstance(source, FileByFileDiagnostics) and source.answers_per_file():
        return source
    return None


async def file_baseline(
    cold: FileByFileDiagnostics,
    path: str,
    timeout_s: float,
    progress: ProgressReporter | None,
) -> tuple[DiagnosticsSnapshot, list[str]]:
    """``path`` and its importers opened and analysed before the change:
    their snapshot (stale when an analyzer did not answer in time) and the
    importers."""
    importers = [p for p in await cold.open_with_importers([path]) if p != path]
    snap = await reported(
        cold.snapshot_files([path, *importers], timeout_s),
        progress,
        f"the analyzers: {path} and its importers before its first change",
        1 + len(importers),
    )
    return snap, importers


async def verdict_snapshot(
    cold: FileByFileDiagnostics,
    touched: Collection[str],
    late: Mapping[str, Sequence[Diagnostic]],
    timeout_s: float,
    progress: ProgressReporter | None,
) -> DiagnosticsSnapshot:
    """The changed files' and their baselined importers' diagnostics, asked
    for afresh (stale when an analyzer did not answer in time)."""
    paths = sorted({*touched, *late})
    return await reported(
        cold.snapshot_files(paths, timeout_s),
        progress,
        "the analyzers: the changed files and their importers",
        len(paths),
    )
