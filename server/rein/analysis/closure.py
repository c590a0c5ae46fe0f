"""What a run's changes can reach: the changed files and their importers,
transitively. A file's diagnostics depend only on its text, what it
imports (transitively) and the environment, so a file outside that closure
cannot have a new error from the run: its errors are pre-existing without
asking the analyzers about the workspace as it was before the run
(:func:`~rein.analysis.cold_start.before_the_run`, which shows them every
changed file's earlier text and waits for them to analyse the workspace
twice). The source knows the closure when it scans imports
(:class:`ImporterClosure`: the headless pool, Python files only); else
nothing is narrowed."""

from __future__ import annotations

from collections.abc import Collection

from rein.harness.gating.gate_types import EnvironmentChanges, ImporterClosure, OpenFilesOnly
from rein.harness.ports import DiagnosticsSource

__all__ = [
    "ImporterClosure",
    "OpenFilesOnly",
    "environment_changes",
    "environment_watched",
    "outside_note",
    "reach_of",
]


async def reach_of(
    source: DiagnosticsSource, touched: Collection[str], environment_changed: bool
) -> Collection[str] | None:
    """What the changes to ``touched`` can reach, or None when not known
    (nothing is then narrowed). Not known once the run changed the
    analyzers' environment (``environment_changed``: an install, which can
    break any importer of the package, changed or not)."""
    if environment_changed or not touched or not isinstance(source, ImporterClosure):
        return None
    return await source.importer_closure(sorted(touched))


def environment_changes(source: DiagnosticsSource) -> int:
    """How many changes to the analyzers' environment ``source`` has seen
    (:class:`~rein.harness.gating.gate_types.EnvironmentChanges`; 0 when it
    does not say)."""
    return source.environment_changes() if isinstance(source, EnvironmentChanges) else 0


def environment_watched(source: DiagnosticsSource) -> bool:
    """Whether ``source`` watches its analyzers' environment and counts
    its changes (packages added or removed, ``.pth`` files written; False
    when it does not say: the editor's diagnostics)."""
    return isinstance(source, EnvironmentChanges) and source.environment_watched()


def outside_note(outside: Collection[str]) -> str:
    """What a verdict's detail says of the files judged pre-existing for
    being out of the changes' reach ("" when none was)."""
    if not outside:
        return ""
    return (
        f"{len(outside)} file(s) with errors outside what the changes can reach "
        "(their importers, transitively) judged pre-existing without asking "
        "the analyzers about the workspace before the run"
    )
