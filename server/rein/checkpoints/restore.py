"""Restore: put the files a run changed back as they were before it.

A restore of ``(session, run, turn?, paths?)`` puts every file changed by
that run from that turn on (the whole run when ``turn`` is None) and by
every later checkpoint run of the session back to its version just before
the earliest such change. Per path:

* *target*: the ``before`` of the path's earliest change in scope;
* *expected*: the ``after`` of its latest change (what the runs left);
* *current*: what the workspace shows now (the editor's buffer, the disk).

``current == target``: already restored (this makes a restore idempotent
and resumable); ``current == expected``: the target is written (deleted
when absent, created when the file is gone); otherwise the person changed
the file after the run: a *conflict*, not overwritten, reported with a
unified diff, while the other files are still restored. An ``unstored``
target (binary, too large, changed by a command) is skipped with its
reason, or refused when the request named that path.

Everything that can refuse the request (an unknown or pruned run, a path
outside the workspace or not changed in scope, content no longer stored)
is checked while planning, before any write: a refused restore changes
nothing. Then the restore registers itself as a checkpoint run (kind
``"restore"``, one change at turn 0 with ``before`` = the current version
and ``after`` = the target of each path it will write) *before* writing:
it is undoable like any run, and after a kill mid-restore the same restore
run again finds each file either written (already restored) or still as
the interrupted restore found it (the ``before`` of its journal entry), and
completes it. Writes go through the :class:`~rein.harness.ports.Workspace`,
atomic per file (a versioned edit in the editor, a rename on disk).

Modes and links (:mod:`rein.checkpoints.file_meta`): a target whose mode is
known gets it back after its text is written (a script the run deleted
comes back executable; a file whose only change was its mode, a ``chmod``
of a command, has just its mode set back, when the mode is still the one
the runs left: a mode the person set since is a conflict, as a text is).
A target that was a symbolic link is made a link again (to the same
target, not written when nothing was written through the link: a file of
its own); a link the runs wrote through, kept or made again, gets back
through it what it led to before their first write through it (only when
it differs and lies in the workspace; through a link made again, only
while it is what the runs left; see
:func:`~rein.checkpoints.restore_paths.written_through`); where the link
cannot be made, the path is a conflict saying so and nothing is written
there: a link is never brought back as a regular file. A checkpoint of an older Rein has
no modes: its files keep the mode the workspace gives them.
"""

from __future__ import annotations

import difflib
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from rein.checkpoints.file_meta import DiskFileMeta, FileMeta, format_mode
from rein.checkpoints.model import (
    CheckpointChange,
    CheckpointRun,
    CheckpointStore,
    FileChange,
    FileVersion,
)
from rein.checkpoints.restore_paths import (
    DANGLING,
    Current,
    interrupted,
    link_back,
    written_through,
)
from rein.checkpoints.restore_scope import changes_by_path, in_scope, restore_title
from rein.checkpoints.restore_types import (
    Conflict,
    RestoredFile,
    RestoreRequest,
    RestoreResult,
    SkippedFile,
    restore_note,
    workspace_path,
)
from rein.checkpoints.secret_keep import is_secret_blob
from rein.harness.errors import RestoreError, SandboxError, ToolError
from rein.harness.ports import Workspace

__all__ = [
    "Conflict",
    "RestoreRequest",
    "RestoreResult",
    "RestoredFile",
    "Restorer",
    "SkippedFile",
    "in_scope",
    "new_restore_id",
    "restore_note",
    "workspace_path",
]

log = logging.getLogger(__name__)

Action = Literal["write", "already", "skip", "conflict"]


def new_restore_id() -> str:
    return "restore-" + uuid.uuid4().hex[:12]


@dataclass(slots=True)
class _PathPlan:
    path: str
    target: FileVersion
    expected: FileVersion
    current: Current
    action: Action
    reason: str = ""
    target_text: str | None = None
    expected_text: str | None = None
    #: What the runs left through a link they wrote through (None: nothing
    #: was written through it, or it was not stored).
    left_text: str | None = None
    #: What the write did besides the text (its mode, a link), or could not.
    detail: str = ""


