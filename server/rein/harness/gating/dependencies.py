"""The dependency coordinator: the installs a manifest's change owes.

:class:`DependencyCoordinator` runs the install command when a manifest
changes, in the background, one at a time; each manifest is tracked on its
own (a change to one never supersedes another's install, a failure of one
is not hidden by another's success), and an interrupted install is redone.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import anyio

from rein.harness.ports import CommandResult, CommandRunner, Mutation

__all__ = ["DEFAULT_MANIFESTS", "DependencyCoordinator", "InstallOutcome"]


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
class _Manifest:
    """One manifest's install state."""

    path: str
    command: str
    #: Generation of the newest change of this manifest.
    wanted: int = 0
    #: Generation whose install finished (any exit code); < wanted: owed.
    done: int = -1
    #: The last finished install.
    outcome: InstallOutcome | None = None
    #: Outcome not yet reported by the gate.
    unreported: bool = False


class DependencyCoordinator:
    """Runs install commands for manifest changes, in the background, one at
    a time, each manifest tracked on its own.

    ``commands`` maps a manifest glob (matched against the file name) to the
    command to run in the workspace root, e.g. ``{"pyproject.toml":
    "pip install -e ."}``. With none configured, ``detect`` (when given) names
    the command for a changed file (the project's own tooling, asked at the
    time of the change); configured commands replace it. ``spawn`` starts a
    background task (the run's task group's ``start_soon``).

    A manifest whose newest change has no finished install is owed one: a
    change to another manifest does not supersede it, and an install that an
    abort or a crash interrupted is redone by :meth:`settle` (the next run's
    gate). A failed install stays failed until that manifest's own install
    succeeds.
    """

    def __init__(
        self,
        runner: CommandRunner,
        commands: Mapping[str, str],
        *,
        timeout_s: float = 600.0,
        detect: Callable[[str], str | None] | None = None,
    ) -> None:
        self.runner = runner
        self.commands = dict(commands)
        self.detect = None if self.commands else detect
        self.timeout_s = timeout_s
        self.manifests: dict[str, _Manifest] = {}
        self.outcomes: list[InstallOutcome] = []
        self._worker_running = False
        self._idle = anyio.Event()
        self._idle.set()
        #: Manifests whose install succeeded since the analyzers were told.
        self._environment: list[str] = []
        #: How many installs have finished (any exit code): a judgement
        #: made before one is stale (:class:`~rein.harness.gating.gate_types.InstallState`).
        self.finished = 0

    def command_for(self, path: str) -> str | None:
        name = posixpath.basename(path)
        for pattern, command in self.commands.items():
            if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(path, pattern):
                return command
        return self.detect(path) if self.detect is not None else None

    def on_mutation(self, mutation: Mutation, spawn: Callable[..., object]) -> bool:
        """Start (or queue) an install when ``mutation`` touched a manifest
        with a newer generation than its last. True when one was owed."""
        owed = False
        for path in mutation.paths:
            command = self.command_for(path)
            if command is None:
                continue
            state = self.manifests.get(path)
            if state is None:
                # First seen (also a change a stored session carried over a
                # restart, generation 0): owed an install.
                state = self.manifests[path] = _Manifest(path, command, mutation.generation)
            elif mutation.generation <= state.wanted:
                continue
            state.wanted = mutation.generation
            owed = True
        if owed and not self._worker_running:
            self._start(spawn)
        return owed

    def _start(self, spawn: Callable[..., object]) -> None:
        self._worker_running = True
        if self._idle.is_set():
            self._idle = anyio.Event()
        spawn(self._worker)

    def owed(self) -> list[_Manifest]:
        """Manifests whose newest change has no finished install."""
        return [m for m in self.manifests.values() if m.done < m.wanted]

    async def _worker(self) -> None:
        try:
            while owed := self.owed():
                job = min(owed, key=lambda m: m.wanted)
                # Manifests owed the same command are installed by one run;
                # a change arriving while it runs is owed another.
                started = {m.path: m.wanted for m in owed if m.command == job.command}
                try:
                    result = await self.runner.run(job.command, timeout_s=self.timeout_s)
                except Exception as exc:
                    result = CommandResult(exit_code=-1, output=f"{type(exc).__name__}: {exc}")
                outcome = InstallOutcome(max(started.values()), job.command, result)
                self.outcomes.append(outcome)
                self.finished += 1
                for path, generation in started.items():
                    state = self.manifests[path]
                    state.done = max(state.done, generation)
                    state.outcome = outcome
                    state.unreported = True
                    if result.exit_code == 0 and not result.timed_out:
                        self._environment.append(path)
        finally:
            # An interrupted install stays owed (done < wanted): settle() redoes it.
            self._worker_running = False
            self._idle.set()

    @property
    def busy(self) -> bool:
        return self._worker_running

    def installing(self) -> bool:
        """An install runs or is owed."""
        return self._worker_running or bool(self.owed())

    async def wait(self) -> InstallOutcome | None:
        """Wait for running and queued installs; the newest outcome."""
        await self._idle.wait()
        return self.outcomes[-1] if self.outcomes else None

    async def settle(self) -> None:
        """Wait for the installs running now, then run (here) what is still
        owed: an install an abort or a crash interrupted."""
        await self._idle.wait()
        if self.owed() and not self._worker_running:
            self._worker_running = True
            self._idle = anyio.Event()
            await self._worker()

    def failed(self) -> list[tuple[str, InstallOutcome]]:
        """Manifests whose last install failed, with that install."""
        return [
            (m.path, m.outcome)
            for m in sorted(self.manifests.values(), key=lambda m: m.path)
            if m.outcome is not None
            and (m.outcome.result.exit_code != 0 or m.outcome.result.timed_out)
        ]

    def take_reported(self) -> list[InstallOutcome]:
        """Installs finished since the last call (for the gate's detail)."""
        seen: list[InstallOutcome] = []
        for m in self.manifests.values():
            if m.unreported and m.outcome is not None:
                m.unreported = False
                if m.outcome not in seen:
                    seen.append(m.outcome)
        return seen

    def installed(self) -> bool:
        """Manifests were installed since the last
        :meth:`take_environment_changes` (which it does not take)."""
        return bool(self._environment)

    def take_environment_changes(self) -> list[str]:
        """Manifests installed successfully since the last call: the
        analyzers must be told the environment changed."""
        paths, self._environment = sorted(set(self._environment)), []
        return paths
