"""Checkpoints: what each run changed, with the content to undo it.

Rein already numbers every applied change (a mutation generation). A
checkpoint adds the content: before a run changes a file, the file's text is
stored (content-addressed by SHA-256, so the same text is stored once), and
each change records, per file, the version before and after it. With that a
run, a turn of a run, or one file can be put back as it was
(:mod:`rein.checkpoints.restore`), and a change can be reviewed before it is kept.

This module holds the model and the :class:`CheckpointStore` port. The
SQLite store (``rein.store.checkpoints``) keeps it next to the session
database, compressed and bounded; :class:`MemoryCheckpointStore` keeps it in
memory when the store cannot be used (the person is told once, as for
sessions) and in unit tests.

Vocabulary:

* a **checkpoint run** is one agent run that changed files (its
  ``run_id`` is the run's), or a restore (``kind == "restore"``, its id is
  new), which is itself undoable;
* a **change** is one generation of that run: its turn, who made it, and a
  :class:`FileChange` per path;
* a **file version** is a stored text (its hash), ``absent`` (no file), or
  ``unstored`` with the reason (binary, over the size limit, changed by a
  command before Rein could read it); with the file's permission bits
  (``mode``) and, for a symbolic link, its target (``link``) when they were
  read from the disk (:mod:`rein.checkpoints.file_meta`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from rein.checkpoints.secret_keep import MemorySecretKeep, is_secret_blob

__all__ = [
    "CheckpointChange",
    "CheckpointRun",
    "CheckpointStore",
    "FileChange",
    "FileVersion",
    "HunkStatus",
    "MemoryCheckpointStore",
    "ReviewStatus",
    "net_files",
    "text_hash",
]

#: Who made a change: a tool through the workspace, a process a tool started,
#: a subagent of the run, or a restore.
ChangeOrigin = Literal["tool", "command", "subagent", "restore"]

#: A reviewed file's state (approval ``write: "review"``): "mixed" when some
#: of its hunks were kept and others undone.
ReviewStatus = Literal["pending", "kept", "undone", "mixed"]

#: One hunk's state (:mod:`rein.checkpoints.review`); a hunk of a reviewed file
#: with no recorded decision is pending.
HunkStatus = Literal["pending", "kept", "undone"]


def text_hash(text: str) -> str:
    """The blob id of ``text``: SHA-256 of its UTF-8 bytes, hex."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class FileVersion:
    """A file's content at one moment."""

    state: Literal["text", "absent", "unstored"]
    #: The blob id (:func:`text_hash`) when ``state == "text"``.
    blob: str | None = None
    #: Why the content was not stored, when ``state == "unstored"``.
    reason: str = ""
    # Equality (``==``, a set) is the content's; :meth:`same_as` also
    # compares the mode and the link.
    #: The permission bits of a regular file (``0o755``); None: not known
    #: (a checkpoint of an older Rein, a workspace with no disk).
    mode: int | None = field(default=None, compare=False)
    #: The path was a symbolic link to this target (as the link says it);
    #: ``state`` is then its content read through it (``absent`` when the
    #: link leads nowhere).
    link: str | None = field(default=None, compare=False)

    @property
    def present(self) -> bool:
        """Something is at the path (a file, or a link, even a dangling one)."""
        return self.state != "absent" or self.link is not None

    def with_meta(self, mode: int | None, link: str | None) -> FileVersion:
        return replace(self, mode=mode, link=link)

    def same_as(self, other: FileVersion) -> bool:
        """The same content, link and mode, a mode known on one side only
        not counting (older checkpoints, an editor's unsaved file)."""
        if (self.state, self.blob, self.link) != (other.state, other.blob, other.link):
            return False
        return self.mode is None or other.mode is None or self.mode == other.mode

    @classmethod
    def of_text(cls, text: str) -> FileVersion:
        return cls("text", text_hash(text))

    @classmethod
    def absent(cls) -> FileVersion:
        return cls("absent")

    @classmethod
    def unstored(cls, reason: str) -> FileVersion:
        return cls("unstored", None, reason)

    def to_json(self) -> dict[str, str | int]:
        out: dict[str, str | int] = {"state": self.state}
        if self.blob is not None:
            out["blob"] = self.blob
        if self.reason:
            out["reason"] = self.reason
        if self.mode is not None:
            out["mode"] = self.mode
        if self.link is not None:
            out["link"] = self.link
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, str | int | None]) -> FileVersion:
        state = data["state"]
        if state not in ("text", "absent", "unstored"):
            raise ValueError(f"unknown file version state {state!r}")
        blob, reason, mode, link = (data.get(k) for k in ("blob", "reason", "mode", "link"))
        return cls(
            state,  # type: ignore[arg-type]
            str(blob) if blob is not None else None,
            str(reason or ""),
            int(mode) if mode is not None else None,
            str(link) if link is not None else None,
        )


@dataclass(frozen=True, slots=True)
class FileChange:
    """One path of a change: what it was before and after."""

    #: Workspace-relative, with forward slashes.
    path: str
    before: FileVersion
    after: FileVersion
    #: For the new path of a rename: the old path.
    renamed_from: str | None = None

    @property
    def kind(self) -> Literal["created", "modified", "deleted", "renamed"]:
        if self.renamed_from is not None:
            return "renamed"
        if not self.before.present:
            return "created"
        if not self.after.present:
            return "deleted"
        return "modified"