@dataclass(slots=True)
class _Plan:
    request: RestoreRequest
    run: CheckpointRun
    paths: list[_PathPlan] = field(default_factory=list)

    @property
    def already(self) -> bool:
        """Every path is as it was before (the run is undone already):
        nothing to write, in conflict or skipped."""
        return all(p.action == "already" for p in self.paths)


def _unified(path: str, old: str | None, new: str | None, old_label: str, new_label: str) -> str:
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        (new or "").splitlines(keepends=True),
        fromfile=f"{path} ({old_label})",
        tofile=f"{path} ({new_label})",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _change_kind(
    current: Current, target: FileVersion
) -> Literal["created", "modified", "deleted"]:
    if not target.present:
        return "deleted"
    return "modified" if current.exists else "created"


class Restorer:
    """Plans and applies restores of one session's checkpoints over a
    workspace. ``clock`` stamps the restore's run and change; ``new_id``
    names it."""

    def __init__(
        self,
        store: CheckpointStore,
        workspace: Workspace,
        *,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] = new_restore_id,
        meta: FileMeta | None = None,
    ) -> None:
        self.store = store
        self.workspace = workspace
        #: Modes and links: the disk under the workspace's root unless given.
        self.meta: FileMeta = meta if meta is not None else DiskFileMeta(workspace.root)
        self._clock = clock
        self._new_id = new_id

    async def restore(self, request: RestoreRequest) -> RestoreResult:
        """Plan (refusing with RestoreError before any write), register the
        restore, write. Writes the editor refuses (the person typed in
        between) become conflicts."""
        plan = await self.plan(request)
        return await self.apply(plan)

    # ------------------------------------------------------------------ plan

    async def plan(self, request: RestoreRequest) -> _Plan:
        if request.turn is not None and request.turn < 1:
            raise RestoreError(f"turn must be 1 or more, got {request.turn}")
        runs = await self.store.runs(request.session_id)
        run = next((r for r in runs if r.run_id == request.run_id), None)
        if run is None:
            raise RestoreError(
                f"no checkpoint of run {request.run_id!r} in session {request.session_id} "
                "(it changed no files, or it is not a run of this session)"
            )
        if run.pruned_at is not None:
            raise RestoreError(
                f"the checkpoint of run {run.run_id} was dropped ({run.pruned_reason or 'pruned'})"
                "; it can no longer be restored"
            )
        changes = in_scope(runs, await self.store.changes(request.session_id), run.run_id, None)
        if request.turn is not None:
            turns = sorted({c.turn for c in changes if c.run_id == run.run_id})
            if request.turn not in turns:
                raise RestoreError(
                    f"run {run.run_id} changed no files in turn {request.turn} (turns that "
                    f"changed files: {', '.join(map(str, turns)) or 'none'})"
                )
            changes = in_scope(runs, changes, run.run_id, request.turn)
        by_path = changes_by_path(changes)
        wanted = list(by_path)
        if request.paths is not None:
            wanted = []
            for given in request.paths:
                rel = workspace_path(self.workspace.root, given)
                if rel not in by_path:
                    raise RestoreError(
                        f"{rel} was not changed by run {run.run_id}"
                        + (f" from turn {request.turn}" if request.turn else "")
                        + " or a later run of this session"
                    )
                if rel not in wanted:
                    wanted.append(rel)
        plan = _Plan(request, run)
        for path in wanted:
            path_changes = by_path[path]
            plan.paths.append(
                await self._plan_path(
                    path, path_changes[0][1].before, path_changes[-1][1].after, path_changes
                )
            )
        if request.paths is not None:
            for item in plan.paths:
                if item.action == "skip":
                    raise RestoreError(f"{item.path} cannot be restored: {item.reason}")
        return plan

    async def _current(self, path: str, secret: bool = False) -> Current:
        """The path now; a ``secret`` one's text is kept apart as the runs'
        versions of it were (its blob id, to compare, and to journal)."""
        found = await self.meta.meta(path)
        mode, link = (found.mode, found.link) if found is not None else (None, None)
        try:
            if not await self.workspace.exists(path):
                if link is not None:
                    return Current(True, unreadable=DANGLING, link=link)
                return Current(False)
            content = await self.workspace.read_text(path)
        except SandboxError as exc:
            if link is not None:  # a link leading out: the link itself is the file
                return Current(True, unreadable=str(exc), link=link)
            raise RestoreError(f"path {path!r} is outside the workspace: {exc}") from exc
        except ToolError as exc:
            if "not found" in str(exc).lower():
                return Current(False)
            return Current(True, unreadable=str(exc), mode=mode, link=link)
        kept = await self.store.put_secret(content.text) if secret else None
        return Current(True, content.text, content.version, mode=mode, link=link, kept=kept)

    async def _text(self, version: FileVersion, path: str) -> str | None:
        if version.state != "text" or version.blob is None:
            return None
        text = await self.store.get_text(version.blob)
        if text is None:
            raise RestoreError(
                f"the stored content of {path} is gone (the checkpoint was pruned); "
                "it can no longer be restored"
            )
        return text

    async def _plan_path(
        self,
        path: str,
        target: FileVersion,
        expected: FileVersion,
        history: Sequence[tuple[CheckpointChange, FileChange]],
    ) -> _PathPlan:
        workspace_path(self.workspace.root, path)
        # The runs kept its texts apart (a secret file): so is its text now.
        secret = any(is_secret_blob(v.blob) for _, f in history for v in (f.before, f.after))
        current = await self._current(path, secret)
        through = written_through(target.link, history) if target.link is not None else None
        if through is not None:
            # Written through: the link, and what it led to before the first write.
            target = through[0]
        item = _PathPlan(path, target, expected, current, "write")
        if current.matches(target) or link_back(current, target, history):
            item.action = "already"
            return item
        if current.mode_only(target) and (
            current.matches(expected) or interrupted(current, history)
        ):
            return item  # its text is the target's: only the mode is set back
        if target.state == "unstored" and target.link is None:
            item.action, item.reason = "skip", target.reason
            return item
        item.target_text = await self._text(target, path)
        if through is not None:
            item.left_text = await self._text(through[1], path)
        if expected.state == "unstored":
            item.action = "skip"
            item.reason = (
                "Rein did not store its content after the run "
                f"({expected.reason}), so it cannot tell whether it changed since"
            )
            return item
        if not current.matches(expected) and not interrupted(current, history):
            item.expected_text = await self._text(expected, path)
            item.action = "conflict"
            item.reason = self._conflict_reason(current, expected)
        return item

    @staticmethod
    def _conflict_reason(current: Current, expected: FileVersion) -> str:
        if current.unreadable:
            return f"changed after the run and not text now ({current.unreadable})"
        if not current.exists:
            return "deleted after the run"
        if not expected.present:
            return "created again after the run"
        if current.mode is None or expected.mode is None or current.mode == expected.mode:
            return "changed after the run"
        modes = f"mode {format_mode(current.mode)} now, {format_mode(expected.mode)} after the run"
        if current.same_text(expected):
            return f"its mode changed after the run ({modes})"
        return f"changed after the run, its mode too ({modes})"

    # ----------------------------------------------------------------- apply

    async def apply(self, plan: _Plan) -> RestoreResult:
        request = plan.request
        writes = [p for p in plan.paths if p.action == "write"]
        restore_id = self._new_id()
        now = self._clock()
        await self.store.begin_run(
            CheckpointRun(
                session_id=request.session_id,
                run_id=restore_id,
                workspace=self.workspace.root,
                kind="restore",
                title=restore_title(plan.run, request.turn),
                started_at=now,
                restored_run=plan.run.run_id,
                restored_turn=request.turn,
            )
        )
        if writes:
            for item in writes:
                if item.current.text is not None and item.current.kept is None:
                    await self.store.put_text(item.current.text)
            # The journal, before the first write.
            await self.store.record(
                CheckpointChange(
                    session_id=request.session_id,
                    run_id=restore_id,
                    turn=0,
                    generation=self.workspace.generation,
                    origin="restore",
                    files=tuple(
                        FileChange(item.path, item.current.as_version, item.target)
                        for item in writes
                    ),
                    at=now,
                )
            )
        restored: list[RestoredFile] = []
        conflicts: list[Conflict] = []
        for item in plan.paths:
            if item.action == "write":
                refused = await self._write(item)
                if refused is None:
                    restored.append(
                        RestoredFile(
                            item.path, _change_kind(item.current, item.target), item.detail
                        )
                    )
                    continue
                item.action, item.reason = "conflict", refused
                item.current = await self._current(item.path, item.current.kept is not None)
                item.expected_text = await self._text(item.expected, item.path)
            if item.action == "conflict":
                conflicts.append(self._conflict(item))
        return RestoreResult(
            restore_id=restore_id,
            session_id=request.session_id,
            run_id=plan.run.run_id,
            turn=request.turn,
            restored=tuple(restored),
            already_restored=tuple(p.path for p in plan.paths if p.action == "already"),
            skipped=tuple(SkippedFile(p.path, p.reason) for p in plan.paths if p.action == "skip"),
            conflicts=tuple(conflicts),
        )

    async def _write(self, item: _PathPlan) -> str | None:
        """Write the target (its text, mode or link); the reason when the
        workspace refused."""
        target, current = item.target, item.current
        try:
            if not target.present:
                await self.workspace.delete(item.path)
            elif target.link is not None:
                return await self._link(item)
            elif current.mode_only(target):
                pass
            else:
                assert item.target_text is not None
                version = current.version
                if current.link is not None and target.mode is not None:
                    # A regular file then, a link now: the link goes, not
                    # written through.
                    await self.workspace.delete(item.path)
                    version = None
                await self.workspace.write_text(
                    item.path, item.target_text, expected_version=version
                )
        except ToolError as exc:
            # The tool error speaks to the model; the log keeps it.
            log.info("restore of %s refused: %s", item.path, exc)
            return "changed during the restore: the edit was refused, nothing was overwritten"
        if target.present and target.link is None and target.mode is not None:
            item.detail = await self._set_mode(item.path, target.mode)
        return None

    async def _set_mode(self, path: str, mode: int) -> str:
        """Give ``path`` its mode back; what to say of it ("" when it had it)."""
        found = await self.meta.meta(path)
        if found is not None and found.mode == mode:
            return ""
        try:
            await self.meta.set_mode(path, mode)
        except OSError as exc:
            return f"its mode {format_mode(mode)} could not be set back: {exc}"
        return f"mode {format_mode(mode)}"

    async def _link(self, item: _PathPlan) -> str | None:
        """Make the path the symbolic link it was (never a regular file in
        its place); what it leads to is left alone unless the runs wrote
        through the link: then it gets back what it led to before (when
        stored, and, through a link made again, only when it is still what
        the runs left). The workspace never writes through a link leading
        out of it."""
        link = item.target.link
        assert link is not None
        if item.current.link != link:
            try:
                await self.meta.make_link(item.path, link)
            except OSError as exc:
                return (
                    f"it was a symbolic link to {link}, and the link could not be made "
                    f"({exc}): nothing was written in its place"
                )
        item.detail = f"a symbolic link to {link}"
        made = item.current.link != link
        if item.target_text is None or (made and item.left_text is None):
            return None  # a link made again: what it leads to is left alone
        try:
            now = await self.workspace.read_text(item.path)
            if now.text == item.target_text:
                return None
            if made and now.text != item.left_text:
                item.detail += "; what it leads to changed since the run and was left as it is"
                return None
            await self.workspace.write_text(item.path, item.target_text, expected_text=now.text)
        except ToolError as exc:
            item.detail += f"; the content it leads to was not restored ({exc})"
        return None

    @staticmethod
    def _conflict(item: _PathPlan) -> Conflict:
        return Conflict(
            path=item.path,
            reason=item.reason,
            diff=_unified(
                item.path, item.expected_text, item.current.text, "checkpoint", "current"
            ),
            checkpoint_text=item.expected_text,
            current_text=item.current.text,
        )
