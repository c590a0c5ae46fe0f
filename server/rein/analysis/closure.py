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

from collections.abc import Collection, Sequence
from typing import Protocol, runtime_checkable

from rein.harness.ports import DiagnosticsSource

__all__ = ["ImporterClosure", "OpenFilesOnly", "outside_note", "reach_of"]


@runtime_checkable
class ImporterClosure(Protocol):
    """A source that can say which files may depend on some files."""

    async def importer_closure(self, paths: Sequence[str]) -> Collection[str] | None:
        """``paths`` and every file whose analysis may depend on them; None
        when that cannot be known (a changed file is no source it scans)."""
        ...


@runtime_checkable
class OpenFilesOnly(Protocol):
    """A source whose analyzers may check only the files opened for the
    changes (a workspace past ``gates.analyzer.workspaceMaxFiles``)."""

    def analyses_open_files_only(self) -> bool:
        """Whether they do: a file nobody opened is analysed by nobody."""
        ...


async def reach_of(source: DiagnosticsSource, touched: Collection[str]) -> Collection[str] | None:
    """What the changes to ``touched`` can reach, or None when not known
    (nothing is then narrowed)."""
    if not touched or not isinstance(source, ImporterClosure):
        return None
    return await source.importer_closure(sorted(touched))


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
