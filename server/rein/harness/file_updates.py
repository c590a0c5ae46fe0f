"""A multi-file change applied file by file, put back on a failure.

What a :class:`~rein.harness.ports.MultiFileWorkspace` that cannot apply
several files at once does (the disk, the ACP client's buffers, a plain
Workspace under a :class:`~rein.harness.generations.TrackedWorkspace`):
every file's text is read and checked against the text the change was
computed from before anything is written, then the files are written in
turn; when one fails, the ones already written are put back, each only if
it still holds what was written (a file changed again meanwhile is left
alone and named: :class:`PartlyAppliedError` carries their paths, so the
caller can record them). The caller records the whole change as one
generation. A cancellation part-way (the run aborted) puts the written files
back too, shielded and bounded, before it goes on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

import anyio

from rein.harness.errors import FileChangedError, ToolError
from rein.harness.ports import FileUpdate

__all__ = [
    "PUT_BACK_BOUND_S",
    "PartlyAppliedError",
    "ReadCurrent",
    "WriteOne",
    "apply_in_turn",
    "check_unique",
]

#: How long the put-back after a cancellation may take (it runs shielded).
PUT_BACK_BOUND_S = 5.0

#: The text of a path now (None: it does not exist).
ReadCurrent = Callable[[str], Awaitable[str | None]]
#: Make ``path`` hold ``text`` (None: delete it), refused with
#: FileChangedError when it no longer holds ``expected`` (None: unchecked).
WriteOne = Callable[[str, str | None, str | None], Awaitable[None]]


def check_unique(changes: Sequence[FileUpdate]) -> tuple[str, ...]:
    """The paths of ``changes``, in order; a ToolError when one is there
    twice (a multi-file change has one update per file)."""
    paths = tuple(change.path for change in changes)
    if len(set(paths)) != len(paths):
        twice = sorted({p for p in paths if paths.count(p) > 1})
        raise ToolError(f"a multi-file change names {', '.join(twice)} twice; nothing changed.")
    if not paths:
        raise ToolError("a multi-file change with no file; nothing changed.")
    return paths


class PartlyAppliedError(ToolError):
    """A multi-file change failed and some files it wrote stay changed
    (they changed again, so they were not put back): ``changed`` names
    them, for the caller to record as a change."""

    def __init__(self, message: str, changed: Sequence[str]) -> None:
        super().__init__(message)
        self.changed = tuple(changed)


async def apply_in_turn(
    changes: Sequence[FileUpdate], read: ReadCurrent, write: WriteOne
) -> Mapping[str, str | None]:
    """Apply ``changes`` one file after the other through ``write``, after
    checking every ``expected_text`` with ``read``; returns each path's
    text before the change. On a failure the files already written are put
    back and a ToolError (a FileChangedError when a file changed) says
    what happened to each (a :class:`PartlyAppliedError` when some stay
    changed). A cancellation puts the written files back (shielded, within
    :data:`PUT_BACK_BOUND_S`) and goes on."""
    check_unique(changes)
    before: dict[str, str | None] = {}
    for change in changes:
        now = await read(change.path)
        if change.expected_text is not None and now != change.expected_text:
            raise FileChangedError(
                f"{change.path} changed since it was read (by another edit, session or the "
                "person); nothing was written."
            )
        if change.text is None and now is None:
            raise ToolError(f"File not found: {change.path}; nothing was written.")
        before[change.path] = now
    written: list[FileUpdate] = []
    for change in changes:
        try:
            await write(change.path, change.text, before[change.path])
        except Exception as exc:
            raise _failed(exc, change.path, await _put_back(written, before, write)) from None
        except BaseException:
            # Cancelled (the run was aborted) while ``change`` was written: it
            # may have landed, so it is put back with the others.
            with anyio.CancelScope(shield=True), anyio.move_on_after(PUT_BACK_BOUND_S):
                await _put_back([*written, change], before, write)
            raise
        written.append(change)
    return before


async def _put_back(
    written: Sequence[FileUpdate], before: Mapping[str, str | None], write: WriteOne
) -> tuple[list[str], list[str]]:
    """Each written file back to its text before (only if it still holds
    what was written); (put back, left alone)."""
    restored: list[str] = []
    kept: list[str] = []
    for change in reversed(written):
        try:
            await write(change.path, before[change.path], change.text)
            restored.append(change.path)
        except Exception:
            kept.append(change.path)
    return sorted(restored), sorted(kept)


def _failed(exc: Exception, path: str, outcome: tuple[list[str], list[str]]) -> ToolError:
    restored, kept = outcome
    why = "it changed meanwhile" if isinstance(exc, FileChangedError) else str(exc)
    message = f"Could not write {path} ({why}); it was not changed."
    if restored:
        message += f" Put back as they were: {', '.join(restored)}."
    if kept:
        message += (
            f" Still changed (they changed again, so they were left alone): {', '.join(kept)}."
        )
    else:
        message += " Nothing stays changed."
    if kept:
        return PartlyAppliedError(message, kept)
    cls = FileChangedError if isinstance(exc, FileChangedError) else ToolError
    return cls(message)