@dataclass(frozen=True, slots=True)
class CheckpointChange:
    """One generation of a checkpoint run."""

    session_id: str
    run_id: str
    #: The run's turn in which it was made (1-based; 0 for a restore).
    turn: int
    generation: int
    origin: ChangeOrigin
    files: tuple[FileChange, ...]
    #: Wall-clock time (seconds since the epoch).
    at: float


@dataclass(frozen=True, slots=True)
class CheckpointRun:
    """A run (or a restore) that changed files, in the order runs started."""

    session_id: str
    run_id: str
    #: The workspace root it changed (limits are per workspace).
    workspace: str
    kind: Literal["run", "restore"]
    #: The prompt's first line, or what a restore restored.
    title: str
    started_at: float
    #: Stored bytes this run's blobs hold alone (not shared with other runs).
    bytes: int = 0
    #: When the checkpoint's content was dropped by the storage limits (the
    #: run is still listed, it can no longer be restored).
    pruned_at: float | None = None
    #: Why it was dropped ("checkpoints.maxMb 200 reached", "older than ...").
    pruned_reason: str = ""
    #: For a restore: the run (and turn) it restored to before.
    restored_run: str | None = None
    restored_turn: int | None = None


class CheckpointStore(Protocol):
    """Where checkpoints live. Every method is safe to call from the event
    loop (a disk store runs on a worker thread). Errors are
    :class:`~rein.harness.errors.StoreError`."""

    async def put_text(self, text: str) -> str:
        """Store ``text`` once (deduplicated by hash); returns its blob id."""
        ...

    async def put_secret(self, text: str) -> str:
        """Keep the text of a secret file (``tools.secretFiles``) apart from
        the other texts, never in the store's database
        (:mod:`rein.checkpoints.secret_keep`); returns its blob id
        (``secret:...``), which :meth:`get_text` reads like any other."""
        ...

    async def get_text(self, blob: str) -> str | None:
        """The text of ``blob``; None when it was pruned or never stored."""
        ...

    async def begin_run(self, run: CheckpointRun) -> None:
        """Register a run before its first change is recorded (idempotent)."""
        ...

    async def record(self, change: CheckpointChange) -> None:
        """Add one change to its run (registered with :meth:`begin_run`)."""
        ...

    async def runs(self, session_id: str) -> list[CheckpointRun]:
        """The session's checkpoint runs, oldest first, pruned ones included."""
        ...

    async def changes(self, session_id: str, run_id: str | None = None) -> list[CheckpointChange]:
        """The session's changes (or one run's) in generation order."""
        ...

    async def set_review(
        self, session_id: str, run_id: str, path: str, status: ReviewStatus
    ) -> None:
        """Record a review decision for ``path`` of a run."""
        ...

    async def reviews(self, session_id: str) -> dict[tuple[str, str], ReviewStatus]:
        """Review states by (run id, path)."""
        ...

    async def set_hunk_review(
        self, session_id: str, run_id: str, path: str, hunk: int, status: HunkStatus
    ) -> None:
        """Record a review decision for one hunk (its index) of ``path``."""
        ...

    async def hunk_reviews(self, session_id: str) -> dict[tuple[str, str, int], HunkStatus]:
        """Hunk decisions by (run id, path, hunk index)."""
        ...

    async def prune(
        self, workspace: str, *, max_bytes: int, max_age_s: float, now: float
    ) -> list[CheckpointRun]:
        """Drop the content of the workspace's oldest runs until its stored
        bytes are within ``max_bytes`` and no run is older than ``max_age_s``
        (0: no age limit). Returns the runs dropped now (with ``pruned_at``)."""
        ...

    async def size(self, workspace: str | None = None) -> int:
        """Stored bytes (compressed) of a workspace's checkpoints, or all."""
        ...

    async def session_size(self, session_id: str) -> int:
        """Stored bytes of the blobs the session's live runs hold."""
        ...


def net_files(changes: Sequence[CheckpointChange]) -> list[FileChange]:
    """What ``changes`` did to each path taken together (first before ->
    last after), in the order the paths were first changed; a path whose
    net before and after are the same (written back, created then deleted)
    is left out. The new path of a rename keeps ``renamed_from`` when the
    rename was its first change."""
    first: dict[str, FileChange] = {}
    last: dict[str, FileVersion] = {}
    for change in sorted(changes, key=lambda c: (c.generation, c.at)):
        for file in change.files:
            first.setdefault(file.path, file)
            last[file.path] = file.after
    out: list[FileChange] = []
    for path, head in first.items():
        after = last[path]
        if head.before.same_as(after) and head.before.state != "unstored":
            continue
        out.append(FileChange(path, head.before, after, head.renamed_from))
    return out


@dataclass
class _MemoryRun:
    run: CheckpointRun
    changes: list[CheckpointChange] = field(default_factory=list)


