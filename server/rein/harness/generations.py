"""Mutation generations: one number per applied workspace change.

:class:`MutationLog` records every :class:`~rein.harness.ports.Mutation`
(generation, paths, origin) and tells listeners (the diagnostics and
dependency coordinators, an analyzer pool). :class:`TrackedWorkspace` wraps
any Workspace so that every change the agent applies lands in the log;
adapters record changes Rein did not make (a file watcher, the person typing)
with :meth:`MutationLog.record`.

The log also keeps the runs' records (:mod:`rein.harness.run.run_record`): an
agent change recorded while a run is active is that run's, and an external
change recorded while a run's process runs
(:meth:`MutationLog.attributing_processes`) is that run's too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rein.harness.file_updates import PartlyAppliedError, apply_in_turn, check_unique
from rein.harness.ports import (
    AfterChange,
    AppliedChange,
    BeforeChange,
    CommandAhead,
    FileContent,
    FileUpdate,
    MultiFileWorkspace,
    Mutation,
    Workspace,
    Writes,
)
from rein.harness.run.run_record import RunMutationOrigin, RunRecord, active_records, attribute

__all__ = [
    "AfterChange",
    "AppliedChange",
    "BeforeChange",
    "ChangeHooks",
    "MutationListener",
    "MutationLog",
    "RecordingWorkspace",
    "TrackedWorkspace",
]

log = logging.getLogger(__name__)

MutationListener = Callable[[Mutation], None]


class MutationLog:
    """Every applied change, in generation order (bounded history)."""

    def __init__(self, history: int = 10_000) -> None:
        self._mutations: list[Mutation] = []
        self._history = history
        self._listeners: list[MutationListener] = []
        self._latest = 0
        #: path -> (generation, origin) of its last change
        self._last_change: dict[str, tuple[int, str]] = {}
        #: The active runs' records of every process running now for a run.
        self._process_windows: list[tuple[RunRecord, ...]] = []

    @property
    def latest(self) -> int:
        return self._latest

    def subscribe(self, listener: MutationListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def record(self, mutation: Mutation) -> None:
        if mutation.generation <= self._latest and any(
            m.generation == mutation.generation for m in self._mutations[-8:]
        ):
            return  # already recorded (deduplicated by generation)
        self._latest = max(self._latest, mutation.generation)
        self._mutations.append(mutation)
        if len(self._mutations) > self._history:
            del self._mutations[: len(self._mutations) - self._history]
        for path in mutation.paths:
            self._last_change[path] = (mutation.generation, mutation.origin)
        self._attribute(mutation)
        for listener in list(self._listeners):
            try:
                listener(mutation)
            except Exception:
                log.exception("mutation listener raised")

    def _attribute(self, mutation: Mutation) -> None:
        """Count ``mutation`` in the records of the runs that caused it."""
        origin: RunMutationOrigin = "tool" if mutation.origin == "agent" else "command"
        for records in self.causes(mutation):
            attribute(records, mutation, origin)

    def causes(self, mutation: Mutation) -> list[tuple[RunRecord, ...]]:
        """The active records (outermost first) of each run that caused
        ``mutation``, as seen now: for an agent change the runs active in the
        caller's context; for an external change the runs whose processes
        are running (:meth:`attributing_processes`); none for the person's."""
        if mutation.origin == "agent":
            records = active_records()
            return [records] if records else []
        if mutation.origin == "external":
            return list(self._process_windows)
        return []

    @contextmanager
    def attributing_processes(self) -> Iterator[None]:
        """While open, external changes (a disk watcher's) are counted as
        changes of the runs active in the caller's context: wrap a process a
        tool starts, and the wait until the watcher has seen its writes.
        Changes that overlapping processes of several runs make count for
        each of those runs."""
        records = active_records()
        if not records:
            yield
            return
        self._process_windows.append(records)
        try:
            yield
        finally:
            self._process_windows.remove(records)

    def since(self, generation: int) -> list[Mutation]:
        """Mutations with a generation greater than ``generation``."""
        out: list[Mutation] = []
        for mutation in reversed(self._mutations):
            if mutation.generation <= generation:
                break
            out.append(mutation)
        out.reverse()
        return out

    def paths_since(self, generation: int) -> set[str]:
        return {p for m in self.since(generation) for p in m.paths}

    def is_stale(self, path: str, read_generation: int) -> bool:
        """True when someone other than the agent changed ``path`` after it
        was read at ``read_generation``."""
        last = self._last_change.get(path)
        return last is not None and last[0] > read_generation and last[1] != "agent"

    def last_change(self, path: str) -> tuple[int, str] | None:
        return self._last_change.get(path)


class ChangeHooks:
    """The before- and after-change callbacks of a workspace (the
    :class:`~rein.harness.ports.ChangeAnnouncer` seam; every
    :class:`RecordingWorkspace` holds one). Callbacks run in the writer's
    context (so they can tell which run writes) and must not raise; a
    raising one is logged and the change goes on. An edit that fails after
    the before-callbacks gets no after-call."""

    def __init__(self) -> None:
        self._before: list[BeforeChange] = []
        self._after: list[AfterChange] = []

    @staticmethod
    def _add(callbacks: list[Any], callback: Any) -> Callable[[], None]:
        callbacks.append(callback)

        def remove() -> None:
            if callback in callbacks:
                callbacks.remove(callback)

        return remove

    def before_change(self, callback: BeforeChange) -> Callable[[], None]:
        """Register ``callback``; returns the function that removes it."""
        return self._add(self._before, callback)

    def after_change(self, callback: AfterChange) -> Callable[[], None]:
        """Register ``callback``; returns the function that removes it."""
        return self._add(self._after, callback)

    async def about_to_change(
        self, *paths: str, writes: bool = False, command: str | None = None
    ) -> None:
        """Await every before-change callback with ``paths`` (a
        :class:`~rein.harness.ports.Writes` when the change ``writes``
        them: no deletion; a :class:`~rein.harness.ports.CommandAhead`,
        no path, before a ``command`` runs)."""
        announced: tuple[str, ...] = (
            CommandAhead(command) if command is not None else Writes(paths) if writes else paths
        )
        for callback in list(self._before):
            try:
                await callback(announced)
            except Exception:
                log.exception("a before-change callback raised")

    async def changed(self, change: AppliedChange) -> None:
        for callback in list(self._after):
            try:
                await callback(change)
            except Exception:
                log.exception("an after-change callback raised")


