"""Capture: every change a session's runs make, with its content, into a
:class:`~rein.checkpoints.model.CheckpointStore`.

One :class:`CheckpointCapture` per session. It hooks the workspace layer,
not the tools, so whoever makes a change (a tool, a subagent, a command a
tool started) it lands in the run that caused it:

* ``before_change`` (awaited in the writer's context before a write, delete
  or rename): when the OUTERMOST active run record is one of this session's
  runs, each path's current content (what the editor shows) is read once
  and stored;
* ``after_change`` (awaited with the applied change): the new content (the
  text written; absent after a delete; the old path's content for the new
  path of a rename; each file's of a multi-file change, all in one
  change) is stored and one :class:`CheckpointChange` recorded,
  at that run's current turn. A subagent's change is its top-level
  parent's, origin ``"subagent"``;
* the :class:`~rein.harness.generations.MutationLog` listener sees what the
  disk watcher noticed while a run's process ran (``run_command``): those
  are read when the capture next acts (:meth:`CheckpointCapture.flush`,
  before the run's next change and at the end of a prompt) and recorded
  with origin ``"command"``; their "before" is the content an earlier change
  of the session stored, else unstored (Rein did not have it). A path a
  command removed whose content Rein never had is left out (most often the
  command's own temporary file). A change by the person or another session
  forgets what the session knew of a path.

Each version read from the disk keeps the file's permission bits and, for
a symbolic link, its target (:mod:`rein.checkpoints.file_meta`): what a
restore needs to bring a script back executable and a link back as a link.
A command that only changes a file's mode is recorded as a change.

The text of a secret file (``secret``: ``tools.secretFiles``; or of a
symbolic link to one) goes to the
store's keep apart (:meth:`~rein.checkpoints.model.CheckpointStore.put_secret`),
never among the other texts: undo brings it back, the database never
holds it.

Binary content is recorded as unstored ("binary"), content over
``checkpoints.maxFileKb`` as unstored with its size. The capture never
breaks or blocks an edit: each store call has a time bound, and a store
error is logged and reported once (``on_error``); the edit goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

from rein.checkpoints.file_meta import DiskFileMeta, FileMeta, Meta, led_to
from rein.checkpoints.model import (
    CheckpointChange,
    CheckpointRun,
    CheckpointStore,
    FileChange,
    FileVersion,
    net_files,
)
from rein.harness.errors import ToolError
from rein.harness.events import CheckpointDropped, Emit, Event, RunStart
from rein.harness.generations import AppliedChange, MutationLog
from rein.harness.ports import AnnouncingWorkspace, Mutation
from rein.harness.run.run_record import RunRecord, active_records

__all__ = [
    "COMMAND_BEFORE",
    "STORE_BOUND_S",
    "CheckpointCapture",
    "changes_json",
]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

#: The "before" of a file a command changed when Rein had no earlier content.
COMMAND_BEFORE = "changed by a command; Rein did not have its earlier content"
#: The reason of a path that is a folder, not a file.
_DIRECTORY = "a directory"
#: The longest one store call may hold up an edit (seconds).
STORE_BOUND_S = 5.0


#: The content before the change the current task is applying, by (capture,
#: path). Per task (a context variable, replaced never mutated), so calls
#: running in parallel that change the same file each keep their own.
_BEFORE: ContextVar[dict[tuple[int, str], FileVersion] | None] = ContextVar(
    "rein_checkpoint_before", default=None
)


@dataclass(slots=True)
class _Run:
    """One of the session's runs, as the capture knows it."""

    run_id: str
    title: str
    started_at: float
    begun: bool = False


@dataclass(slots=True)
class _Pending:
    """A command's change noticed by the watcher, to be read."""

    mutation: Mutation
    run_id: str
    turn: int


@dataclass(slots=True)
class _Prompt:
    """The runs started since :meth:`CheckpointCapture.start_prompt`."""

    runs: list[str] = field(default_factory=list)


