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
in the copy as it was, at the same place in the order, its errors carried
to the new path through the change's line map). The error is dropped only
when **both** copies have it (same file, line and rule, counted: the errors
the copy as it is has beyond the copy as it was are new, and the server's
first ones there are those): the command line says it was there before the
run's changes and is there after them. One
neither copy has is kept, unless the copy as it is has every other error
the server reports in that file (:func:`_agreeing`): elsewhere the copies
may not see what the language server sees (another interpreter, paths
outside the workspace, another severity), and a false blocker costs a
repair where a false pass costs the promise. An error the gone module explains is the run's without asking: on
a line that names it (its import, ``pkg.util.f``, any line of an import
statement from it), on an import statement's line quoting a name it
defined (a package that re-exported it: ``from sympy.stats import P``
after ``stats/rv.py`` is gone), or naming its module in the message:
nothing else explains it, and the question costs the command line's time.
No answer (a copy not made or checked in time, a file not checked, copies
the pool cannot make faithful) keeps every error.

A gone file is one that existed before the run and does not now, an empty
one too (:func:`gone_files`; review67: an empty ``pkg/marker.py`` deleted
was shown in memory as "" and its importer's broken import dropped as
"there without the run's changes too").
"""

from __future__ import annotations

import ast
import logging
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from rein.analysis.baselines import FileBaseline, line_map
from rein.analysis.run_texts import exists, text_now
from rein.harness.ports import Diagnostic, DiskDiagnostics, Workspace
from rein.python_imports import module_name

__all__ = [
    "asked_on_disk",
    "defined_names",
    "gone",
    "import_spans",
    "naming_lines",
    "overlays",
    "renamed_from_gone",
]

log = logging.getLogger(__name__)


def gone(touched: Collection[str], before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The changed files that were there before the run, not empty, and are
    not now (:func:`gone_files` knows an empty one too)."""
    return sorted(p for p in touched if before.get(p) and not now.get(p))


def _existed(files: Mapping[str, FileBaseline], before: Mapping[str, str], path: str) -> bool:
    """``path`` was a file before the run (a renamed file's new path was
    not; without a baseline, a text before the run says so)."""
    baseline = files.get(path)
    if baseline is None:
        return bool(before[path])
    return baseline.existed and baseline.renamed_from is None


async def gone_files(
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    workspace: Workspace | None,
    before: Mapping[str, str],
    now: Mapping[str, str],
) -> list[str]:
    """The changed files that were there before the run and are not now, an
    empty one too (its importers' ``import`` breaks all the same: review67)."""
    out: list[str] = []
    for path in sorted(p for p in touched if p in before and not now.get(p)):
        if _existed(files, before, path) and (
            workspace is None or not await exists(workspace, path)
        ):
            out.append(path)
    return out


def _module_names(paths: Sequence[str]) -> list[str]:
    """The names a line importing one of ``paths`` would spell: a module's
    last name, a package's for its ``__init__``."""
    return [name.rsplit(".", 1)[-1] for name in map(module_name, paths) if name]


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
        was[path] = before[path] if _existed(files, before, path) else None
        text = now.get(path, "")
        is_[path] = text if text or (workspace and await exists(workspace, path)) else None
    return was, is_


def renamed_from_gone(
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    left: Collection[str],
    now: Mapping[str, str],
) -> dict[str, str]:
    """The changed files renamed from a path that is gone (``left``; new ->
    old): their errors are asked too, the old path's in the copy as it was."""
    out: dict[str, str] = {}
    for path in sorted(touched):
        baseline = files.get(path)
        old = baseline.renamed_from if baseline is not None else None
        if old is not None and old in left and path in now:
            out[path] = old
    return out


def import_spans(text: str) -> dict[int, range]:
    """Each line of an import statement of ``text`` -> the statement's lines
    (parenthesised and backslash-continued lines joined)."""
    lines = text.splitlines()
    out: dict[int, range] = {}
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
        out.update(dict.fromkeys(range(first, i), range(first, i)))
    return out


def naming_lines(text: str, pattern: re.Pattern[str]) -> set[int]:
    """The lines of ``text`` that name a gone module (``pattern``): a line
    that spells it, and every line of an import statement one of whose
    lines does (``from pkg.util import (a,`` then ``b)`` on the next line:
    a name's line alone does not spell the module)."""
    out = {i for i, line in enumerate(text.splitlines()) if pattern.search(line)}
    for span in set(import_spans(text).values()):
        if any(line in out for line in span):
            out.update(span)
    return out


