"""Line hunks of a reviewed file, and where a hunk is in the text now.

A reviewed file has a version before the run (``before``) and the agent's
latest version (``after``). Its hunks are the places where they differ: each
non-equal opcode of :class:`difflib.SequenceMatcher` over their lines (no
context lines, so two hunks are always separated by at least one unchanged
line). A hunk is kept or undone on its own; undoing it puts its
``before`` lines back in place of its ``after`` lines.

The text a file should have now follows from the decisions: the agent's
after-text with every undone hunk reverted (:func:`expected_lines`). The
person may have typed since; :func:`locate` finds a hunk's region in the
current text through a diff of the expected text against it, and refuses
(returns None) when the region itself was changed: a hunk is only undone
where the agent's lines are still exactly as the agent left them.

Lines keep their line endings (``splitlines(keepends=True)``), so joining
them gives the text back exactly.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "Hunk",
    "apply_regions",
    "compute_hunks",
    "expected_lines",
    "hunk_offsets",
    "lines_of",
    "locate",
    "unified_diff",
]


def lines_of(text: str) -> list[str]:
    """``text`` as lines that keep their endings (joined: ``text`` again)."""
    return text.splitlines(keepends=True)


@dataclass(frozen=True, slots=True)
class Hunk:
    """One place where the after-text differs from the before-text.

    ``old``/``new`` are 0-based half-open line ranges of the before- and
    after-text; the ``*_start``/``*_lines`` properties give them as a
    unified diff header spells them (1-based; the line before when empty).
    """

    index: int
    old: tuple[int, int]
    new: tuple[int, int]
    before: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def old_start(self) -> int:
        return self.old[0] + 1 if self.before else self.old[0]

    @property
    def old_lines(self) -> int:
        return len(self.before)

    @property
    def new_start(self) -> int:
        return self.new[0] + 1 if self.after else self.new[0]

    @property
    def new_lines(self) -> int:
        return len(self.after)

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_lines} +{self.new_start},{self.new_lines} @@"

    def diff_lines(self) -> list[str]:
        """The hunk's lines as a unified diff shows them, without endings."""
        return [f"-{_bare(line)}" for line in self.before] + [
            f"+{_bare(line)}" for line in self.after
        ]


def _bare(line: str) -> str:
    return line.rstrip("\r\n")


def compute_hunks(before: Sequence[str], after: Sequence[str]) -> list[Hunk]:
    """The hunks between two line lists, in order (indices from 0)."""
    matcher = difflib.SequenceMatcher(None, list(before), list(after), autojunk=False)
    hunks: list[Hunk] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        hunks.append(
            Hunk(len(hunks), (i1, i2), (j1, j2), tuple(before[i1:i2]), tuple(after[j1:j2]))
        )
    return hunks


def expected_lines(after: Sequence[str], hunks: Sequence[Hunk], undone: Iterable[int]) -> list[str]:
    """The after-text with the ``undone`` hunks reverted: what the file
    holds when nobody else changed it."""
    reverted = set(undone)
    out: list[str] = []
    pos = 0
    for hunk in hunks:
        out.extend(after[pos : hunk.new[0]])
        out.extend(hunk.before if hunk.index in reverted else hunk.after)
        pos = hunk.new[1]
    out.extend(after[pos:])
    return out


def hunk_offsets(hunks: Sequence[Hunk], undone: Iterable[int]) -> dict[int, tuple[int, int]]:
    """Each hunk's region (0-based, half-open) in :func:`expected_lines`:
    its before-lines where it is undone, its after-lines elsewhere."""
    reverted = set(undone)
    shift = 0
    out: dict[int, tuple[int, int]] = {}
    for hunk in hunks:
        start = hunk.new[0] + shift
        size = len(hunk.before) if hunk.index in reverted else len(hunk.after)
        out[hunk.index] = (start, start + size)
        if hunk.index in reverted:
            shift += len(hunk.before) - len(hunk.after)
    return out


_START = object()
_END = object()


def locate(
    expected: Sequence[str], current: Sequence[str], region: tuple[int, int]
) -> tuple[int, int] | None:
    """Where ``region`` of ``expected`` is in ``current``, or None when the
    person changed it.

    A region with lines must lie, whole, in one unchanged stretch of the
    two texts (nothing in it changed, nothing inserted inside it). An empty
    region (a place where the agent only removed lines) must have its
    neighbouring lines unchanged and nothing inserted between them.
    """
    if list(expected) == list(current):
        return region
    start, end = region
    # Sentinels make "the start of the file" and "the end" ordinary
    # neighbours, so an empty region always has two.
    exp: list[object] = [_START, *expected, _END]
    cur: list[object] = [_START, *current, _END]
    matcher = difflib.SequenceMatcher(None, exp, cur, autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag != "equal":
            continue
        if end > start:
            inside = i1 <= start + 1 and end + 1 <= i2
        else:
            # Neighbours ``start`` and ``start + 1`` (padded) both unchanged.
            inside = i1 <= start and start + 1 < i2
        if inside:
            shift = j1 - i1
            return (start + shift, end + shift)
    return None


def apply_regions(
    current: Sequence[str], replacements: Iterable[tuple[tuple[int, int], Sequence[str]]]
) -> list[str]:
    """``current`` with each region replaced by its lines. Regions must not
    overlap; they are applied from the bottom up so earlier ones keep their
    positions."""
    out = list(current)
    for (start, end), lines in sorted(replacements, key=lambda r: r[0], reverse=True):
        out[start:end] = list(lines)
    return out


def unified_diff(before: Sequence[str], after: Sequence[str], path: str) -> str:
    """A unified diff (three lines of context) of before -> after."""
    return "".join(
        line if line.endswith("\n") else line + "\n"
        for line in difflib.unified_diff(
            list(before), list(after), fromfile=f"a/{path}", tofile=f"b/{path}"
        )
    )
