"""An isolated run's hunks, three-way: each hunk of the run (base -> run,
cut as the review cuts a file: :func:`~rein.checkpoints.hunks.compute_hunks`)
is found in the folder's file as it is NOW with
:func:`~rein.checkpoints.hunks.locate`, the review's own test. A hunk whose
lines the folder still has as at the base is ``clean``; one whose lines
the folder changed since is a :class:`Conflict` with both sides (ours: the
folder's, theirs: the run's), never applied. Each hunk has an id
(:func:`hunk_id`: its file and index) that depends on the run only, so the
person can list the hunks, keep some, and apply only those."""

from __future__ import annotations

import difflib
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
    #: The hunk's index in its file (its id: :func:`hunk_id`); None for a
    #: note on the whole file (a mode the run changed), not a hunk.
    index: int | None = None

    @property
    def hunk(self) -> str | None:
        return None if self.index is None else hunk_id(self.path, self.index)

    def to_json(self) -> dict[str, str | None]:
        return {
            "id": self.hunk,
            "path": self.path,
            "base": self.base,
            "ours": self.ours,
            "theirs": self.theirs,
            "reason": self.reason,
        }


def hunk_id(path: str, index: int) -> str:
    """A hunk's id: its file and its index among the run's hunks of the
    file (base -> run, as :func:`~rein.checkpoints.hunks.compute_hunks`
    numbers them; a whole-file change is hunk 0). It depends on the run
    only, so an id listed before stays valid while the folder changes."""
    return f"{path}#{index}"


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

    @property
    def id(self) -> str:
        return hunk_id(self.path, self.index)

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
        if conflict.index is not None:
            self.left_aside.append(hunk_id(conflict.path, conflict.index))
            self.hunks.append(
                HunkState(conflict.path, conflict.index, "conflict", header, tuple(lines), conflict)
            )


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
        where = locate(base_l, cur_l, hunk.old)
        if where is None and locate(run_l, cur_l, hunk.new) is not None:
            # The folder has the run's lines there already (applied before).
            out.already_there.append(hunk_id(path, hunk.index))
            continue
        if where is None:
            ours = _ours(base_l, cur_l, hunk.old)
            conflict = Conflict(
                path, "".join(hunk.before), ours, "".join(hunk.after), index=hunk.index
            )
            out.conflict(conflict, hunk.header, hunk.diff_lines())
            continue
        out.hunks.append(clean_hunk(path, hunk))
        if keep is not None and hunk_id(path, hunk.index) not in keep:
            out.left_aside.append(hunk_id(path, hunk.index))
        else:
            clean.append((where, hunk.after))
    return "".join(apply_regions(cur_l, clean)), len(clean)


def clean_hunk(path: str, hunk: Hunk) -> HunkState:
    """``hunk`` of ``path``, applying cleanly."""
    return HunkState(path, hunk.index, "clean", hunk.header, tuple(hunk.diff_lines()))


def whole_hunk(before: str | None, after: str | None) -> Hunk:
    """A whole file's change as one hunk (index 0): created, deleted or a
    file's every line."""
    old, new = lines_of(before or ""), lines_of(after or "")
    return Hunk(0, (0, len(old)), (0, len(new)), tuple(old), tuple(new))
