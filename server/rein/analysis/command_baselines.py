"""Baselines for the files a command changed.

A tool's change is announced before it is applied: the analyzer gate takes
the file's baseline then (its text, its diagnostics, its importers opened
with it, in a workspace analysed file by file). A command's (``sed -i``, a
code generator, a formatter) is seen only after it happened. In a workspace
analysed as a whole the run-start snapshot holds every file's diagnostics
before the command; in one analysed file by file (over
``gates.analyzer.workspaceMaxFiles``) it holds nothing for a file nobody had
open, so every old error of the changed file would block and its importers
would never be looked at.

So at the verdict, each changed file without a baseline whose text before
the change the source still knows (:class:`~rein.harness.gating.gate_types.
PriorTexts`: the headless pool read every file at start) gets one as a tool
edit would have: the file and its importers are opened, and their
diagnostics are taken with the analyzers shown the changed files as they
were before the run (:class:`~rein.harness.ports.CounterfactualDiagnostics`,
in memory: nothing is written). The importers did not change, so those are
their diagnostics before the run. When that cannot be done (the analyzers
did not settle) the file keeps no baseline: its errors all block, never a
pass on an unknown baseline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping

from rein.analysis.baselines import FileBaseline
from rein.harness.gating.gate_types import PriorTexts
from rein.harness.ports import (
    CounterfactualDiagnostics,
    Diagnostic,
    DiagnosticsSource,
    SettlingDiagnostics,
)

__all__ = ["baselines_after_the_fact"]


async def baselines_after_the_fact(
    source: DiagnosticsSource,
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    late: Mapping[str, tuple[Diagnostic, ...]],
    now: Callable[[str], Awaitable[str | None]],
    timeout_s: float,
) -> tuple[dict[str, FileBaseline], dict[str, tuple[Diagnostic, ...]]]:
    """Baselines for the changed files in ``touched`` that have none in
    ``files``, and the diagnostics before the run of their importers opened
    now (for ``late``); empty when the source cannot tell (see the module
    doc). ``now`` reads a file's text now ("" or None: gone)."""
    if not (
        isinstance(source, PriorTexts)
        and isinstance(source, SettlingDiagnostics)
        and isinstance(source, CounterfactualDiagnostics)
    ):
        return {}, {}
    before: dict[str, str] = {}
    for path in sorted(touched):
        if path not in files:
            text = source.text_before_change(path)
            if text is not None:
                before[path] = text
    if not before:
        return {}, {}
    opened = [
        p
        for p in await source.ensure_open(sorted(before))
        if p not in touched and p not in files and p not in late
    ]
    # Every changed file as it was before the run: those changed by tools
    # too (a file the run deleted cannot be shown: it stays deleted).
    shown = dict(before)
    for path in sorted(touched):
        baseline = files.get(path)
        was = baseline.text_before_the_run if baseline is not None else None
        if was and await now(path):
            shown[path] = was
    snap = await source.snapshot_with(shown, [*before, *opened], timeout_s)
    if snap is None or snap.blind is not None or snap.stale:
        return {}, {}
    found: dict[str, list[Diagnostic]] = {}
    for d in snap.diagnostics:
        found.setdefault(d.path, []).append(d)
    baselines = {p: FileBaseline(p, text, tuple(found.get(p, ()))) for p, text in before.items()}
    return baselines, {p: tuple(found.get(p, ())) for p in opened}
