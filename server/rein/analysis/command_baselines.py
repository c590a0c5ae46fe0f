"""Baselines for the files a command changed.

A tool's change is announced before it is applied: the analyzer gate takes
the file's baseline then (its text, its diagnostics, its importers opened
with it, in a workspace analysed file by file). A command's (``sed -i``, a
code generator, a formatter) is seen only after it happened. In a workspace
analysed as a whole the run-start snapshot holds every file's diagnostics
before the command; in one analysed file by file (over
``gates.analyzer.workspaceMaxFiles``) it holds nothing for a file nobody had
open, so every old error of the changed file would block and its importers
would never be looked at.

So at the verdict, each changed file without a baseline whose text before
the change the source still knows (:class:`~rein.harness.gating.gate_types.
PriorTexts`: the headless pool read every file at start) gets one as a tool
edit would have: the file and its importers are opened, and their
diagnostics are taken with the analyzers shown the changed files as they
were before the run (:class:`~rein.harness.ports.CounterfactualDiagnostics`,
in memory: nothing is written). The importers did not change, so those are
their diagnostics before the run. When that cannot be done (the analyzers
did not settle) the file keeps no baseline: its errors all block, never a
pass on an unknown baseline; the importers opened for it are returned as
not baselined, so their errors are not judged (not checked, named in the
verdict) rather than blocking as if the run had made them.

A file a command renamed (``mv``, ``git mv``) is a deleted path and a
created one: the created file whose text is the deleted one's before the
run, or nearly (:data:`RENAME_SIMILARITY` of its lines), was renamed from
it. Its baseline is the old text's, taken at the new path (the analyzers
are shown the new path holding the old text: a deleted file's own
diagnostics cannot be had), with ``renamed_from`` set as for a tool's
rename, so the errors it already had do not block at its new path.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable, Collection, Mapping

from rein.analysis.baselines import FileBaseline
from rein.harness.gating.gate_types import PriorTexts
from rein.harness.ports import (
    CounterfactualDiagnostics,
    Diagnostic,
    DiagnosticsSource,
    SettlingDiagnostics,
)

__all__ = [
    "MAX_NEAR_PAIRS",
    "RENAME_SIMILARITY",
    "baseline_command_changes",
    "baselines_after_the_fact",
    "renamed_by_content",
]

#: A created file whose lines match a deleted file's this much (difflib's
#: ratio) was renamed from it.
RENAME_SIMILARITY = 0.9
#: At most this many pairs of created and deleted files are compared for
#: a near-same text.
MAX_NEAR_PAIRS = 2_000


async def baseline_command_changes(
    source: DiagnosticsSource,
    touched: Collection[str],
    files: dict[str, FileBaseline],
    late: dict[str, tuple[Diagnostic, ...]],
    unbaselined: set[str],
    now: Callable[[str], Awaitable[str | None]],
    timeout_s: float,
    texts_before: Callable[[str], str | None] | None,
) -> None:
    """Changed files in ``touched`` with no baseline in ``files`` (a command
    changed them: nobody announced it) get one from their text before the
    change (:func:`baselines_after_the_fact`), their importers join
    ``late``, and the importers whose baseline was not had ``unbaselined``
    (not checked, never blocking as new)."""
    if all(p in files for p in touched):
        return
    found, importers, unknown = await baselines_after_the_fact(
        source, touched, files, late, now, timeout_s, texts_before
    )
    files.update(found)
    late.update(importers)
    unbaselined.update(unknown)


async def baselines_after_the_fact(
    source: DiagnosticsSource,
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    late: Mapping[str, tuple[Diagnostic, ...]],
    now: Callable[[str], Awaitable[str | None]],
    timeout_s: float,
    texts_before: Callable[[str], str | None] | None = None,
) -> tuple[dict[str, FileBaseline], dict[str, tuple[Diagnostic, ...]], set[str]]:
    """Baselines for the changed files in ``touched`` that have none in
    ``files``, the diagnostics before the run of their importers opened
    now (for ``late``), and the importers opened whose diagnostics before
    the run could not be had; empty when the source cannot tell (see the
    module doc). ``now`` reads a file's text now (None: no such file);
    ``texts_before``: every file's text read before a command ran (a cold
    session's, :mod:`rein.analysis.cold_commands`), when the source does not
    know a file's."""
    if not (
        (isinstance(source, PriorTexts) or texts_before is not None)
        and isinstance(source, SettlingDiagnostics)
        and isinstance(source, CounterfactualDiagnostics)
    ):
        return {}, {}, set()
    before: dict[str, str] = {}
    created: list[str] = []
    for path in sorted(touched):
        if path not in files:
            text = source.text_before_change(path) if isinstance(source, PriorTexts) else None
            if text is None and texts_before is not None:
                text = texts_before(path)
            if text is not None:
                before[path] = text
            else:
                created.append(path)
    renamed = await _renamed(created, before, touched, files, now)
    before.update({new: text for new, (_old, text) in renamed.items()})
    # Every file was read before the command: a path that was not a file
    # then (sed -i's temporary file, a generator's output) did not exist. A
    # file created, even empty, cannot be shown away: it keeps this baseline
    # and the files importing its name are not asked about as before
    # (:func:`~rein.analysis.run_texts.users_of_created`).
    gone = {
        p: FileBaseline(p, "", (), existed=False)
        for p in created
        if texts_before is not None and p not in renamed
    }
    if not before:
        return gone, {}, set()
    opened = [
        p
        for p in await source.ensure_open(sorted(before))
        if p not in touched and p not in files and p not in late
    ]
    shown = await with_tools_changes(before, touched, files, now)
    snap = await source.snapshot_with(shown, [*before, *opened], timeout_s)
    if snap is None or snap.blind is not None or snap.stale:
        return gone, {}, set(opened)
    found: dict[str, list[Diagnostic]] = {}
    for d in snap.diagnostics:
        found.setdefault(d.path, []).append(d)
    baselines = gone | {
        p: FileBaseline(
            p, text, tuple(found.get(p, ())), renamed_from=renamed[p][0] if p in renamed else None
        )
        for p, text in before.items()
    }
    return baselines, {p: tuple(found.get(p, ())) for p in opened}, set()


