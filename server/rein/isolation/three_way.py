"""An isolated run's hunks, three-way: each hunk of the run (base -> run,
cut as the review cuts a file: :func:`~rein.checkpoints.hunks.compute_hunks`)
is found in the folder's file as it is NOW with
:func:`~rein.checkpoints.hunks.locate`, the review's own test. A hunk whose
lines the folder still has as at the base is ``clean``; one whose lines
the folder changed since is a :class:`Conflict` with both sides (ours: the
folder's, theirs: the run's), never applied. Each hunk has an id
(:func:`hunk_id`: its file, index and a short hash of its lines) that
depends on the run only, so the person can list the hunks, keep some, and
apply only those; an id listed before the run changed again no longer
names a hunk (its hash differs) rather than naming another one."""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Literal

from rein.checkpoints.hunks import Hunk, apply_regions, compute_hunks, lines_of, locate

__all__ = [
    "BringBack",
    "Conflict",
    "HunkState",
    "clean_hunk",
    "hunk_id",
    "hunk_tag",
    "merge_into",
    "merge_text",
    "whole_hunk",
]


@dataclass(frozen=True, slots=True)
class Conflict:
    """A place the run and the folder both changed: never applied."""

    path: str
    base: str
    ours: str
    theirs: str
    reason: str = "the folder changed these lines since the run started"
    #: The hunk's index in its file and its :func:`hunk_tag` (its id:
    #: :func:`hunk_id`); index None for a note on the whole file (a mode
    #: the run changed), not a hunk.
    index: int | None = None
    tag: str = ""

    @property
    def hunk(self) -> str | None:
        return None if self.index is None else hunk_id(self.path, self.index, self.tag)

    def to_json(self) -> dict[str, str | None]:
        return {
            "id": self.hunk,
            "path": self.path,
            "base": self.base,
            "ours": self.ours,
            "theirs": self.theirs,
            "reason": self.reason,
        }


def hunk_id(path: str, index: int, tag: str) -> str:
    """A hunk's id: its file, its index among the run's hunks of the file
    (base -> run, as :func:`~rein.checkpoints.hunks.compute_hunks` numbers
    them; a whole-file change is hunk 0) and its :func:`hunk_tag`, e.g.
    ``app.py#1~3f2a9c``. It depends on the run only: an id listed before
    stays valid while the folder changes, and names no hunk once the run
    changed that hunk (a new prompt, a hand edit in the copy)."""
    return f"{path}#{index}~{tag}"


def hunk_tag(before: Sequence[str] | bytes | None, after: Sequence[str] | bytes | None) -> str:
    """A short hash of a hunk's old and new lines (or of a whole file's
    bytes on both sides, for one that is not merged as text)."""
    digest = hashlib.sha256()
    for side in (before, after):
        if side is None:
            digest.update(b"\1")
        elif isinstance(side, bytes):
            digest.update(b"\2" + side)
        else:
            digest.update(b"\3" + "".join(side).encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()[:6]


@dataclass(frozen=True, slots=True)
class HunkState:
    """One hunk of the run against the folder as it is now: ``clean``
    (it applies) or ``conflict`` (``conflict`` says both sides and why).
    ``lines`` are the hunk as a unified diff shows them (``-``/``+``)."""

    path: str
    index: int
    status: Literal["clean", "conflict"]
    header: str
    lines: tuple[str, ...]
    conflict: Conflict | None = None
    tag: str = ""

    @property
    def id(self) -> str:
        return hunk_id(self.path, self.index, self.tag)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.id,
            "index": self.index,
            "header": self.header,
            "lines": list(self.lines),
            "status": self.status,
        }
        if self.conflict is not None:
            out["conflict"] = self.conflict.to_json()
        return out


