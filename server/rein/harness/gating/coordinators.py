"""The diagnostics coordinator: fresh diagnostics for a generation.

:class:`DiagnosticsCoordinator` answers "diagnostics for generation >= g"
only with diagnostics the analyzer produced after ``g`` was applied:
event-driven (a change notification for each touched file, then a quiet
period), bounded by a maximum wait; never a fixed sleep. The installs a
manifest's change owes are :mod:`rein.harness.gating.dependencies`'s.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace

import anyio

from rein.harness.gating.analyzer_inputs import AnalyzerInput, analyzer_input, read_not_checked
from rein.harness.gating.gate_types import (
    CoveringDiagnostics,
    DeferredWorkspace,
    EnvironmentChanges,
    ExplainedCoverage,
    FileByFileCounterfactual,
    FileByFileDiagnostics,
    ImporterClosure,
    NeverThere,
    OpenFilesOnly,
    PartialImporters,
    PriorTexts,
    ReadInputs,
    WholeCoverage,
)
from rein.harness.ports import (
    AnsweringDiagnostics,
    CounterfactualDiagnostics,
    DiagnosticsSnapshot,
    DiagnosticsSource,
    DiskDiagnostics,
    DiskErrors,
    Mutation,
    ReleasingDiagnostics,
    SettlingDiagnostics,
)

__all__ = ["DiagnosticsCoordinator"]

log = logging.getLogger(__name__)


class DiagnosticsCoordinator:
    """A DiagnosticsSource that waits for fresh diagnostics.

    Feed it with :meth:`notify_mutation` (a change was applied) and
    :meth:`notify_diagnostics_changed` (the analyzer published for these
    paths). :meth:`snapshot` waits until every path touched up to the
    requested generation has had a diagnostics change after its mutation,
    then until ``quiet_ms`` pass with no further change, at most
    ``max_wait_ms``; past that the snapshot says ``stale=True``.
    """

    def __init__(
        self,
        source: DiagnosticsSource,
        *,
        quiet_ms: int = 150,
        max_wait_ms: int = 5_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.source = source
        self.quiet_s = quiet_ms / 1000.0
        self.max_wait_s = max_wait_ms / 1000.0
        self._clock = clock
        #: path -> generation of its newest change still waiting for diagnostics
        self._waiting: dict[str, int] = {}
        self._last_change = -1e9
        self._changed = anyio.Event()
        self.generation = 0
        #: For the benchmark: when the last awaited notification arrived.
        self.last_fresh_at: float | None = None
        #: path -> when Rein sent a change of it that is not recorded yet
        self._sending: dict[str, float] = {}
        #: paths of ``_sending`` whose diagnostics changed after it was sent
        self._early: set[str] = set()

    def expect(self, paths: Sequence[str]) -> None:
        """Rein is about to send a change of ``paths`` (an editor's
        ``workspace/applyEdit``). The editor may publish their diagnostics
        before its answer arrives, that is before :meth:`notify_mutation`:
        such a change counts as fresh for the mutation that follows."""
        now = self._clock()
        for path in paths:
            self._sending[path] = now
            self._early.discard(path)

    def notify_mutation(self, mutation: Mutation) -> None:
        self.generation = max(self.generation, mutation.generation)
        now = self._clock()
        for path in mutation.paths:
            sent = self._sending.pop(path, None)
            early = path in self._early
            self._early.discard(path)
            if (
                early
                and mutation.origin == "agent"
                and sent is not None
                and now - sent <= self.max_wait_s
            ):
                continue  # the analyzer published after the change was sent
            self._waiting[path] = max(self._waiting.get(path, 0), mutation.generation)

    def notify_diagnostics_changed(
        self, paths: Sequence[str], *, outdated: Sequence[str] = ()
    ) -> None:
        """The analyzer published for ``paths``; ``outdated`` are paths whose
        diagnostics were made for an older text than the one Rein's last
        change left (the editor says which document version): they restart
        the quiet period but are not fresh for that change."""
        now = self._clock()
        self._last_change = now
        for path in paths:
            if self._waiting.pop(path, None) is not None:
                self.last_fresh_at = now
            elif path in self._sending:
                self._early.add(path)
        self._changed.set()
        self._changed = anyio.Event()

    def pending(
        self, generation: int | None = None, paths: Sequence[str] | None = None
    ) -> list[str]:
        return sorted(
            p
            for p, g in self._waiting.items()
            if (generation is None or g <= generation) and (paths is None or p in paths)
        )

    async def wait_fresh(self, generation: int, paths: Sequence[str] | None = None) -> bool:
        """Wait for fresh diagnostics (of ``paths`` only, when given); return
        True when they may be stale."""
        deadline = self._clock() + self.max_wait_s
        while True:
            now = self._clock()
            missing = self.pending(generation, paths)
            quiet_left = self.quiet_s - (now - self._last_change)
            if not missing and quiet_left <= 0:
                return False
            left = deadline - now
            if left <= 0:
                if missing:
                    log.warning("diagnostics may be stale for %s", ", ".join(missing))
                    for path in missing:
                        self._waiting.pop(path, None)
                return bool(missing)
            wait = left if missing else min(left, quiet_left)
            changed = self._changed
            with anyio.move_on_after(wait):
                await changed.wait()

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        target = max(min_generation, self.generation)
        stale = await self.wait_fresh(target, paths)
        inner = await self.source.snapshot(paths, min_generation=target)
        return DiagnosticsSnapshot(
            inner.diagnostics,
            max(target, inner.generation),
            stale or inner.stale,
            blind=inner.blind,
            sources=inner.sources,
            stale_reason=inner.stale_reason,
        )

    # The SettlingDiagnostics of the inner source, when it has them: without
    # them these wait for nothing and tell nobody.

    async def wait_idle(self, timeout_s: float) -> bool:
        inner = self.source
        if isinstance(inner, SettlingDiagnostics):
            return await inner.wait_idle(timeout_s)
        return True

    async def ensure_open(self, paths: Sequence[str], *, importers: bool = True) -> Sequence[str]:
        inner = self.source
        if isinstance(inner, SettlingDiagnostics):
            return await inner.ensure_open(paths, importers=importers)
        return ()

    async def environment_changed(self, paths: Sequence[str]) -> None:
        inner = self.source
        if isinstance(inner, SettlingDiagnostics):
            await inner.environment_changed(paths)

    async def snapshot_with(
        self, texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot | None:
        """The inner source's counterfactual snapshot; None without one."""
        inner = self.source
        if isinstance(inner, CounterfactualDiagnostics):
            return await inner.snapshot_with(texts, paths, timeout_s)
        return None

    async def snapshot_answered(
        self, paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot:
        """The inner source's answers afresh; without them, its snapshot of
        ``paths`` marked stale (nothing was asked again: what it holds may
        be of other texts shown, and a stale answer drops nothing)."""
        inner = self.source
        if isinstance(inner, AnsweringDiagnostics):
            return await inner.snapshot_answered(paths, timeout_s)
        snap = await inner.snapshot(paths)
        why = "the diagnostics source cannot ask its analyzers again"
        return replace(snap, stale=True, stale_reason=why)

    def checked_on_disk(self) -> frozenset[str]:
        """The inner source's analyzers that check copies on disk; none
        without them."""
        inner = self.source
        return inner.checked_on_disk() if isinstance(inner, DiskDiagnostics) else frozenset()

    async def errors_on_disk(
        self,
        overlays: Sequence[Mapping[str, str | None]],
        paths: Sequence[Sequence[str]],
        timeout_s: float,
    ) -> DiskErrors | None:
        """The inner source's copies checked on disk; None without them."""
        inner = self.source
        if isinstance(inner, DiskDiagnostics):
            return await inner.errors_on_disk(overlays, paths, timeout_s)
        return None

    def covers(self, path: str) -> bool:
        """The inner source's coverage; a source that does not say (the
        editor's diagnostics) covers every file but those the analyzers
        read and check as no document (a setting, a manifest:
        :func:`~rein.harness.gating.analyzer_inputs.read_not_checked`), as
        the headless pool does: its change is then told from a module's."""
        inner = self.source
        if isinstance(inner, CoveringDiagnostics):
            return inner.covers(path)
        return not read_not_checked(path)

    def in_whole_snapshot(self, path: str) -> bool:
        """The inner source's answer (see :class:`~rein.harness.gating.
        gate_types.WholeCoverage`); False without one: the editor's
        diagnostics hold what its language servers checked, the open files
        as often as not."""
        inner = self.source
        return inner.in_whole_snapshot(path) if isinstance(inner, WholeCoverage) else False

    def environment_changes(self) -> int:
        """The inner source's count (see :class:`~rein.harness.gating.
        gate_types.EnvironmentChanges`); 0 without one."""
        inner = self.source
        return inner.environment_changes() if isinstance(inner, EnvironmentChanges) else 0

    def environment_watched(self) -> bool:
        """The inner source's answer; False without one (nothing watches)."""
        inner = self.source
        return isinstance(inner, EnvironmentChanges) and inner.environment_watched()

    def why_not_covered(self, path: str) -> str | None:
        """The inner source's reason ``path`` is not covered, if it says."""
        inner = self.source
        return inner.why_not_covered(path) if isinstance(inner, ExplainedCoverage) else None

    def answers_per_file(self) -> bool:
        """The inner source can be asked file by file (see
        :class:`~rein.harness.gating.gate_types.FileByFileDiagnostics`)."""
        inner = self.source
        return isinstance(inner, FileByFileDiagnostics) and inner.answers_per_file()

    async def importer_closure(self, paths: Sequence[str]) -> Collection[str] | None:
        """The inner source's closure of ``paths`` (see
        :class:`~rein.harness.gating.gate_types.ImporterClosure`); None
        (nothing narrowed) without one."""
        inner = self.source
        if isinstance(inner, ImporterClosure):
            return await inner.importer_closure(paths)
        return None

    def never_there(self, path: str) -> bool:
        """The inner source's (see :class:`~rein.harness.gating.gate_types.
        NeverThere`); False (a change) without one."""
        inner = self.source
        return isinstance(inner, NeverThere) and inner.never_there(path)

    def analyzer_input(self, path: str) -> AnalyzerInput:
        """The inner source's (see :class:`~rein.harness.gating.gate_types.
        ReadInputs`); the presets' view without one."""
        inner = self.source
        return inner.analyzer_input(path) if isinstance(inner, ReadInputs) else analyzer_input(path)

    def analyses_open_files_only(self) -> bool:
        """The inner source's analyzers check only the files opened for the
        changes (see :class:`~rein.harness.gating.gate_types.OpenFilesOnly`)."""
        inner = self.source
        return isinstance(inner, OpenFilesOnly) and inner.analyses_open_files_only()

    def workspace_deferred(self) -> bool:
        """The inner source's whole-workspace analysis waits to be asked
        for (see :class:`~rein.harness.gating.gate_types.DeferredWorkspace`)."""
        inner = self.source
        return isinstance(inner, DeferredWorkspace) and inner.workspace_deferred()

    async def analyse_workspace(self) -> None:
        """Start the inner source's whole-workspace analysis, if it waits."""
        inner = self.source
        if isinstance(inner, DeferredWorkspace):
            await inner.analyse_workspace()

    async def open_with_importers(self, paths: Sequence[str]) -> Sequence[str]:
        inner = self.source
        if isinstance(inner, FileByFileDiagnostics):
            return await inner.open_with_importers(paths)
        return ()

    async def snapshot_files(self, paths: Sequence[str], timeout_s: float) -> DiagnosticsSnapshot:
        """The inner source's, without waiting for the quiet period (the
        workspace analysis publishes all along)."""
        inner = self.source
        if isinstance(inner, FileByFileDiagnostics):
            return await inner.snapshot_files(paths, timeout_s)
        return await self.snapshot(paths)

    async def read_texts(self) -> Callable[[str], str | None] | None:
        """The inner source's texts now; None without them."""
        inner = self.source
        if isinstance(inner, FileByFileCounterfactual):
            return await inner.read_texts()
        return None

    async def snapshot_files_with(
        self, texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot:
        """The inner source's; stale (nothing shown) without one."""
        inner = self.source
        if isinstance(inner, FileByFileCounterfactual):
            return await inner.snapshot_files_with(texts, paths, timeout_s)
        return replace(await self.snapshot(paths), stale=True)

    def importers_left(self) -> Sequence[str]:
        """The inner source's importers past its bound, not opened yet."""
        inner = self.source
        return inner.importers_left() if isinstance(inner, PartialImporters) else ()

    async def open_more_importers(self) -> Sequence[str]:
        inner = self.source
        if isinstance(inner, PartialImporters):
            return await inner.open_more_importers()
        return ()

    def text_before_change(self, path: str) -> str | None:
        """The inner source's text of ``path`` before its first change."""
        inner = self.source
        return inner.text_before_change(path) if isinstance(inner, PriorTexts) else None

    def release_opened(self) -> Sequence[str]:
        """The inner source closes the files it opened for validated changes."""
        inner = self.source
        if isinstance(inner, ReleasingDiagnostics):
            return inner.release_opened()
        return ()
