"""Review before keeping: a run's changes stay applied, pending, until the
person keeps or undoes them, per file, per hunk or all at once.

With ``approval.write: "review"`` a run's edits are applied as usual (the
gates and the preview run on them); when the run ends, every file it changed
is marked pending in the checkpoint store (:meth:`Reviewer.mark_pending`).
A reviewed file is the run's net change to a path: the version before the
run's first change to it, and the agent's latest version. Its hunks
(:mod:`rein.checkpoints.hunks`) are where the two differ; a created or deleted
file is one hunk, the whole file.

* **Keep** records the decision; nothing in the workspace changes.
* **Undo** puts the hunk's before-lines back in the text the file has NOW,
  as one versioned edit per file (``Workspace.write_text`` with the version
  that was read: a keystroke in between makes the editor refuse it). It is
  refused, and nothing is written, when the region's current text is not the
  agent's (the person changed it). A created file is deleted and a deleted
  file recreated, with the same refusal. Every undo is recorded as a
  restore-kind checkpoint run (registered before its write), so it can be
  undone in turn with ``rein/restore``.

A file's status follows from its hunks: ``pending`` while any hunk is,
``kept`` or ``undone`` when all are, ``mixed`` otherwise. A hunk's status is
the recorded decision, read against the file as it is now: before-lines
back (a restore of the run) make it undone, the agent's lines back (an undo
undone) make it pending again. A file whose
earlier content was not stored (binary, too large, changed by a command) or
was pruned has no hunks: it can be kept, not undone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from rein.checkpoints._review_batch import Batch
from rein.checkpoints.hunks import (
    Hunk,
    compute_hunks,
    expected_lines,
    hunk_offsets,
    lines_of,
    locate,
    unified_diff,
)
from rein.checkpoints.model import (
    CheckpointStore,
    FileChange,
    FileVersion,
    HunkStatus,
    ReviewStatus,
    net_files,
)
from rein.checkpoints.review_types import (
    ChangeKind,
    Decided,
    DecideResult,
    Decision,
    Refused,
    ReviewedFile,
    ReviewedHunk,
    file_status,
    review_note,
)
from rein.checkpoints.secret_keep import is_secret_blob
from rein.harness.errors import ReviewError, ToolError
from rein.harness.events import Emit, ReviewPending
from rein.harness.ports import Workspace

__all__ = [
    "ChangeKind",
    "DecideResult",
    "Decided",
    "Decision",
    "Refused",
    "ReviewedFile",
    "ReviewedHunk",
    "Reviewer",
    "file_status",
    "review_note",
]


class Reviewer:
    """The review of one session's runs over its checkpoint store and
    workspace. Decisions are serialised (one lock per reviewer)."""

    def __init__(
        self,
        store: CheckpointStore,
        workspace: Workspace,
        session_id: str,
        *,
        emit: Emit | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.workspace = workspace
        self.session_id = session_id
        self.emit = emit
        self.clock = clock
        self._lock = asyncio.Lock()

    # ---------------------------------------------------------------- reading

    async def _net(self, run_id: str) -> dict[str, FileChange]:
        """The run's net change per path (first before -> last after), in
        the order the paths were first changed; paths it left as they were
        are left out."""
        return {f.path: f for f in net_files(await self.store.changes(self.session_id, run_id))}

    async def mark_pending(self, run_id: str) -> list[str]:
        """Mark every file the run changed and that has no review state yet
        pending; emit ``review_pending`` when there are any. Returns them."""
        net = await self._net(run_id)
        known = await self.store.reviews(self.session_id)
        paths = [p for p in net if (run_id, p) not in known]
        for path in paths:
            await self.store.set_review(self.session_id, run_id, path, "pending")
        if paths and self.emit is not None:
            self.emit(ReviewPending(session_id=self.session_id, run_id=run_id, paths=paths))
        return paths

    async def _text(self, version: FileVersion) -> tuple[str | None, str]:
        """The text of a version ("" when absent) or None with the reason."""
        if version.state == "absent":
            return "", ""
        if version.state == "unstored":
            return None, f"its content was not stored ({version.reason})"
        assert version.blob is not None
        text = await self.store.get_text(version.blob)
        if text is None:
            return None, "its stored content was dropped (pruned by the checkpoint limits)"
        return text, ""

    async def files(self, run_id: str) -> list[ReviewedFile]:
        """The run's files under review (every status), in change order. A
        status the file as it is now changed (a restore) is recorded, so
        the store's (``rein/checkpoints``) agrees."""
        reviews = await self.store.reviews(self.session_id)
        decisions = await self.store.hunk_reviews(self.session_id)
        out: list[ReviewedFile] = []
        for path, net in (await self._net(run_id)).items():
            stored = reviews.get((run_id, path))
            if stored is None:
                continue
            file = await self._file(run_id, path, net, stored, decisions)
            for h in file.hunks:
                if h.status != decisions.get((run_id, path, h.hunk.index), "pending"):
                    await self.store.set_hunk_review(
                        self.session_id, run_id, path, h.hunk.index, h.status
                    )
            if file.status != stored:
                await self.store.set_review(self.session_id, run_id, path, file.status)
            out.append(file)
        return out

    async def _file(
        self,
        run_id: str,
        path: str,
        net: FileChange,
        stored: ReviewStatus,
        decisions: dict[tuple[str, str, int], HunkStatus],
    ) -> ReviewedFile:
        change: ChangeKind
        if net.renamed_from is not None:
            change = "renamed"
        elif net.before.state == "absent":
            change = "created"
        elif net.after.state == "absent":
            change = "deleted"
        else:
            change = "modified"
        before, why_before = await self._text(net.before)
        after, why_after = await self._text(net.after)
        if before is None or after is None:
            reason = (
                f"the version before the run: {why_before}"
                if before is None
                else f"the agent's version: {why_after}"
            )
            return ReviewedFile(
                path, change, stored, (), "", reason, before, after, renamed_from=net.renamed_from
            )
        old, new = lines_of(before), lines_of(after)
        whole = net.before.state == "absent" or net.after.state == "absent"
        if whole:
            hunks = [Hunk(0, (0, len(old)), (0, len(new)), tuple(old), tuple(new))]
        else:
            hunks = compute_hunks(old, new)
        stored_hunks: list[HunkStatus] = [
            decisions.get((run_id, path, h.index), "pending") for h in hunks
        ]
        statuses = await self._as_now(path, hunks, stored_hunks, new, whole, net)
        reviewed = tuple(ReviewedHunk(h, st) for h, st in zip(hunks, statuses, strict=True))
        status = file_status([h.status for h in reviewed]) if reviewed else stored
        return ReviewedFile(
            path,
            change,
            status,
            reviewed,
            unified_diff(old, new, path),
            "",
            before,
            after,
            whole,
            net.renamed_from,
            is_secret_blob(net.before.blob) or is_secret_blob(net.after.blob),
        )

    async def _as_now(
        self,
        path: str,
        hunks: list[Hunk],
        stored: list[HunkStatus],
        after: list[str],
        whole: bool,
        net: FileChange,
    ) -> list[HunkStatus]:
        """The hunks' statuses as the file is now: an undone hunk whose
        agent's lines are back (its undo was restored) is pending again; a
        hunk whose lines are the before-lines again (a restore, or the person,
        put them back) is undone. Otherwise the recorded status."""
        try:
            exists = await self.workspace.exists(path)
            current = lines_of((await self.workspace.read_text(path)).text) if exists else None
        except ToolError:
            return stored
        if whole:
            deleted = net.after.state == "absent"
            agent_now = not exists if deleted else current is not None and current == after
            before_now = (current == list(hunks[0].before)) if deleted else not exists
            return [
                "pending"
                if st == "undone" and agent_now
                else "undone"
                if st != "undone" and before_now
                else st
                for st in stored
            ]
        if current is None:
            return stored
        undone = {h.index for h, st in zip(hunks, stored, strict=True) if st == "undone"}
        out: list[HunkStatus] = []
        for hunk, st in zip(hunks, stored, strict=True):
            rest, with_it = undone - {hunk.index}, undone | {hunk.index}
            agent = locate(
                expected_lines(after, hunks, rest), current, hunk_offsets(hunks, rest)[hunk.index]
            )
            reverted = locate(
                expected_lines(after, hunks, with_it),
                current,
                hunk_offsets(hunks, with_it)[hunk.index],
            )
            if st == "undone" and agent is not None and reverted is None:
                out.append("pending")
            elif st != "undone" and reverted is not None and agent is None:
                out.append("undone")
            else:
                out.append(st)
        return out

    async def runs(self, run_id: str | None = None) -> list[tuple[str, list[ReviewedFile]]]:
        """Every run of the session with files under review (or one run,
        which must exist), oldest first."""
        if run_id is not None:
            await self._known_run(run_id)
            return [(run_id, await self.files(run_id))]
        reviewed = {rid for rid, _ in await self.store.reviews(self.session_id)}
        runs = [r.run_id for r in await self.store.runs(self.session_id) if r.run_id in reviewed]
        return [(rid, await self.files(rid)) for rid in runs]

    async def _known_run(self, run_id: str) -> None:
        ids = {r.run_id for r in await self.store.runs(self.session_id)}
        if run_id not in ids:
            raise ReviewError(f"no checkpoint run {run_id!r} in session {self.session_id}")

    # -------------------------------------------------------------- deciding

    async def decide(
        self,
        run_id: str,
        decision: Decision,
        path: str | None = None,
        hunk: int | None = None,
    ) -> DecideResult:
        """Keep or undo the run's pending changes: all of them (no path),
        one file, or one hunk of it. Raises :class:`ReviewError` for a run,
        path or hunk that is not under review (nothing changed)."""
        if hunk is not None and path is None:
            raise ReviewError("a hunk needs its path")
        async with self._lock:
            await self._known_run(run_id)
            files = await self.files(run_id)
            if not files:
                raise ReviewError(f"run {run_id} has no changes under review")
            if path is not None:
                files = [f for f in files if f.path == path]
                if not files:
                    raise ReviewError(f"{path} is not under review in run {run_id}")
                if hunk is not None and not 0 <= hunk < len(files[0].hunks):
                    raise ReviewError(
                        f"{path} has {len(files[0].hunks)} hunk(s) under review; "
                        f"there is no hunk {hunk}"
                    )
            batch = Batch(self, run_id)
            for file in files:
                if decision == "keep":
                    await batch.keep(file, hunk)
                else:
                    await batch.undo(file, hunk)
            return DecideResult(
                run_id, decision, tuple(batch.decided), tuple(batch.refused), batch.restore_id
            )