class CheckpointCapture:
    """Records a session's runs' changes into ``store``; see the module doc.

    ``max_file_bytes``: content over it is not stored; ``title`` gives the
    title of a run whose prompt has none (a follow-up: the session's);
    ``on_error`` is told once when the store fails; ``emit`` gets the
    ``checkpoint_dropped`` events of :meth:`prune`."""

    def __init__(
        self,
        store: CheckpointStore,
        workspace: AnnouncingWorkspace,
        session_id: str,
        *,
        mutations: MutationLog | None = None,
        max_file_bytes: int = 2048 * 1024,
        title: Callable[[], str] = lambda: "",
        on_error: Callable[[str], None] | None = None,
        emit: Emit | None = None,
        clock: Callable[[], float] = time.time,
        store_bound_s: float = STORE_BOUND_S,
        meta: FileMeta | None = None,
        secret: Callable[[str], bool] = lambda path: False,
    ) -> None:
        self.store = store
        self.workspace = workspace
        #: Modes and links: the disk under the workspace's root unless given.
        self.meta: FileMeta = meta if meta is not None else DiskFileMeta(workspace.root)
        self.session_id = session_id
        self.mutations = mutations
        self.max_file_bytes = max_file_bytes
        self._title = title
        self._on_error = on_error
        self._emit = emit
        self._clock = clock
        self._bound = store_bound_s
        self._secret = secret
        self._runs: dict[str, _Run] = {}
        #: path -> the content the session's last recorded change left.
        self._known: dict[str, FileVersion] = {}
        self._commands: list[_Pending] = []
        self._prompt = _Prompt()
        #: The store error told to ``on_error`` (once).
        self.error: str | None = None
        #: The store did not answer within the bound (until the next prompt).
        self._stalled = False
        self._detach: list[Callable[[], None]] = []

    # ------------------------------------------------------------- wiring

    def attach(self) -> Callable[[], None]:
        """Hook the workspace and the mutation log; returns the detach."""
        self._detach.append(self.workspace.before_change(self._before_change))
        self._detach.append(self.workspace.after_change(self._after_change))
        if self.mutations is not None:
            self._detach.append(self.mutations.subscribe(self._on_mutation))
        return self.detach

    def detach(self) -> None:
        while self._detach:
            self._detach.pop()()

    def on_event(self, event: Event) -> None:
        """The session's events: a ``run_start`` makes the run one of this
        session's (its prompt's first line is the checkpoint's title)."""
        if isinstance(event, RunStart) and event.run_id not in self._runs:
            prompt = (event.prompt or "").strip()
            title = prompt.splitlines()[0][:80] if prompt else self._title()
            self._runs[event.run_id] = _Run(event.run_id, title, self._clock())
            self._prompt.runs.append(event.run_id)

    # ----------------------------------------------------------- the hooks

    def _owner(self, records: Sequence[RunRecord]) -> RunRecord | None:
        """The outermost record when its run is this session's."""
        if records and records[0].run_id in self._runs:
            return records[0]
        return None

    async def _before_change(self, paths: tuple[str, ...]) -> None:
        if self._owner(active_records()) is None:
            return
        await self.flush()
        read = {(id(self), path): await self._read(path) for path in paths}
        _BEFORE.set({**(_BEFORE.get() or {}), **read})
        for (_, path), version in read.items():
            target = led_to(path, version.link) if version.link is not None else None
            if target is not None and version.state == "text":
                # A write through a link changes the file it leads to (seen
                # by the watcher, recorded as a command's change): its
                # content before is known.
                self._known[target] = version.with_meta(None, None)

    async def _after_change(self, change: AppliedChange) -> None:
        records = active_records()
        owner = self._owner(records)
        if owner is None:
            return
        paths = change.mutation.paths
        pending = dict(_BEFORE.get() or {})
        befores = [pending.pop((id(self), p), None) for p in paths]
        _BEFORE.set(pending)
        before = [
            b if b is not None else FileVersion.unstored("Rein did not see it before the change")
            for b in befores
        ]
        files: tuple[FileChange, ...]
        if change.kind == "write":
            after = await self._kept(paths[0], change.text or "")
            files = (FileChange(paths[0], before[0], after),)
        elif change.kind == "delete":
            files = (FileChange(paths[0], before[0], FileVersion.absent()),)
        elif change.kind == "files":
            files = tuple(
                [
                    FileChange(
                        path,
                        was,
                        FileVersion.absent() if text is None else await self._kept(path, text),
                    )
                    for path, was, text in zip(paths, before, change.texts, strict=True)
                ]
            )
        else:
            old, new = paths
            files = (
                FileChange(old, before[0], FileVersion.absent()),
                FileChange(new, before[1], before[0], renamed_from=old),
            )
        await self._record(
            owner.run_id,
            owner.turn,
            change.mutation.generation,
            "tool" if len(records) == 1 else "subagent",
            files,
        )

    def _on_mutation(self, mutation: Mutation) -> None:
        """Every recorded change: a command of one of this session's runs is
        queued to be read; anything else not this session's own makes what
        it knew of those paths unknown."""
        mine = (
            [r for r in self.mutations.causes(mutation) if self._owner(r)] if self.mutations else []
        )
        if mutation.origin == "external" and mine:
            owner = mine[0][0]
            self._commands.append(_Pending(mutation, owner.run_id, owner.turn))
            return
        if mutation.origin == "agent" and mine:
            return  # recorded by the after-change hook
        for path in mutation.paths:
            self._known.pop(path, None)

    async def flush(self) -> None:
        """Read and record the commands' changes noticed so far."""
        while self._commands:
            pending = self._commands.pop(0)
            files: list[FileChange] = []
            for path in pending.mutation.paths:
                before = self._known.get(path) or FileVersion.unstored(COMMAND_BEFORE)
                after = await self._read(path)
                if after.reason.startswith(_DIRECTORY):
                    continue  # a folder the watcher saw appear: its files are changes
                if before.same_as(after) and before.state != "unstored":
                    continue  # touched, not changed
                if not after.present and before.state == "unstored":
                    # Gone, and Rein never had it: most often the command's
                    # own temporary file (sed -i); nothing to restore anyway.
                    continue
                files.append(FileChange(path, before, after))
            if files:
                await self._record(
                    pending.run_id,
                    pending.turn,
                    pending.mutation.generation,
                    "command",
                    tuple(files),
                )

    # ------------------------------------------------------------- content

    async def _meta_now(self, path: str) -> Meta | None:
        """The path's mode and link on the disk now (None: not known)."""
        try:
            return await self.meta.meta(path)
        except Exception:
            log.debug("no mode of %s", path, exc_info=True)
            return None

    def _is_secret(self, path: str, found: Meta | None) -> bool:
        """A secret file's path, or a link to one."""
        if self._secret(path):
            return True
        target = led_to(path, found.link) if found is not None and found.link else None
        return target is not None and self._secret(target)

    async def _kept(self, path: str, text: str) -> FileVersion:
        """``text``, now at ``path``, stored, with the path's mode and link."""
        found = await self._meta_now(path)
        return _with(found, await self._stored(text, self._is_secret(path, found)))

    async def _read(self, path: str) -> FileVersion:
        """The path's content now, stored (text, absent, or unstored), with
        its mode and link."""
        found = await self._meta_now(path)
        return _with(found, await self._read_content(path, self._is_secret(path, found)))

    async def _read_content(self, path: str, secret: bool) -> FileVersion:
        try:
            text = (await self.workspace.read_text(path)).text
        except ToolError as exc:
            try:
                exists = await self.workspace.exists(path)
            except Exception:
                exists = True
            if not exists:
                return FileVersion.absent()
            message = str(exc)
            if "is a directory" in message:
                return FileVersion.unstored(f"{_DIRECTORY}: {message}")
            if "binary" in message or "UTF-8" in message:
                return FileVersion.unstored("binary")
            return FileVersion.unstored(f"unreadable: {message}")
        return await self._stored(text, secret)

    async def _stored(self, text: str, secret: bool) -> FileVersion:
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.max_file_bytes:
            return FileVersion.unstored(
                f"too large: {(size + 1023) // 1024} KB, over checkpoints.maxFileKb "
                f"{self.max_file_bytes // 1024}"
            )
        put = self.store.put_secret(text) if secret else self.store.put_text(text)
        blob = await self._bounded("store a file's content", put)
        if blob is None:
            return FileVersion.unstored(f"not stored: {self.error}")
        return FileVersion("text", blob)

    # --------------------------------------------------------------- store

    async def _bounded(self, what: str, call: Coroutine[Any, Any, _T]) -> _T | None:
        """Await a store call within the bound; None (reported) on failure.
        A store that did not answer in time is not waited on again until the
        next prompt: one bound per prompt at most, not one per edit."""
        if self._stalled:
            call.close()  # a coroutine never awaited: discarded without a warning
            return None
        try:
            with anyio.fail_after(self._bound):
                return await call
        except TimeoutError:
            self._stalled = True
            self._fail(f"the checkpoint store did not {what} within {self._bound:g} s")
        except Exception as exc:
            log.debug("checkpoint store call failed", exc_info=True)
            self._fail(f"the checkpoint store could not {what}: {exc}")
        return None

    def _fail(self, message: str) -> None:
        log.error("checkpoints: %s", message)
        if self.error is None:
            self.error = message
            if self._on_error is not None:
                try:
                    self._on_error(message)
                except Exception:
                    log.exception("on_error raised")

    async def _record(
        self,
        run_id: str,
        turn: int,
        generation: int,
        origin: Any,
        files: tuple[FileChange, ...],
    ) -> None:
        run = self._runs[run_id]
        for file in files:
            self._known[file.path] = file.after
        if not run.begun:
            begun = await self._bounded(
                "register a run",
                self._begin(run),
            )
            if begun is None:
                return
            run.begun = True
        change = CheckpointChange(
            session_id=self.session_id,
            run_id=run_id,
            turn=turn,
            generation=generation,
            origin=origin,
            files=files,
            at=self._clock(),
        )
        await self._bounded("record a change", self._write(change))

    async def _begin(self, run: _Run) -> bool:
        await self.store.begin_run(
            CheckpointRun(
                session_id=self.session_id,
                run_id=run.run_id,
                workspace=self.workspace.root,
                kind="run",
                title=run.title,
                started_at=run.started_at,
            )
        )
        return True

    async def _write(self, change: CheckpointChange) -> bool:
        await self.store.record(change)
        return True

    # ------------------------------------------------------------ a prompt

    def start_prompt(self) -> None:
        """A prompt starts: :meth:`end_prompt` reports the runs from here (and
        a store that stalled is tried again)."""
        self._prompt = _Prompt()
        self._stalled = False

    @property
    def prompt_runs(self) -> list[str]:
        """The runs started since :meth:`start_prompt`, in order."""
        return list(self._prompt.runs)

    async def end_prompt(self) -> list[FileChange]:
        """The net change per path of the runs since :meth:`start_prompt`
        (the ``changes`` of the prompt's result)."""
        await self.flush()
        changes: list[CheckpointChange] = []
        for run_id in self._prompt.runs:
            if not self._runs[run_id].begun:
                continue  # changed nothing
            found = await self._bounded(
                "list a run's changes", self.store.changes(self.session_id, run_id)
            )
            changes.extend(found or [])
        return net_files(changes)

    async def prune(self, *, max_bytes: int, max_age_s: float) -> list[CheckpointRun]:
        """Apply the storage limits to this session's workspace; one
        ``checkpoint_dropped`` event per run whose content was dropped."""
        dropped = await self._bounded(
            "apply the storage limits",
            self.store.prune(
                self.workspace.root, max_bytes=max_bytes, max_age_s=max_age_s, now=self._clock()
            ),
        )
        for run in dropped or []:
            if self._emit is not None:
                self._emit(
                    CheckpointDropped(
                        session_id=run.session_id,
                        run_id=run.run_id,
                        bytes=run.bytes,
                        reason=run.pruned_reason,
                    )
                )
        return list(dropped or [])


def _with(found: Meta | None, version: FileVersion) -> FileVersion:
    return version if found is None else version.with_meta(found.mode, found.link)


def changes_json(files: Sequence[FileChange]) -> list[dict[str, Any]]:
    """A prompt's ``changes`` as the wire spells them."""
    out: list[dict[str, Any]] = []
    for file in files:
        entry: dict[str, Any] = {"path": file.path, "change": file.kind}
        if file.renamed_from is not None:
            entry["renamedFrom"] = file.renamed_from
        out.append(entry)
    return out
