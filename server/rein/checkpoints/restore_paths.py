"""A path as a restore finds it (:class:`Current`: the workspace's text, the
disk's mode and link) and the rules that compare it with the checkpoint's
versions: is it the target already (:meth:`Current.matches`, a link made
again: :func:`link_back`), or as an interrupted restore left it
(:func:`interrupted`). Used by :mod:`rein.checkpoints.restore`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rein.checkpoints.model import CheckpointChange, FileChange, FileVersion, text_hash

__all__ = ["DANGLING", "Current", "interrupted", "link_back", "written_through"]

#: Why a link's content is not read: it leads nowhere.
DANGLING = "a symbolic link to nothing"


@dataclass(slots=True)
class Current:
    """A path in the workspace now."""

    exists: bool
    text: str | None = None
    #: The editor's document version when it came from an open buffer.
    version: int | None = None
    #: Why the text could not be read (binary, a directory).
    unreadable: str = ""
    #: The permission bits on disk (None: not a regular file, or not known).
    mode: int | None = None
    #: The target, when the path is a symbolic link.
    link: str | None = None
    #: The blob id of its text as a secret file's is kept apart
    #: (:meth:`~rein.checkpoints.model.CheckpointStore.put_secret`), when
    #: the path is one.
    kept: str | None = None

    def same_text(self, version: FileVersion) -> bool:
        if version.state != "text" or self.text is None:
            return False
        if self.kept is not None:
            return version.blob == self.kept
        return text_hash(self.text) == version.blob

    def matches(self, version: FileVersion) -> bool:
        if not version.present:
            return not self.exists
        if version.link is not None:
            # The link is what counts; its content when it was stored.
            return self.link == version.link and (
                version.state != "text" or self.same_text(version)
            )
        if self.link is not None and version.mode is not None:
            return False  # a regular file then, a link now
        if not self.same_text(version):
            return False
        return version.mode is None or self.mode is None or self.mode == version.mode

    def mode_only(self, target: FileVersion) -> bool:
        """Only the mode keeps it from ``target`` (a regular file's)."""
        return (
            target.link is None
            and self.link is None
            and target.mode is not None
            and self.same_text(target)
        )

    @property
    def as_version(self) -> FileVersion:
        if not self.exists:
            return FileVersion.absent()
        if self.text is None:
            version = (
                FileVersion.absent()
                if self.link is not None and self.unreadable == DANGLING
                else FileVersion.unstored(self.unreadable)
            )
        elif self.kept is not None:
            version = FileVersion("text", self.kept)
        else:
            version = FileVersion.of_text(self.text)
        return version.with_meta(self.mode, self.link)


def written_through(
    link: str, history: Sequence[tuple[CheckpointChange, FileChange]]
) -> tuple[FileVersion, FileVersion] | None:
    """The writes through the symbolic link ``link`` (changes with the same
    link on both sides, its content changed): what it led to before the
    first, and after the last; None when nothing was written through it."""
    writes = [
        file
        for _, file in history
        if file.before.link == link
        and file.after.link == link
        and (file.before.state, file.before.blob) != (file.after.state, file.after.blob)
    ]
    if not writes:
        return None
    return writes[0].before, writes[-1].after


def link_back(
    current: Current, target: FileVersion, history: Sequence[tuple[CheckpointChange, FileChange]]
) -> bool:
    """The link a run removed or changed (a restore made it again) is there
    again, and nothing was written through it: what it leads to is a file
    of its own (restored by its own path if a run changed it), so its
    content does not count. A link written through (made again first or
    not) has its content restored through it (:func:`written_through`)."""
    link = target.link
    return (
        link is not None
        and current.link == link
        and any(link != file.before.link or link != file.after.link for _, file in history)
        and written_through(link, history) is None
    )


def interrupted(current: Current, history: Sequence[tuple[CheckpointChange, FileChange]]) -> bool:
    """The path is as a restore that came last found it, or has its text
    and not yet its mode: that restore was stopped before it wrote this
    file (its journal is written first) or before it set its mode, so the
    file is still the runs' (or the restore's) and may be written."""
    for change, file in reversed(history):
        if change.origin != "restore":
            return False
        if current.matches(file.before) or current.mode_only(file.after):
            return True  # not written, or its text written and not its mode
    return False
