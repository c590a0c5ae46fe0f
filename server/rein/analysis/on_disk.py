"""The analyzer gate's question where a file the run deleted or renamed
away is gone: asked of copies of the workspace on disk.

The analyzers resolve imports from the disk, so a module that is gone
cannot be shown to them as it was (:mod:`rein.analysis.counterfactual`).
An error in a file the run did not change was then judged against the
run-start snapshot alone, and basedpyright's inference depends on the order
it checks files in: an importer's baseline, pulled with two dozen others,
could lack an error that the file has before the change and after it
(issue 32: sympy's ``zeta_functions.py`` renamed away blocked on
``simplify/tests/test_hyperexpand.py:357``, ``Cannot access attribute
"subs" for class "bool"``, in about one run in three; the command line
reports it before the rename and after).

Where the source can check copies of the workspace on disk
(:class:`~rein.harness.ports.DiskDiagnostics`: the headless pool runs
``basedpyright`` beside its language server), such an error is asked of
two copies checked the same way: one with the run's changed files as they
were (the gone module back, a created file away), one as they are. It
blocks only when the copy as it is has it and the copy as it was does not
(matched as the run-start snapshot is, :func:`~rein.analysis.baselines.
blocking_untouched`, then by line and rule). An error on a line that names
the gone module (its import, ``pkg.util.f``) is the run's without asking:
nothing else explains it, and the question costs the command line's time
on that file. No answer (a copy not checked in time, a file not checked)
keeps every error: nothing is known of the state before.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from rein.analysis.baselines import FileBaseline, blocking_untouched
from rein.analysis.run_texts import exists, text_now
from rein.harness.ports import Diagnostic, DiskDiagnostics, Workspace

__all__ = ["asked_on_disk", "gone", "overlays"]


def gone(touched: Collection[str], before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The changed files that were there before the run and are not now."""
    return sorted(p for p in touched if before.get(p) and not now.get(p))


def _module_names(paths: Sequence[str]) -> list[str]:
    """The names a line importing one of ``paths`` would spell: a module's
    stem, a package's folder for its ``__init__``."""
    names: list[str] = []
    for path in paths:
        if not path.endswith((".py", ".pyi")):
            continue
        parts = path.rsplit(".", 1)[0].split("/")
        name = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
        if name.isidentifier():
            names.append(name)
    return names


async def overlays(
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    workspace: Workspace | None,
    before: Mapping[str, str],
    now: Mapping[str, str],
) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """The changed files as they were and as they are, as overlays of a
    copy (None: no such file; an empty file that exists stays one)."""
    was: dict[str, str | None] = {}
    is_: dict[str, str | None] = {}
    for path in sorted(p for p in touched if p in before):
        baseline = files.get(path)
        existed = baseline.existed if baseline is not None else bool(before[path])
        was[path] = before[path] if existed else None
        text = now.get(path, "")
        is_[path] = text if text or (workspace and await exists(workspace, path)) else None
    return was, is_


async def _explained(
    blockers: Sequence[Diagnostic], names: Sequence[str], workspace: Workspace | None
) -> set[int]:
    """The blockers (by id) on a line that names a gone module."""
    if not names or workspace is None:
        return set()
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
    lines: dict[str, list[str] | None] = {}
    out: set[int] = set()
    for d in blockers:
        if d.path not in lines:
            text = await text_now(workspace, d.path)
            lines[d.path] = text.splitlines() if text else None
        found = lines[d.path]
        if found is not None and d.line < len(found) and pattern.search(found[d.line]):
            out.add(id(d))
    return out


async def asked_on_disk(
    source: DiskDiagnostics,
    blocking: Sequence[Diagnostic],
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    workspace: Workspace | None,
    before: Mapping[str, str],
    now: Mapping[str, str],
    timeout_s: float,
) -> tuple[list[Diagnostic], int]:
    """The blockers left once the errors in files the run did not change
    were asked of copies of the workspace as it was and as it is, and how
    many were dropped (``before``/``now``: the changed files' texts, "" for
    no file)."""
    checked = source.checked_on_disk()
    candidates = [d for d in blocking if d.path not in touched and d.source in checked]
    explained = await _explained(candidates, _module_names(gone(touched, before, now)), workspace)
    asked = [d for d in candidates if id(d) not in explained]
    if not asked:
        return list(blocking), 0
    was, is_ = await overlays(touched, files, workspace, before, now)
    paths = sorted({d.path for d in asked})
    answer = await source.errors_on_disk([was, is_], paths, timeout_s)
    if answer is None or len(answer.errors) != 2:
        return list(blocking), 0
    errors_before, errors_now = answer.errors
    new = blocking_untouched(list(errors_now), list(errors_before))
    left = Counter((d.path, d.line, d.code) for d in new)
    asked_ids = {id(d) for d in asked}
    kept: list[Diagnostic] = []
    for d in blocking:
        key = (d.path, d.line, d.code)
        if id(d) not in asked_ids:
            kept.append(d)
        elif left[key] > 0:
            left[key] -= 1
            kept.append(d)
    return kept, len(blocking) - len(kept)
