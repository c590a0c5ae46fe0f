"""One review decision request (:meth:`rein.checkpoints.review.Reviewer.decide`):
keep or undo its files and hunks, record the statuses and the events, and
write each undo as one versioned edit per file, journaled first in a
restore-kind checkpoint run."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Protocol

from rein.checkpoints.hunks import (
    Hunk,
    apply_regions,
    expected_lines,
    hunk_offsets,
    lines_of,
    locate,
)
from rein.checkpoints.model import (
    CheckpointChange,
    CheckpointRun,
    CheckpointStore,
    FileChange,
    FileVersion,
    HunkStatus,
    ReviewStatus,
)
from rein.checkpoints.review_types import (
    PERSON_CHANGED,
    Decided,
    Decision,
    Refused,
    ReviewedFile,
    file_status,
)
from rein.harness.errors import ToolError
from rein.harness.events import Emit, ReviewDecided
from rein.harness.ports import Workspace

__all__ = ["Batch", "ReviewScope"]


class ReviewScope(Protocol):
    """What a batch reads of its :class:`~rein.checkpoints.review.Reviewer`:
    the session's checkpoint store and workspace, where to emit, the clock."""

    @property
    def store(self) -> CheckpointStore: ...
    @property
    def workspace(self) -> Workspace: ...
    @property
    def session_id(self) -> str: ...
    @property
    def emit(self) -> Emit | None: ...
    @property
    def clock(self) -> Callable[[], float]: ...


class Batch:
    """One decision request: its results, and the restore run its undos
    are recorded in (made before the first write)."""

    def __init__(self, reviewer: ReviewScope, run_id: str) -> None:
        self.r = reviewer
        self.run_id = run_id
        self.decided: list[Decided] = []
        self.refused: list[Refused] = []
        self.restore_id: str | None = None

    async def _set(
        self,
        file: ReviewedFile,
        statuses: dict[int, HunkStatus],
        hunk: int | None,
        decision: Decision,
    ) -> None:
        r = self.r
        for index, hunk_status in statuses.items():
            await r.store.set_hunk_review(r.session_id, self.run_id, file.path, index, hunk_status)
        merged = {h.hunk.index: h.status for h in file.hunks} | statuses
        status: ReviewStatus
        if file.hunks:
            status = file_status(list(merged.values()))
        else:
            status = "kept" if decision == "keep" else file.status
        await r.store.set_review(r.session_id, self.run_id, file.path, status)
        shown: ReviewStatus = merged[hunk] if hunk is not None else status
        self.decided.append(Decided(file.path, hunk, shown))
        if r.emit is not None:
            r.emit(
                ReviewDecided(
                    session_id=r.session_id,
                    run_id=self.run_id,
                    path=file.path,
                    hunk=hunk,
                    decision=decision,
                    status=shown,
                )
            )

    async def keep(self, file: ReviewedFile, hunk: int | None) -> None:
        if hunk is not None and file.hunks[hunk].status == "undone":
            self.refused.append(
                Refused(
                    file.path,
                    hunk,
                    "this hunk was undone; to bring it back, undo that undo with rein/restore",
                )
            )
            return
        chosen = [h for h in file.hunks if hunk is None or h.hunk.index == hunk]
        statuses: dict[int, HunkStatus] = {
            h.hunk.index: "kept" for h in chosen if h.status != "undone"
        }
        await self._set(file, statuses, hunk, "keep")

    async def undo(self, file: ReviewedFile, hunk: int | None) -> None:
        if not file.hunks:
            self.refused.append(Refused(file.path, hunk, f"cannot undo: {file.reason}"))
            return
        chosen = [
            h.hunk
            for h in file.hunks
            if (hunk is None or h.hunk.index == hunk) and h.status != "undone"
        ]
        if chosen and not await self._write_undo(file, chosen):
            return
        await self._set(file, {h.index: "undone" for h in chosen}, hunk, "undo")

    async def _begin(self) -> str:
        r = self.r
        if self.restore_id is None:
            self.restore_id = "restore-" + uuid.uuid4().hex[:12]
            await r.store.begin_run(
                CheckpointRun(
                    session_id=r.session_id,
                    run_id=self.restore_id,
                    workspace=r.workspace.root,
                    kind="restore",
                    title=f"review: undo of changes of run {self.run_id}",
                    started_at=r.clock(),
                    restored_run=self.run_id,
                )
            )
        return self.restore_id

    async def _record(self, restore_id: str, generation: int, change: FileChange) -> None:
        r = self.r
        await r.store.record(
            CheckpointChange(
                session_id=r.session_id,
                run_id=restore_id,
                turn=0,
                generation=generation,
                origin="restore",
                files=(change,),
                at=r.clock(),
            )
        )

    async def _write_undo(self, file: ReviewedFile, hunks: list[Hunk]) -> bool:
        """Write the undo of ``hunks`` (one edit of the file); False, with
        the refusals, when it must not or the workspace refused."""
        ws = self.r.workspace
        assert file.before_text is not None and file.after_text is not None
        exists = await ws.exists(file.path)
        if file.whole and file.change == "deleted":
            if exists:
                self.refused.append(
                    Refused(file.path, None, "the person created this file again since the run")
                )
                return False
            return await self._apply(file, None, None, file.before_text)
        if not exists:
            if file.whole:
                return True  # created by the run and already gone: nothing to write
            self.refused.append(
                Refused(file.path, None, "the file was deleted since the run; nothing to undo")
            )
            return False
        try:
            current = await ws.read_text(file.path)
        except ToolError as exc:
            self.refused.append(Refused(file.path, None, f"cannot read it: {exc}"))
            return False
        if file.whole:
            if current.text != file.after_text:
                self.refused.append(
                    Refused(file.path, None, "the person changed this file since the run")
                )
                return False
            return await self._apply(file, current.version, current.text, None)
        all_hunks = [h.hunk for h in file.hunks]
        undone = [h.hunk.index for h in file.hunks if h.status == "undone"]
        expected = expected_lines(lines_of(file.after_text), all_hunks, undone)
        offsets = hunk_offsets(all_hunks, undone)
        cur = lines_of(current.text)
        regions: list[tuple[tuple[int, int], tuple[str, ...]]] = []
        for h in hunks:
            region = locate(expected, cur, offsets[h.index])
            if region is None:
                self.refused.append(Refused(file.path, h.index, f"{PERSON_CHANGED} ({h.header})"))
            else:
                regions.append((region, h.before))
        if len(regions) < len(hunks):
            return False
        new_text = "".join(apply_regions(cur, regions))
        return await self._apply(file, current.version, current.text, new_text)

    async def _apply(
        self, file: ReviewedFile, version: int | None, current: str | None, new: str | None
    ) -> bool:
        """Record the change (the restore run first), then write ``new``
        over ``current`` (None: no file; ``new`` None deletes it)."""
        store = self.r.store
        versions: list[FileVersion] = []
        for text in (current, new):
            if text is None:
                versions.append(FileVersion.absent())
            elif file.secret:  # kept apart, as the run's versions of it were
                versions.append(FileVersion("text", await store.put_secret(text)))
            else:
                await store.put_text(text)
                versions.append(FileVersion.of_text(text))
        restore_id = await self._begin()
        try:
            if new is None:
                mutation = await self.r.workspace.delete(file.path)
            else:
                mutation = await self.r.workspace.write_text(
                    file.path, new, expected_version=version
                )
        except ToolError as exc:
            self.refused.append(Refused(file.path, None, f"the edit was refused: {exc}"))
            return False
        await self._record(
            restore_id, mutation.generation, FileChange(file.path, versions[0], versions[1])
        )
        return True
