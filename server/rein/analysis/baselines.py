"""What the analyzer gate compares against: baselines and the matching rules.

A run must be blocked by what it broke, never by what it found. Two kinds of
baseline:

* the **run-start** snapshot: every file the analyzers know, taken when the
  run starts; it judges the files the run did not change (an error there is
  blocking only when it is not in this snapshot);
* a **per-file** baseline, taken just before the run first changes a file
  (the workspace layer awaits :meth:`Baselines.before_change` before it
  applies a write, delete or rename): the file's text and its settled
  diagnostics. An error in a changed file is blocking only when it is new
  relative to that file's own baseline, with the baseline's lines mapped
  through the change (:func:`line_map`): an error that moved because lines
  were inserted above it is the same error. A renamed file's baseline is
  the old path's, carried to the new path (:func:`carried`): its old errors
  at the new path are not the run's, its new ones are.

The same error reported by two analyzers (ruff's F821 and basedpyright's
reportUndefinedVariable for one undefined name) is one blocker naming both
(:func:`merge_same_errors`).
"""

from __future__ import annotations

import difflib
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rein.harness.ports import Diagnostic

__all__ = [
    "FileBaseline",
    "LineMap",
    "blocking_in_file",
    "blocking_in_untouched_files",
    "blocking_untouched",
    "carried",
    "line_map",
    "merge_same_errors",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FileBaseline:
    """A file as it was before the run first changed it."""

    path: str
    #: Its text (None: unknown, e.g. a command changed it on disk; "" for a
    #: file that did not exist).
    text: str | None
    diagnostics: tuple[Diagnostic, ...]
    #: False when the analyzers did not settle within the bound: the
    #: baseline may lack late (semantic) results.
    settled: bool = True
    #: The path the run renamed this file from: ``text`` and
    #: ``diagnostics`` are that file's before the run (:func:`carried`),
    #: and this path did not exist then.
    renamed_from: str | None = None
    #: False for a path that was no file before the run (``text`` is ""):
    #: one the run created, even empty, or a command's temporary file.
    existed: bool = True

    @property
    def text_before_the_run(self) -> str | None:
        """What this path held before the run ("" for a path that did not
        exist: a renamed file's new path)."""
        return "" if self.renamed_from is not None else self.text


def carried(old: FileBaseline, new_path: str) -> FileBaseline:
    """The baseline of a file renamed from ``old.path`` to ``new_path``:
    the old path's text and diagnostics (moved to the new path), so the
    errors it had before the run are judged as the same errors at the new
    path (lines mapped through whatever the run changed in it since)."""
    return FileBaseline(
        new_path,
        old.text,
        tuple(d.model_copy(update={"path": new_path}) for d in old.diagnostics),
        old.settled,
        renamed_from=old.renamed_from or old.path,
    )


@dataclass(slots=True)
class LineMap:
    """Old line -> new line for the lines a change kept; for the lines it
    replaced, the index of the replaced block on both sides."""

    moved: dict[int, int] = field(default_factory=dict)
    old_block: dict[int, int] = field(default_factory=dict)
    new_block: dict[int, int] = field(default_factory=dict)


#: How many lines around a replaced block still count as "nearby" for a
#: loose match (an error whose line was rewritten but is the same error).
NEARBY_LINES = 2


def line_map(old_text: str, new_text: str) -> LineMap:
    """Map the lines of ``old_text`` to ``new_text`` (difflib opcodes)."""
    old_lines = old_text.splitlines()
    new_lines = new_text.splitlines()
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    result = LineMap()
    for index, (tag, i1, i2, j1, j2) in enumerate(matcher.get_opcodes()):
        if tag == "equal":
            for offset in range(i2 - i1):
                result.moved[i1 + offset] = j1 + offset
            continue
        for i in range(max(0, i1 - NEARBY_LINES), i2 + NEARBY_LINES):
            result.old_block.setdefault(i, index)
        for j in range(max(0, j1 - NEARBY_LINES), j2 + NEARBY_LINES):
            result.new_block.setdefault(j, index)
        if tag in ("replace", "delete"):
            for i in range(i1, i2):
                result.old_block[i] = index
        if tag in ("replace", "insert"):
            for j in range(j1, j2):
                result.new_block[j] = index
    # A line past the end of the old text (an error "at EOF") moves with the end.
    result.moved.setdefault(len(old_lines), len(new_lines))
    return result


def _key(d: Diagnostic) -> tuple[str | None, str | None, int, str]:
    """Analyzer, rule, severity and message: a finding a settings change
    raised (a hint of an unused variable made an error) is not the old one."""
    return (d.source, d.code, d.severity, d.message)


def _sort(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: (d.path, d.line, d.character, d.source or ""))


def blocking_untouched(
    current: Sequence[Diagnostic], baseline: Sequence[Diagnostic]
) -> list[Diagnostic]:
    """Errors of a file the run did not change (or whose old text is
    unknown) that are not in ``baseline``. A baseline entry is matched at the
    same line first (so a new duplicate of an old error is the one
    reported); what is left is matched by analyzer, code and message alone
    (lines the person moved meanwhile), only where as many of them are left
    on both sides: moved lines move every such error, while an old one the
    run removed left alone must not absorb a new one (issue 32: toolz's
    delete matched a new error in ``test_functoolz.py`` with one of nine old
    ones of its message that the deletion removed)."""
    exact: Counter[tuple[object, ...]] = Counter((*_key(d), d.path, d.line) for d in baseline)
    loose = Counter((*_key(d), d.path) for d in baseline)
    unmatched: list[Diagnostic] = []
    for d in _sort(current):
        at = (*_key(d), d.path, d.line)
        if exact[at] > 0:
            exact[at] -= 1
            loose[(*_key(d), d.path)] -= 1
        else:
            unmatched.append(d)
    same_rule = _same_rule_left(exact)
    rest: list[Diagnostic] = []
    for d in unmatched:
        rule = (d.source, d.code, d.severity, d.path, d.line)
        if d.code is not None and same_rule[rule] > 0:
            same_rule[rule] -= 1  # the old error, worded differently this time
        else:
            rest.append(d)
    left = Counter((*_key(d), d.path) for d in rest)
    return [d for d in rest if loose[(*_key(d), d.path)] != left[(*_key(d), d.path)]]


def blocking_in_untouched_files(
    current: Mapping[str, Sequence[Diagnostic]],
    baseline_of: Callable[[str], Sequence[Diagnostic]],
) -> list[Diagnostic]:
    """:func:`blocking_untouched` file by file, in path order. A file whose
    findings are all objects of its baseline (an analyzer that re-checked it
    and published the same findings keeps them) has nothing new, without
    comparing: on a large project most files an edit re-checks are such."""
    blocking: list[Diagnostic] = []
    for path in sorted(current):
        found = current[path]
        before = baseline_of(path)
        if before and len(found) <= len(before):
            known = {id(d) for d in before}
            if all(id(d) in known for d in found):
                continue
        blocking.extend(blocking_untouched(found, before))
    return blocking


def blocking_in_file(
    current: Sequence[Diagnostic], baseline: FileBaseline, new_text: str | None
) -> list[Diagnostic]:
    """Errors of a changed file that are new relative to its own baseline,
    the baseline's lines mapped through the change."""
    if baseline.text is None or new_text is None:
        return blocking_untouched(current, baseline.diagnostics)
    mapping = line_map(baseline.text, new_text)
    exact: Counter[tuple[object, ...]] = Counter()
    #: Baseline errors on rewritten lines: (block, key) -> count.
    nearby: Counter[tuple[object, ...]] = Counter()
    for d in baseline.diagnostics:
        moved = mapping.moved.get(d.line)
        if moved is not None:
            exact[(*_key(d), moved)] += 1
        block = mapping.old_block.get(d.line)
        if block is not None and moved is None:
            nearby[(*_key(d), block)] += 1
    unmatched: list[Diagnostic] = []
    for d in _sort(current):
        at = (*_key(d), d.line)
        if exact[at] > 0:
            exact[at] -= 1
        else:
            unmatched.append(d)
    same_rule = _same_rule_left(exact)
    blocking: list[Diagnostic] = []
    for d in unmatched:
        block = mapping.new_block.get(d.line)
        near = (*_key(d), block)
        rule = (d.source, d.code, d.severity, d.line)
        if d.code is not None and same_rule[rule] > 0:
            same_rule[rule] -= 1  # the old error, worded differently this time
        elif block is not None and nearby[near] > 0:
            nearby[near] -= 1  # the old error on a line the change rewrote
        else:
            blocking.append(d)
    return blocking


def _same_rule_left(exact: Counter[tuple[object, ...]]) -> Counter[tuple[object, ...]]:
    """The baseline errors no current error matched exactly, keyed by
    analyzer, rule and (mapped) line without the message. An analyzer words
    one error differently from one analysis to the next (basedpyright prints
    a recursive type to a varying depth), so the same rule of the same
    analyzer on the same line is the same error."""
    left: Counter[tuple[object, ...]] = Counter()
    for (source, code, severity, _message, *where), count in exact.items():
        if count > 0 and code is not None:
            left[(source, code, severity, *where)] += count
    return left


_QUOTED = re.compile("[`\"'\u2018\u201c]([^`\"'\u2019\u201d]{1,200})[`\"'\u2019\u201d]")


def _names(message: str) -> set[str]:
    return {m.group(1) for m in _QUOTED.finditer(message)}


def _same_error(a: Diagnostic, b: Diagnostic) -> bool:
    """Two analyzers' reports of one problem: same file and line, and the
    same span or the same quoted name in both messages."""
    if a.path != b.path or a.line != b.line or a.source == b.source:
        return False
    if a.code is not None and a.code == b.code and a.message == b.message:
        return True
    same_span = a.character == b.character and (
        a.end_character is None or b.end_character is None or a.end_character == b.end_character
    )
    return same_span or bool(_names(a.message) & _names(b.message))


def merge_same_errors(
    diagnostics: Sequence[Diagnostic],
) -> list[tuple[Diagnostic, list[Diagnostic]]]:
    """Group the reports of one error by several analyzers: each group is
    (the first report, the other analyzers' reports)."""
    groups: list[tuple[Diagnostic, list[Diagnostic]]] = []
    for d in _sort(diagnostics):
        for head, others in groups:
            if head.path == d.path and head.line == d.line and _same_error(head, d):
                if all(o.source != d.source for o in others):
                    others.append(d)
                    break
        else:
            groups.append((d, []))
    return groups
