"""Coordinators: stateful, serialising and deduplicating work by generation.

* :class:`DiagnosticsCoordinator` answers "diagnostics for generation >= g"
  only with diagnostics the analyzer produced after ``g`` was applied:
  event-driven (a change notification for each touched file, then a quiet
  period), bounded by a maximum wait; never a fixed sleep.
* :class:`DependencyCoordinator` runs the install command when a manifest
  changes, in the background, at most once per generation; a newer
  generation supersedes a queued one.
"""

from __future__ import annotations

import fnmatch
import logging
import posixpath
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import anyio

from rein.harness.ports import (
    CommandResult,
    CommandRunner,
    DiagnosticsSnapshot,
    DiagnosticsSource,
    Mutation,
)

__all__ = [
    "DEFAULT_MANIFESTS",
    "DependencyCoordinator",
    "DiagnosticsCoordinator",
    "InstallOutcome",
]

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

    def notify_mutation(self, mutation: Mutation) -> None:
        self.generation = max(self.generation, mutation.generation)
        for path in mutation.paths:
            self._waiting[path] = max(self._waiting.get(path, 0), mutation.generation)

    def notify_diagnostics_changed(self, paths: Sequence[str]) -> None:
        now = self._clock()
        self._last_change = now
        for path in paths:
            if self._waiting.pop(path, None) is not None:
                self.last_fresh_at = now
        self._changed.set()
        self._changed = anyio.Event()

    def pending(self, generation: int | None = None) -> list[str]:
        return sorted(p for p, g in self._waiting.items() if generation is None or g <= generation)

    async def wait_fresh(self, generation: int) -> bool:
        """Wait for fresh diagnostics; return True when they may be stale."""
        deadline = self._clock() + self.max_wait_s
        while True:
            now = self._clock()
            missing = self.pending(generation)
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
        stale = await self.wait_fresh(target)
        inner = await self.source.snapshot(paths, min_generation=target)
        return DiagnosticsSnapshot(
            inner.diagnostics, max(target, inner.generation), stale or inner.stale
        )


DEFAULT_MANIFESTS: tuple[str, ...] = (
    "pyproject.toml",
    "requirements*.txt",
    "setup.py",
    "setup.cfg",
    "Pipfile",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "Gemfile",
    "composer.json",
)


@dataclass(slots=True)
class InstallOutcome:
    generation: int
    command: str
    result: CommandResult


@dataclass(slots=True)
class _Pending:
    generation: int
    command: str
    done: anyio.Event = field(default_factory=anyio.Event)


class DependencyCoordinator:
    """Runs install commands for manifest changes, one per generation.

    ``commands`` maps a manifest glob (matched against the file name) to the
    command to run in the workspace root, e.g. ``{"pyproject.toml":
    "pip install -e ."}``. ``spawn`` starts a background task (the run's task
    group's ``start_soon``).
    """

    def __init__(
        self,
        runner: CommandRunner,
        commands: Mapping[str, str],
        *,
        timeout_s: float = 600.0,
    ) -> None:
        self.runner = runner
        self.commands = dict(commands)
        self.timeout_s = timeout_s
        self._running: _Pending | None = None
        self._queued: _Pending | None = None
        self.outcomes: list[InstallOutcome] = []
        self._idle = anyio.Event()
        self._idle.set()

    def command_for(self, path: str) -> str | None:
        name = posixpath.basename(path)
        for pattern, command in self.commands.items():
            if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(path, pattern):
                return command
        return None

    def on_mutation(self, mutation: Mutation, spawn: Callable[..., object]) -> bool:
        """Start (or queue) an install when ``mutation`` touched a manifest.
        Returns True when an install was started or queued."""
        commands = [c for c in (self.command_for(p) for p in mutation.paths) if c]
        if not commands:
            return False
        command = commands[0]
        gen = mutation.generation
        if self._running is not None and self._running.generation >= gen:
            return False
        if self._queued is not None and self._queued.generation >= gen:
            return False
        if self.outcomes and self.outcomes[-1].generation >= gen:
            return False
        pending = _Pending(gen, command)
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        if self._running is None:
            self._running = pending
            spawn(self._worker)
        else:
            self._queued = pending  # supersedes an older queued install
        return True

    async def _worker(self) -> None:
        try:
            while self._running is not None:
                job = self._running
                try:
                    result = await self.runner.run(job.command, timeout_s=self.timeout_s)
                except Exception as exc:
                    result = CommandResult(exit_code=-1, output=f"{type(exc).__name__}: {exc}")
                self.outcomes.append(InstallOutcome(job.generation, job.command, result))
                job.done.set()
                self._running, self._queued = self._queued, None
        finally:
            self._running = None
            self._queued = None
            self._idle.set()

    @property
    def busy(self) -> bool:
        return self._running is not None

    async def wait(self) -> InstallOutcome | None:
        """Wait for running and queued installs; the newest outcome."""
        await self._idle.wait()
        return self.outcomes[-1] if self.outcomes else None
