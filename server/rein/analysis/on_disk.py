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
reports it before the rename and after). The renamed file itself is judged
against the old path's baseline, carried, and can meet the same: its
``**`` on a ``bool | Unknown | Basic`` at line 174 blocked once, an error
the command line reports at neither path.

Where the source can check copies of the workspace on disk
(:class:`~rein.harness.ports.DiskDiagnostics`: the headless pool runs
``basedpyright`` beside its language server), such an error is asked of
two copies checked the same way: one with the run's changed files as they
were (the gone module back, a created file away), one as they are; so is
an error in a file the run renamed from a gone path (its old path checked
in the copy as it was, at the same place in the order). It blocks only
when the copy as it is has it and the copy as it was does not (matched as
the run-start snapshot is, :func:`~rein.analysis.baselines.
blocking_untouched`, or as the renamed file's own baseline is,
:func:`~rein.analysis.baselines.blocking_in_file`; then by line and
rule). An error on a line that names
the gone module (its import, ``pkg.util.f``, any line of an import
statement from it) is the run's without asking:
nothing else explains it, and the question costs the command line's time
on that file. No answer (a copy not checked in time, a file not checked)
keeps every error: nothing is known of the state before.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from rein.analysis.baselines import FileBaseline, blocking_in_file, blocking_untouched
from rein.analysis.run_texts import exists, text_now
from rein.harness.ports import Diagnostic, DiskDiagnostics, Workspace

__all__ = ["asked_on_disk", "gone", "naming_lines", "overlays", "renamed_from_gone"]

log = logging.getLogger(__name__)


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
    copy (None: no such file; an empty file that exists stays one, a
    renamed file's new path was none)."""
    was: dict[str, str | None] = {}
    is_: dict[str, str | None] = {}
    for path in sorted(p for p in touched if p in before):
        baseline = files.get(path)
        existed = (
            baseline.existed and baseline.renamed_from is None
            if baseline is not None
            else bool(before[path])
        )
        was[path] = before[path] if existed else None
        text = now.get(path, "")
        is_[path] = text if text or (workspace and await exists(workspace, path)) else None
    return was, is_


def renamed_from_gone(
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    before: Mapping[str, str],
    now: Mapping[str, str],
) -> dict[str, str]:
    """The changed files renamed from a path that is gone (new -> old):
    their errors are asked too, the old path's in the copy as it was."""
    left = set(gone(touched, before, now))
    out: dict[str, str] = {}
    for path in sorted(touched):
        baseline = files.get(path)
        old = baseline.renamed_from if baseline is not None else None
        if old is not None and old in left and now.get(path) and before.get(old):
            out[path] = old
    return out


def naming_lines(text: str, pattern: re.Pattern[str]) -> set[int]:
    """The lines of ``text`` that name a gone module (``pattern``): a line
    that spells it, and every line of an import statement one of whose
    lines does (``from pkg.util import (a,`` then ``b)`` on the next line:
    a name's line alone does not spell the module)."""
    lines = text.splitlines()
    out = {i for i, line in enumerate(lines) if pattern.search(line)}
    i = 0
    while i < len(lines):
        first = i
        code = lines[i].split("#", 1)[0]
        i += 1
        if not code.lstrip().startswith(("from ", "import ")):
            continue
        depth = code.count("(") - code.count(")")
        while i < len(lines) and (depth > 0 or code.rstrip().endswith("\\")):
            code = lines[i].split("#", 1)[0]
            depth += code.count("(") - code.count(")")
            i += 1
        span = range(first, i)
        if any(line in out for line in span):
            out.update(span)
    return out


async def _explained(
    blockers: Sequence[Diagnostic], names: Sequence[str], workspace: Workspace | None
) -> set[int]:
    """The blockers (by id) on a line that names a gone module."""
    if not names or workspace is None:
        return set()
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
    naming: dict[str, set[int]] = {}
    out: set[int] = set()
    for d in blockers:
        if d.path not in naming:
            text = await text_now(workspace, d.path)
            naming[d.path] = naming_lines(text, pattern) if text else set()
        if d.line in naming[d.path]:
            out.add(id(d))
    return out


def _new_on_disk(
    errors_before: Sequence[Diagnostic],
    errors_now: Sequence[Diagnostic],
    renamed: Mapping[str, str],
    before: Mapping[str, str],
    now: Mapping[str, str],
) -> list[Diagnostic]:
    """The command line's errors in the copy as it is that the copy as it
    was lacks: in an unchanged file matched as the run-start snapshot is, in
    a renamed file against the old path's errors carried to it (lines mapped
    through the change, as its own baseline is)."""
    olds = set(renamed.values())
    new = blocking_untouched(
        [d for d in errors_now if d.path not in renamed],
        [d for d in errors_before if d.path not in olds],
    )
    for path, old in renamed.items():
        carried = tuple(d.model_copy(update={"path": path}) for d in errors_before if d.path == old)
        baseline = FileBaseline(path, before[old], carried)
        new += blocking_in_file([d for d in errors_now if d.path == path], baseline, now[path])
    return new


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
    (and in files it renamed from a path now gone) were asked of copies of
    the workspace as it was and as it is, and how many were dropped
    (``before``/``now``: the changed files' texts, "" for no file)."""
    checked = source.checked_on_disk()
    renamed = renamed_from_gone(touched, files, before, now)
    candidates = [
        d for d in blocking if d.source in checked and (d.path not in touched or d.path in renamed)
    ]
    explained = await _explained(candidates, _module_names(gone(touched, before, now)), workspace)
    asked = [d for d in candidates if id(d) not in explained]
    if not asked:
        return list(blocking), 0
    was, is_ = await overlays(touched, files, workspace, before, now)
    paths = sorted({d.path for d in asked})
    log.debug("asked on disk: %s", ", ".join(f"{d.path}:{d.line + 1} {d.code}" for d in asked))
    answer = await source.errors_on_disk(
        [was, is_], [[renamed.get(p, p) for p in paths], paths], timeout_s
    )
    if answer is None or len(answer.errors) != 2:
        return list(blocking), 0
    new = _new_on_disk(*answer.errors, renamed, before, now)
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