async def with_tools_changes(
    before: Mapping[str, str],
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    now: Callable[[str], Awaitable[str | None]],
) -> dict[str, str]:
    """``before`` (a command's changed files before it) with every other
    changed file as it was before the run: those changed by tools too (a
    file the run deleted cannot be shown: it stays deleted)."""
    shown = dict(before)
    for path in sorted(touched):
        baseline = files.get(path)
        was = baseline.text_before_the_run if baseline is not None else None
        if was and await now(path) is not None:
            shown[path] = was
    return shown


async def _renamed(
    created: Collection[str],
    before: Mapping[str, str],
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    now: Callable[[str], Awaitable[str | None]],
) -> dict[str, tuple[str, str]]:
    """new path -> (the path a command renamed it from, that file's text
    before the run), for the created files in ``created``."""
    texts = {p: t for p in created if (t := await now(p))}
    if not texts:
        return {}
    earlier = dict(before)
    for path in touched:
        baseline = files.get(path)
        if baseline is not None and baseline.text_before_the_run:
            earlier[path] = baseline.text_before_the_run
    gone = {p: t for p, t in earlier.items() if t and await now(p) is None}
    return {new: (old, gone[old]) for new, old in renamed_by_content(texts, gone)}


def renamed_by_content(
    created: Mapping[str, str], deleted: Mapping[str, str]
) -> list[tuple[str, str]]:
    """(new, old) for each created file (path -> text now) whose text is a
    deleted file's (path -> text before), or nearly; each deleted file is
    matched once. Same texts are matched first; then each created file
    left to the deleted one most like it, comparing at most
    :data:`MAX_NEAR_PAIRS` pairs of files (a command that replaced a whole
    tree gets its exact renames only)."""
    matched: list[tuple[str, str]] = []
    by_text: dict[str, list[str]] = {}
    for old, was in sorted(deleted.items()):
        by_text.setdefault(was, []).append(old)
    left: dict[str, list[str]] = {}
    for new, text in sorted(created.items()):
        same = by_text.get(text)
        if same:
            matched.append((new, same.pop(0)))
        else:
            left[new] = text.splitlines()
    used = {old for _new, old in matched}
    olds = {o: t.splitlines() for o, t in sorted(deleted.items()) if o not in used}
    pairs: list[tuple[float, str, str]] = []
    budget = MAX_NEAR_PAIRS
    for new, lines in left.items():
        for old, old_lines in olds.items():
            total = len(old_lines) + len(lines)
            if not total or 2 * min(len(old_lines), len(lines)) / total < RENAME_SIMILARITY:
                continue  # too different in length to be alike enough
            if budget <= 0:
                break
            budget -= 1
            matcher = difflib.SequenceMatcher(None, old_lines, lines, autojunk=False)
            if matcher.quick_ratio() >= RENAME_SIMILARITY:
                ratio = matcher.ratio()
                if ratio >= RENAME_SIMILARITY:
                    pairs.append((ratio, new, old))
    taken = {new for new, _old in matched}
    for _ratio, new, old in sorted(pairs, key=lambda p: (-p[0], p[1], p[2])):
        if new not in taken and old not in used:
            matched.append((new, old))
            taken.add(new)
            used.add(old)
    return sorted(matched)