@dataclass(slots=True)
class BringBack:
    """What an apply did: the files written (``applied``), the hunks it
    applied, the conflicts it left alone, every hunk it weighed
    (``hunks``, clean or conflicting), the ids of the hunks the folder
    has already (``already_there``: nothing to apply) and of every other
    hunk it did not apply (``left_aside``: the ones the person did not
    keep, the conflicts, a file's hunks its conflict held back)."""

    applied: list[str] = field(default_factory=list)
    hunks_applied: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
    hunks: list[HunkState] = field(default_factory=list)
    left_aside: list[str] = field(default_factory=list)
    already_there: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "applied": self.applied,
            "hunksApplied": self.hunks_applied,
            "conflicts": [c.to_json() for c in self.conflicts],
            "leftAside": self.left_aside,
            "alreadyThere": self.already_there,
        }

    def conflict(self, conflict: Conflict, header: str = "", lines: Sequence[str] = ()) -> None:
        """Note ``conflict`` (and its hunk, when it is one)."""
        self.conflicts.append(conflict)
        if conflict.hunk is not None and conflict.index is not None:
            self.left_aside.append(conflict.hunk)
            lines = tuple(lines)
            state = HunkState(
                conflict.path, conflict.index, "conflict", header, lines, conflict, conflict.tag
            )
            self.hunks.append(state)


def _ours(base: Sequence[str], current: Sequence[str], region: tuple[int, int]) -> str:
    """The folder's lines where ``region`` of the base went (widened to
    every changed block that touches it)."""
    start, end = region
    lo: int | None = None
    hi: int | None = None
    matcher = difflib.SequenceMatcher(None, list(base), list(current), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 < start or i1 > end:
            continue
        if tag == "equal":
            a, b = max(i1, start), min(i2, end)
            if a > b:
                continue
            s, e = j1 + (a - i1), j1 + (b - i1)
        else:
            s, e = j1, j2
        lo = s if lo is None else min(lo, s)
        hi = e if hi is None else max(hi, e)
    if lo is None or hi is None:
        return ""
    return "".join(current[lo:hi])


def merge_text(path: str, base: str, run: str, current: str) -> tuple[str, int, list[Conflict]]:
    """``current`` with every hunk of base -> run that applies cleanly
    applied; the number applied and the conflicts."""
    out = BringBack()
    merged, applied = merge_into(path, base, run, current, None, out)
    return merged, applied, out.conflicts


def merge_into(
    path: str, base: str, run: str, current: str, keep: Container[str] | None, out: BringBack
) -> tuple[str, int]:
    """:func:`merge_text` of the hunks with an id in ``keep`` (all: None),
    noting every hunk (and what was left aside) in ``out``; the merged text
    and the number of hunks applied."""
    base_l, run_l, cur_l = lines_of(base), lines_of(run), lines_of(current)
    clean: list[tuple[tuple[int, int], Sequence[str]]] = []
    for hunk in compute_hunks(base_l, run_l):
        tag = hunk_tag(hunk.before, hunk.after)
        where = locate(base_l, cur_l, hunk.old)
        if where is None and locate(run_l, cur_l, hunk.new) is not None:
            # The folder has the run's lines there already (applied before).
            out.already_there.append(hunk_id(path, hunk.index, tag))
            continue
        if where is None:
            ours = _ours(base_l, cur_l, hunk.old)
            before, after = "".join(hunk.before), "".join(hunk.after)
            conflict = Conflict(path, before, ours, after, index=hunk.index, tag=tag)
            out.conflict(conflict, hunk.header, hunk.diff_lines())
            continue
        out.hunks.append(clean_hunk(path, hunk))
        if keep is not None and hunk_id(path, hunk.index, tag) not in keep:
            out.left_aside.append(hunk_id(path, hunk.index, tag))
        else:
            clean.append((where, hunk.after))
    return "".join(apply_regions(cur_l, clean)), len(clean)


def clean_hunk(path: str, hunk: Hunk) -> HunkState:
    """``hunk`` of ``path``, applying cleanly."""
    lines = tuple(hunk.diff_lines())
    tag = hunk_tag(hunk.before, hunk.after)
    return HunkState(path, hunk.index, "clean", hunk.header, lines, tag=tag)


def whole_hunk(before: str | None, after: str | None) -> Hunk:
    """A whole file's change as one hunk (index 0): created, deleted or a
    file's every line."""
    old, new = lines_of(before or ""), lines_of(after or "")
    return Hunk(0, (0, len(old)), (0, len(new)), tuple(old), tuple(new))