class MemoryCheckpointStore:
    """A :class:`CheckpointStore` in memory: the store of a session kept in
    memory (no usable disk store) and of unit tests. Sizes count raw UTF-8
    bytes; pruning drops a run's blobs that no kept run references."""

    def __init__(self) -> None:
        self._blobs: dict[str, str] = {}
        self._secrets = MemorySecretKeep()
        self._runs: dict[tuple[str, str], _MemoryRun] = {}
        self._reviews: dict[str, dict[tuple[str, str], ReviewStatus]] = {}
        self._hunk_reviews: dict[str, dict[tuple[str, str, int], HunkStatus]] = {}

    async def put_text(self, text: str) -> str:
        blob = text_hash(text)
        self._blobs.setdefault(blob, text)
        return blob

    async def put_secret(self, text: str) -> str:
        return self._secrets.put(text)

    async def get_text(self, blob: str) -> str | None:
        if is_secret_blob(blob):
            return self._secrets.get(blob)
        return self._blobs.get(blob)

    async def begin_run(self, run: CheckpointRun) -> None:
        self._runs.setdefault((run.session_id, run.run_id), _MemoryRun(run))

    async def record(self, change: CheckpointChange) -> None:
        entry = self._runs.get((change.session_id, change.run_id))
        if entry is None:
            raise KeyError(f"checkpoint run {change.run_id} was not begun")
        entry.changes.append(change)

    def _sized(self, entry: _MemoryRun) -> CheckpointRun:
        return replace(entry.run, bytes=self._own_bytes(entry))

    async def runs(self, session_id: str) -> list[CheckpointRun]:
        return [self._sized(e) for (sid, _), e in self._runs.items() if sid == session_id]

    async def changes(self, session_id: str, run_id: str | None = None) -> list[CheckpointChange]:
        out = [
            c
            for (sid, rid), e in self._runs.items()
            if sid == session_id and (run_id is None or rid == run_id)
            for c in e.changes
        ]
        return sorted(out, key=lambda c: (c.generation, c.at))

    async def set_review(
        self, session_id: str, run_id: str, path: str, status: ReviewStatus
    ) -> None:
        self._reviews.setdefault(session_id, {})[(run_id, path)] = status

    async def reviews(self, session_id: str) -> dict[tuple[str, str], ReviewStatus]:
        return dict(self._reviews.get(session_id, {}))

    async def set_hunk_review(
        self, session_id: str, run_id: str, path: str, hunk: int, status: HunkStatus
    ) -> None:
        self._hunk_reviews.setdefault(session_id, {})[(run_id, path, hunk)] = status

    async def hunk_reviews(self, session_id: str) -> dict[tuple[str, str, int], HunkStatus]:
        return dict(self._hunk_reviews.get(session_id, {}))

    @staticmethod
    def _blobs_of(entries: Sequence[_MemoryRun]) -> set[str]:
        return {
            v.blob
            for e in entries
            if e.run.pruned_at is None
            for c in e.changes
            for f in c.files
            for v in (f.before, f.after)
            if v.blob is not None
        }

    def _own_bytes(self, entry: _MemoryRun) -> int:
        others = self._blobs_of([e for e in self._runs.values() if e is not entry])
        mine = self._blobs_of([entry]) - others
        return sum(
            len(self._blobs[b].encode("utf-8", "surrogatepass")) for b in mine if b in self._blobs
        )

    async def prune(
        self, workspace: str, *, max_bytes: int, max_age_s: float, now: float
    ) -> list[CheckpointRun]:
        dropped: list[CheckpointRun] = []
        live = sorted(
            (
                e
                for e in self._runs.values()
                if e.run.workspace == workspace and e.run.pruned_at is None
            ),
            key=lambda e: e.run.started_at,
        )
        for entry in live:
            too_old = max_age_s > 0 and now - entry.run.started_at > max_age_s
            too_big = await self.size(workspace) > max_bytes
            if not (too_old or too_big):
                break
            reason = (
                f"older than {max_age_s / 86400:g} days (checkpoints.maxAgeDays)"
                if too_old
                else f"over the size limit of {max_bytes / 1048576:g} MB (checkpoints.maxMb)"
            )
            freed = self._own_bytes(entry)
            entry.run = replace(entry.run, pruned_at=now, pruned_reason=reason)
            keep = self._blobs_of(list(self._runs.values()))
            for blob in (
                self._blobs_of([replace(entry, run=replace(entry.run, pruned_at=None))]) - keep
            ):
                self._blobs.pop(blob, None)
            dropped.append(replace(entry.run, bytes=freed))
        return dropped

    async def size(self, workspace: str | None = None) -> int:
        entries = [
            e for e in self._runs.values() if workspace is None or e.run.workspace == workspace
        ]
        return self._bytes_of(entries)

    async def session_size(self, session_id: str) -> int:
        return self._bytes_of([e for e in self._runs.values() if e.run.session_id == session_id])

    def _bytes_of(self, entries: Sequence[_MemoryRun]) -> int:
        return sum(
            len(self._blobs[b].encode("utf-8", "surrogatepass"))
            for b in self._blobs_of(entries)
            if b in self._blobs
        )