class RecordingWorkspace:
    """What every workspace the sessions write through shares (the headless
    :class:`TrackedWorkspace`, the editor's workspace): the
    :class:`~rein.harness.ports.ChangeAnnouncer` seam, implemented once,
    and the :class:`MutationLog` its changes are recorded in. A subclass
    awaits ``self._hooks.about_to_change(*paths)`` before it applies a
    change and ``self._hooks.changed(...)`` once it applied and recorded
    it."""

    def __init__(self, mutations: MutationLog) -> None:
        self.mutations = mutations
        self._hooks = ChangeHooks()

    def before_change(self, callback: BeforeChange) -> Callable[[], None]:
        """Register ``callback``, awaited with the paths before a write,
        delete or rename is applied (the analyzer gate captures a file's
        baseline there). Returns the function that removes it. A raising
        callback is logged; the change goes on."""
        return self._hooks.before_change(callback)

    def after_change(self, callback: AfterChange) -> Callable[[], None]:
        """Register ``callback``, awaited with the :class:`AppliedChange`
        once the change is applied (checkpoints store the new content
        there). Returns the function that removes it."""
        return self._hooks.after_change(callback)

    async def before_command(self, command: str = "") -> None:
        """A command of the run is about to change files nobody can name:
        the before-change callbacks get no paths (with its ``command``
        line)."""
        await self._hooks.about_to_change(command=command)


class TrackedWorkspace(RecordingWorkspace):
    """A Workspace that records every change it applies in a MutationLog
    and announces it to its change hooks (:class:`RecordingWorkspace`).
    A multi-file change goes to the inner workspace's ``apply_changes``
    when it is a :class:`~rein.harness.ports.MultiFileWorkspace`; a plain
    Workspace gets it file by file (put back on a failure:
    :func:`~rein.harness.file_updates.apply_in_turn`). Either way it is
    recorded and announced as one change with every path."""

    def __init__(self, inner: Workspace, mutations: MutationLog) -> None:
        super().__init__(mutations)
        self.inner = inner

    @property
    def root(self) -> str:
        return self.inner.root

    @property
    def generation(self) -> int:
        return max(self.inner.generation, self.mutations.latest)

    async def read_text(self, path: str) -> FileContent:
        return await self.inner.read_text(path)

    async def exists(self, path: str) -> bool:
        return await self.inner.exists(path)

    async def write_text(
        self,
        path: str,
        text: str,
        *,
        expected_version: int | None = None,
        expected_text: str | None = None,
    ) -> Mutation:
        await self._hooks.about_to_change(path, writes=True)
        mutation = await self.inner.write_text(
            path, text, expected_version=expected_version, expected_text=expected_text
        )
        self.mutations.record(mutation)
        await self._hooks.changed(AppliedChange(mutation, "write", text))
        return mutation

    async def delete(self, path: str) -> Mutation:
        await self._hooks.about_to_change(path)
        mutation = await self.inner.delete(path)
        self.mutations.record(mutation)
        await self._hooks.changed(AppliedChange(mutation, "delete"))
        return mutation

    async def rename(self, old: str, new: str) -> Mutation:
        await self._hooks.about_to_change(old, new)
        mutation = await self.inner.rename(old, new)
        self.mutations.record(mutation)
        await self._hooks.changed(AppliedChange(mutation, "rename"))
        return mutation

    async def apply_changes(self, changes: Sequence[FileUpdate], *, label: str = "") -> Mutation:
        paths = check_unique(changes)
        await self._hooks.about_to_change(*paths)
        if isinstance(self.inner, MultiFileWorkspace):
            mutation = await self.inner.apply_changes(changes, label=label)
        else:
            mutation = await self._in_turn(changes, paths)
        self.mutations.record(mutation)
        texts = tuple(change.text for change in changes)
        await self._hooks.changed(AppliedChange(mutation, "files", texts=texts))
        return mutation

    async def _in_turn(self, changes: Sequence[FileUpdate], paths: tuple[str, ...]) -> Mutation:
        """``changes`` through a plain Workspace's writes, one generation."""
        inner = self.inner
        generations = [inner.generation]

        async def read(path: str) -> str | None:
            return (await inner.read_text(path)).text if await inner.exists(path) else None

        async def write(path: str, text: str | None, expected: str | None) -> None:
            if text is None:
                mutation = await inner.delete(path)
            else:
                mutation = await inner.write_text(path, text, expected_text=expected)
            generations.append(mutation.generation)

        try:
            await apply_in_turn(changes, read, write)
        except PartlyAppliedError as exc:
            # Files the failed change left written are a change all the
            # same: recorded and announced (checkpoints and gates see them).
            mutation = Mutation(max(generations), exc.changed)
            self.mutations.record(mutation)
            texts = tuple([await read(path) for path in exc.changed])
            await self._hooks.changed(AppliedChange(mutation, "files", texts=texts))
            raise
        return Mutation(max(generations), paths)