def defined_names(text: str) -> frozenset[str]:
    """The names a module's text binds at its top level (in its ``if`` and
    ``try`` blocks too): what importing a name from it, or from a package
    that re-exports it, reaches. None known when it does not parse."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return frozenset()
    names: set[str] = set()
    while body:
        node, *body = body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.If):
            body += [*node.body, *node.orelse]
        elif isinstance(node, ast.Try | ast.TryStar):
            body += [*node.body, *node.orelse, *node.finalbody]
            body += [s for h in node.handlers for s in h.body]
    return frozenset(names - {"*"})


_QUOTED = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"')


async def _explained(
    blockers: Sequence[Diagnostic],
    gone_paths: Sequence[str],
    before: Mapping[str, str],
    workspace: Workspace | None,
) -> set[int]:
    """The blockers (by id) the gone modules explain: on a line that names
    one (:func:`naming_lines`); on an import statement's line, quoting a
    name one of them defined (``"RandomSymbol" is unknown import symbol``
    where a package re-exported it); or naming one's module in their
    message."""
    names = _module_names(gone_paths)
    if not names or workspace is None:
        return set()
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
    dotted = [m for m in map(module_name, gone_paths) if m]
    defined = frozenset().union(*(defined_names(before[p]) for p in gone_paths if p in before))
    seen: dict[str, tuple[set[int], dict[int, range]]] = {}
    out: set[int] = set()
    for d in blockers:
        if d.path not in seen:
            text = await text_now(workspace, d.path) or ""
            seen[d.path] = naming_lines(text, pattern), import_spans(text)
        naming, spans = seen[d.path]
        quoted = set(_QUOTED.findall(d.message))
        if (
            d.line in naming
            or (d.line in spans and quoted & defined)
            or any(f'"{m}"' in d.message for m in dotted)
        ):
            out.add(id(d))
    return out


Key = tuple[str, int, str | None]


def _keys(
    errors_before: Sequence[Diagnostic],
    errors_now: Sequence[Diagnostic],
    renamed: Mapping[str, str],
    before: Mapping[str, str],
    now: Mapping[str, str],
) -> tuple[Counter[Key], Counter[Key]]:
    """The errors (path, line, rule) of the copy as it was and of the copy
    as it is. A renamed file's errors in the copy as it was are its old
    path's, carried to its new path with their lines mapped through the
    change (a line the change rewrote carries none)."""
    maps = {old: (new, line_map(before[old], now[new])) for new, old in renamed.items()}
    was: Counter[Key] = Counter()
    for d in errors_before:
        if d.path in maps:
            new, mapping = maps[d.path]
            moved = mapping.moved.get(d.line)
            if moved is not None:
                was[(new, moved, d.code)] += 1
        else:
            was[(d.path, d.line, d.code)] += 1
    is_ = Counter((d.path, d.line, d.code) for d in errors_now)
    return was, is_


async def asked_on_disk(
    source: DiskDiagnostics,
    blocking: Sequence[Diagnostic],
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    workspace: Workspace | None,
    before: Mapping[str, str],
    now: Mapping[str, str],
    timeout_s: float,
    current: Sequence[Diagnostic] = (),
) -> tuple[list[Diagnostic], int]:
    """The blockers left once the errors in files the run did not change
    (and in files it renamed from a path now gone) were asked of copies of
    the workspace as it was and as it is, and how many were dropped
    (``before``/``now``: the changed files' texts, "" for no file;
    ``current``: the verdict's errors, blocking or not, for
    :func:`_agreeing`)."""
    checked = source.checked_on_disk()
    left = await gone_files(touched, files, workspace, before, now)
    renamed = renamed_from_gone(touched, files, left, now)
    candidates = [
        d for d in blocking if d.source in checked and (d.path not in touched or d.path in renamed)
    ]
    explained = await _explained(candidates, left, before, workspace)
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
    had, has = _keys(*answer.errors, renamed, before, now)
    # Per file, line and rule, as the command line counts a change: the
    # errors the copy as it is has beyond the copy as it was are new (the
    # server's first ones there are those), as many as both have are there
    # without the run's changes too (sympy's stats/rv.py deleted: three
    # reportAttributeAccessIssue on one line before, four after; the
    # server's one new one blocks).
    new = has - had
    same = had & has
    agreeing = _agreeing(asked, current, has, had)
    asked_ids = {id(d) for d in asked}
    log.debug(
        "on disk: %s",
        ", ".join(
            f"{d.path}:{d.line + 1} {d.code} before={had[k]} now={has[k]} rest={d.path in agreeing}"
            for d in asked
            for k in [(d.path, d.line, d.code)]
        ),
    )
    kept: list[Diagnostic] = []
    for d in blocking:
        key = (d.path, d.line, d.code)
        if id(d) not in asked_ids:
            kept.append(d)
        elif new[key] > 0:
            new[key] -= 1
            kept.append(d)
        elif same[key] > 0:
            same[key] -= 1  # there without the run's changes too
        elif key not in had and key not in has and d.path in agreeing:
            pass  # in neither copy, which see the rest of its file as the server does
        else:
            kept.append(d)
    return kept, len(blocking) - len(kept)


def _agreeing(
    asked: Sequence[Diagnostic],
    current: Sequence[Diagnostic],
    has: Counter[Key],
    had: Counter[Key],
) -> set[str]:
    """The files of ``asked`` whose every other error now (``current``, of
    the analyzers asked) the copy as it is has too, at least one: there the
    copies see what the server sees, and an error of the server's that
    neither copy has is the order it checked files in (sympy's renamed
    ``zeta_functions.py``: a ``**`` on ``bool | Unknown | Basic``, reported
    at neither path by the command line, blocked once in four runs). A
    file whose other errors a copy lacks (a copy that resolves imports
    otherwise, another severity) is not one: its errors stay (review67)."""
    sources = {d.source for d in asked}
    questioned = {(d.path, d.line, d.code) for d in asked if (d.path, d.line, d.code) not in had}
    out: set[str] = set()
    for path in {d.path for d in asked}:
        others = Counter(
            (d.path, d.line, d.code)
            for d in current
            if d.path == path and d.source in sources and (d.path, d.line, d.code) not in questioned
        )
        if others and not others - has:
            out.add(path)
    return out
