"""The DiagnosticsSource port: settable and settling diagnostics, a tiny
line analyzer, and a tracked workspace wired to a diagnostics coordinator."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import (
    Diagnostic,
    DiagnosticsSnapshot,
    DiskErrors,
    Mutation,
)
from rein.harness.tools import ToolEnvironment
from tests.fakes.workspace import FakeWorkspace


class FakeDiagnostics:
    """A DiagnosticsSource answering from a settable list."""

    def __init__(self, diagnostics: Sequence[Diagnostic] = ()) -> None:
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self.generation = 0
        self.calls: list[tuple[Sequence[str] | None, int]] = []
        self.stale = False

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        self.calls.append((paths, min_generation))
        found = [d for d in self.diagnostics if paths is None or d.path in paths]
        return DiagnosticsSnapshot(tuple(found), max(self.generation, min_generation), self.stale)


class SettlingFakeDiagnostics(FakeDiagnostics):
    """A FakeDiagnostics that also offers SettlingDiagnostics and records
    every call in ``log`` ("ensure_open a.py", "wait_idle", "snapshot a.py",
    "environment_changed pyproject.toml"). ``idle`` is what wait_idle
    answers; ``blind`` makes every snapshot one nobody looked at; and
    ``on_environment_changed`` lets a test change what the analyzer sees
    (the install made an import resolvable)."""

    def __init__(
        self, diagnostics: Sequence[Diagnostic] = (), *, sources: Sequence[str] = ()
    ) -> None:
        super().__init__(diagnostics)
        self.log: list[str] = []
        self.idle = True
        self.blind: str | None = None
        self.sources = tuple(sources)
        self.on_environment_changed: Callable[[], None] | None = None
        #: File by file (a large workspace): only opened files are analysed,
        #: and opening a file opens its ``importers`` too.
        self.file_by_file = False
        self.importers: dict[str, list[str]] = {}
        self.opened: set[str] = set()
        #: What snapshot_with answers (None: it cannot tell).
        self.counterfactual: list[Diagnostic] | None = None
        #: Why the counterfactual answer is stale (an analyzer did not answer
        #: for a file within its bound: what it holds of it is from before
        #: the question, with the run's changes), or None: fresh.
        self.counterfactual_stale: str | None = None
        #: File suffixes no analyzer of this source covers (".ts").
        self.uncovered: set[str] = set()
        #: Why a suffix is not covered (".go": "gopls was not found").
        self.why_uncovered: dict[str, str] = {}
        #: Files the whole-workspace snapshot does not hold for every
        #: analyzer (WholeCoverage: ruff past start-up's maxFiles).
        self.not_in_whole: set[str] = set()
        #: File by file, at most this many importers of a file are opened
        #: with it; the rest are left for open_more_importers.
        self.max_importers: int | None = None
        self.left: list[str] = []

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        self.log.append("snapshot " + (" ".join(paths) if paths is not None else "*"))
        snap = await super().snapshot(paths, min_generation=min_generation)
        found = () if self.blind else snap.diagnostics
        if self.file_by_file:
            found = tuple(d for d in found if d.path in self.opened)
        return DiagnosticsSnapshot(
            found, snap.generation, snap.stale, blind=self.blind, sources=self.sources
        )

    async def wait_idle(self, timeout_s: float) -> bool:
        self.log.append("wait_idle")
        return self.idle

    async def ensure_open(self, paths: Sequence[str], *, importers: bool = True) -> Sequence[str]:
        self.log.append("ensure_open " + " ".join(paths))
        opened: list[str] = []
        for path in paths:
            more = self.importers.get(path, []) if importers and self.file_by_file else []
            if self.max_importers is not None:
                self.left += [p for p in more[self.max_importers :] if p not in self.left]
                more = more[: self.max_importers]
            for target in [path, *more]:
                if target not in self.opened:
                    self.opened.add(target)
                    opened.append(target)
        return opened

    def covers(self, path: str) -> bool:
        return not any(path.endswith(suffix) for suffix in self.uncovered)

    def in_whole_snapshot(self, path: str) -> bool:
        return path not in self.not_in_whole

    def why_not_covered(self, path: str) -> str | None:
        return next((w for s, w in self.why_uncovered.items() if path.endswith(s)), None)

    def importers_left(self) -> Sequence[str]:
        return [p for p in self.left if p not in self.opened]

    async def open_more_importers(self) -> Sequence[str]:
        batch = list(self.importers_left())[: self.max_importers or 0]
        self.log.append("open_more_importers " + " ".join(batch))
        self.opened.update(batch)
        return batch

    def release_opened(self) -> Sequence[str]:
        """File by file, every opened file is closed (what the pool does once
        the changes they were opened for are validated)."""
        self.log.append("release_opened")
        if not self.file_by_file:
            return ()
        closed, self.opened = sorted(self.opened), set()
        self.left = []
        return closed

    async def snapshot_with(
        self, texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot | None:
        """What the analyzer would say with ``texts`` shown: ``counterfactual``
        (a test sets it), limited to ``paths``; None when it is unset."""
        self.log.append("snapshot_with " + " ".join(sorted(texts)) + " -> " + " ".join(paths))
        if self.counterfactual is None:
            return None
        found = tuple(d for d in self.counterfactual if d.path in paths)
        stale = self.counterfactual_stale
        return DiagnosticsSnapshot(
            found,
            self.generation,
            sources=self.sources,
            stale=stale is not None,
            stale_reason=stale,
        )

    async def environment_changed(self, paths: Sequence[str]) -> None:
        self.log.append("environment_changed " + " ".join(paths))
        if self.on_environment_changed is not None:
            self.on_environment_changed()


class WatchingFakeDiagnostics(SettlingFakeDiagnostics):
    """A SettlingFakeDiagnostics that watches its analyzers' environment
    (EnvironmentChanges, as the headless pool) and knows the paths that
    never were files (NeverThere: a command's temporary file). A test sets
    ``environment`` (the changes seen there), ``watching`` and
    ``temporary``."""

    def __init__(self, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(diagnostics)
        self.environment = 0
        self.watching = True
        self.temporary: set[str] = set()

    def environment_changes(self) -> int:
        return self.environment

    def environment_watched(self) -> bool:
        return self.watching

    def never_there(self, path: str) -> bool:
        return path in self.temporary


class AnsweringFakeDiagnostics(SettlingFakeDiagnostics):
    """A SettlingFakeDiagnostics that also asks again after a counterfactual
    (AnsweringDiagnostics, as the headless pool): ``answered`` is what the
    analyzers report for the files asked afresh, ``answered_stale`` and
    ``answered_blind`` make that answer stale or blind; ``asked_again``
    records the paths of each question."""

    def __init__(self, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(diagnostics)
        self.answered: list[Diagnostic] = []
        self.answered_stale = False
        #: Why nobody looked at the files asked afresh (None: they did).
        self.answered_blind: str | None = None
        self.asked_again: list[list[str]] = []

    async def snapshot_answered(
        self, paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot:
        self.asked_again.append(list(paths))
        found = tuple(d for d in self.answered if d.path in paths)
        return DiagnosticsSnapshot(
            found, self.generation, self.answered_stale, blind=self.answered_blind
        )


class DiskFakeDiagnostics(AnsweringFakeDiagnostics):
    """An AnsweringFakeDiagnostics whose analyzers also check copies of the
    workspace on disk (DiskDiagnostics, as the headless pool): ``on_disk``
    is the errors of each copy asked, in order (None: no answer), limited
    to the paths asked; ``disk_asked`` records each question's overlays and
    paths."""

    def __init__(self, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(diagnostics)
        self.checked: frozenset[str] = frozenset({"basedpyright"})
        self.on_disk: list[list[Diagnostic]] | None = None
        self.disk_asked: list[tuple[list[dict[str, str | None]], list[list[str]]]] = []

    def checked_on_disk(self) -> frozenset[str]:
        return self.checked

    async def errors_on_disk(
        self,
        overlays: Sequence[Mapping[str, str | None]],
        paths: Sequence[Sequence[str]],
        timeout_s: float,
    ) -> DiskErrors | None:
        self.disk_asked.append(([dict(o) for o in overlays], [list(p) for p in paths]))
        if self.on_disk is None:
            return None
        return DiskErrors(
            tuple(
                tuple(d for d in copy if d.path in asked)
                for copy, asked in zip(self.on_disk, paths, strict=True)
            )
        )


class ColdFakeDiagnostics(SettlingFakeDiagnostics):
    """A SettlingFakeDiagnostics whose analyzers are still analysing the
    whole workspace (a cold session): ``wait_idle`` waits for
    ``workspace_analysed`` (a test sets it), while a few files can be asked
    for file by file (FileByFileDiagnostics)."""

    def __init__(self, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(diagnostics)
        self.workspace_analysed = asyncio.Event()
        #: The files' texts now, for read_texts (a test sets it).
        self.texts_now: Callable[[], Mapping[str, str]] = dict

    async def wait_idle(self, timeout_s: float) -> bool:
        self.log.append("wait_idle")
        await self.workspace_analysed.wait()
        return self.idle

    def answers_per_file(self) -> bool:
        return True

    async def open_with_importers(self, paths: Sequence[str]) -> Sequence[str]:
        """``paths`` and their importers are opened (as the real pool's);
        returns the importers."""
        importers = [p for path in paths for p in self.importers.get(path, [])]
        self.opened.update([*paths, *importers])
        return importers

    async def snapshot_files(self, paths: Sequence[str], timeout_s: float) -> DiagnosticsSnapshot:
        return await self.snapshot(paths)

    def covers(self, path: str) -> bool:
        """Python files only (as the real pool with Python analyzers)."""
        return path.endswith(".py") and super().covers(path)

    async def read_texts(self) -> Callable[[str], str | None]:
        """The texts of the files it covers only, as the real pool's."""
        self.log.append("read_texts")
        return {p: t for p, t in self.texts_now().items() if self.covers(p)}.get

    async def snapshot_files_with(
        self, texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot:
        """``counterfactual`` (a test sets it), limited to ``paths``."""
        self.log.append("snapshot_files_with " + " ".join(sorted(texts)) + " -> " + " ".join(paths))
        found = tuple(d for d in self.counterfactual or () if d.path in paths)
        return DiagnosticsSnapshot(found, self.generation, sources=self.sources)


class RecordingProgress:
    """A ProgressReporter: ``waits[message]`` is set once the gate said it
    waits on ``message``; ``failures`` holds what it said failed."""

    def __init__(self) -> None:
        self.waits: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self.failures: list[str] = []

    def waiting(self, message: str, files: int | None = None) -> None:
        self.waits[message].set()

    def done(self, message: str) -> None:
        pass

    def failed(self, message: str) -> None:
        self.failures.append(message)


class LineAnalyzer:
    """A tiny analyzer over a FakeWorkspace: every line containing ERROR is an
    error diagnostic. It publishes after each mutation, like a real one."""

    def __init__(self, workspace: FakeWorkspace, coordinator_ref: list) -> None:
        self.workspace = workspace
        self.source = FakeDiagnostics()
        self.coordinator_ref = coordinator_ref

    def analyze(self) -> None:
        diags = []
        for path, text in sorted(self.workspace.files.items()):
            for i, line in enumerate(text.splitlines()):
                if "ERROR" in line:
                    diags.append(
                        Diagnostic(
                            path=path,
                            line=i,
                            character=line.index("ERROR"),
                            code="E1",
                            source="line",
                            message=f"bad token: {line.strip()}",
                        )
                    )
        self.source.diagnostics = diags

    def on_mutation(self, mutation: Mutation) -> None:
        self.analyze()
        self.coordinator_ref[0].notify_diagnostics_changed(list(mutation.paths))


def analyzed_env(
    files: Mapping[str, str] | None = None, quiet_ms: int = 10
) -> tuple[ToolEnvironment, DiagnosticsCoordinator, FakeWorkspace]:
    """A tracked fake workspace (holding ``files``, already analyzed) whose
    :class:`LineAnalyzer` flags every line holding "ERROR", with the
    diagnostics coordinator the gates read."""
    workspace = FakeWorkspace(dict(files or {}))
    log = MutationLog()
    ref: list[Any] = [None]
    analyzer = LineAnalyzer(workspace, ref)
    analyzer.analyze()
    coordinator = DiagnosticsCoordinator(analyzer.source, quiet_ms=quiet_ms, max_wait_ms=2000)
    ref[0] = coordinator
    log.subscribe(coordinator.notify_mutation)
    log.subscribe(analyzer.on_mutation)
    env = ToolEnvironment(workspace=TrackedWorkspace(workspace, log), diagnostics=coordinator)
    return env, coordinator, workspace
