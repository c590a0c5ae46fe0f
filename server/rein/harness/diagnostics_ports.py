"""The diagnostics ports: an analyzer finding (:class:`Diagnostic`), what a
source reports at once (:class:`DiagnosticsSnapshot`), the source
(:class:`DiagnosticsSource`) and what a source may offer beyond it: waiting
for its analyzers to settle (:class:`SettlingDiagnostics`), showing them
other texts (:class:`CounterfactualDiagnostics`) and asking again after
them (:class:`AnsweringDiagnostics`), checking copies of the workspace on
disk (:class:`DiskDiagnostics`), closing the files it opened
(:class:`ReleasingDiagnostics`). :mod:`rein.harness.ports` lists them
with the other ports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

__all__ = [
    "AnsweringDiagnostics",
    "CounterfactualDiagnostics",
    "Diagnostic",
    "DiagnosticsSnapshot",
    "DiagnosticsSource",
    "DiskDiagnostics",
    "DiskErrors",
    "ReleasingDiagnostics",
    "SettlingDiagnostics",
]


class Diagnostic(BaseModel):
    """An analyzer finding, 0-based positions as in LSP."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    path: str
    line: int
    character: int = 0
    end_line: int | None = None
    end_character: int | None = None
    #: LSP severity: 1 error, 2 warning, 3 information, 4 hint.
    severity: int = 1
    code: str | None = None
    source: str | None = None
    message: str


@dataclass(frozen=True, slots=True)
class DiagnosticsSnapshot:
    diagnostics: tuple[Diagnostic, ...]
    generation: int
    #: True when the bound on the wait passed before every touched file had
    #: fresh diagnostics: the verdict may be stale, and says so.
    stale: bool = False
    #: Why nobody looked at all (no analyzer runs, the client does not answer
    #: ``rein/diagnostics``); None when the snapshot comes from analyzers. A
    #: blind snapshot makes the analyzer gate "unverified", never "passed".
    blind: str | None = None
    #: The analyzers (or the editor) that produced it, for reports.
    sources: tuple[str, ...] = ()
    #: Why it is stale when the source knows (an analyzer is dead or did
    #: not answer); the verdict says so.
    stale_reason: str | None = None


class DiagnosticsSource(Protocol):
    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot: ...


@runtime_checkable
class SettlingDiagnostics(Protocol):
    """What a DiagnosticsSource may offer beyond :meth:`snapshot` (the
    headless analyzer pool offers all of it; the editor what it can). The
    core checks with ``isinstance`` and does without what is missing."""

    async def wait_idle(self, timeout_s: float) -> bool:
        """Wait until every analyzer says it is done (no work-done or
        pyright progress open, nothing owed for a sent change) and a quiet
        period passed after the last progress end. False on timeout."""
        ...

    async def ensure_open(self, paths: Sequence[str], *, importers: bool = True) -> Sequence[str]:
        """Have the analyzers analyse these files (open them), so that after
        :meth:`wait_idle` a snapshot covers them. Paths that do not exist or
        that no analyzer owns are ignored. A source that analyses file by
        file may also open the files that import them (``importers``).
        Returns the paths opened now that were not analysed before, whose
        diagnostics were not in earlier snapshots."""
        ...

    async def environment_changed(self, paths: Sequence[str]) -> None:
        """The environment changed under the analyzers (a dependency install:
        ``paths`` are the manifests and the environment's site-packages).
        Tell them (didChangeWatchedFiles, or a restart when they do not
        watch files); the caller then waits with :meth:`wait_idle`."""
        ...


@runtime_checkable
class CounterfactualDiagnostics(Protocol):
    """A source that can show its analyzers other texts for some files
    without writing them (the headless pool does): the analyzer gate asks
    it whether an error in a file the run did not change is there without
    the run's changes too."""

    async def snapshot_with(
        self, texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot | None:
        """The diagnostics of ``paths`` while the analyzers see ``texts``
        (path -> text) instead of those files' contents, after they settle;
        then the real contents are shown again (and settled). None when the
        analyzers did not settle within ``timeout_s``."""
        ...


@runtime_checkable
class AnsweringDiagnostics(Protocol):
    """A :class:`CounterfactualDiagnostics` source that can say what its
    analyzers answer for some files once they analysed them again with the
    texts as they are (the headless pool: after
    :meth:`~CounterfactualDiagnostics.snapshot_with` each file asked is
    parsed afresh). The
    analyzer gate asks it to confirm an error in a file the run did not
    change: basedpyright's inference over circular imports depends on the
    order it checks files in, and an error it reports in one order and not
    in another, with nothing changed, is not the run's."""

    async def snapshot_answered(
        self, paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot:
        """The diagnostics of ``paths`` once each was answered for its text
        now, after what was last shown; stale when one was not answered
        within ``timeout_s``."""
        ...


@dataclass(frozen=True, slots=True)
class DiskErrors:
    """What :meth:`DiskDiagnostics.errors_on_disk` found: for each copy of
    the workspace, in the order asked, the errors in the files asked."""

    errors: tuple[tuple[Diagnostic, ...], ...]


@runtime_checkable
class DiskDiagnostics(Protocol):
    """A source whose analyzers can also check copies of the workspace on
    disk, as their command lines do (the headless pool: ``basedpyright``
    beside its language server). The analyzer gate asks it where a file the
    run deleted or renamed away cannot be shown in memory as it was: the
    analyzers resolve imports from the disk."""

    def checked_on_disk(self) -> frozenset[str]:
        """The analyzers (:attr:`Diagnostic.source`) whose command lines
        check the copies: only their findings are asked about."""
        ...

    async def errors_on_disk(
        self,
        overlays: Sequence[Mapping[str, str | None]],
        paths: Sequence[Sequence[str]],
        timeout_s: float,
    ) -> DiskErrors | None:
        """For each overlay (path -> text, None: no such file), the errors
        the command lines report in its ``paths`` (a list per overlay, in
        the order they are checked) of a copy of the workspace with the
        overlay applied, the copies checked side by side. None when a copy
        could not be checked within ``timeout_s``, or not every file asked
        was checked: nothing is known then."""
        ...


@runtime_checkable
class ReleasingDiagnostics(Protocol):
    """A source that opened files for the changes it was asked about (the
    headless pool on a large project opens a changed file's importers) and
    can close them again once those changes are validated, so that a long
    session's later changes do not make the analyzers re-check every file
    an earlier change needed."""

    def release_opened(self) -> Sequence[str]:
        """Close the files opened for validated changes; returns them. A
        later :meth:`SettlingDiagnostics.ensure_open` opens what it needs
        again (and reports it as newly opened)."""
        ...
