"""The file-set and command cases of ``rein bench gates --corpus``, and
their truth from the command-line tools.

Three kinds of change that break other files than the one they touch:

- ``delete-module``: the model deletes a module other project modules
  import (``delete_file``); the repair writes it back;
- ``rename-module``: the model renames such a module (``move_file``); the
  repair moves it back;
- ``command-edit``: the model renames a function with ``run_command`` running
  ``sed -i`` in the module that defines it, which breaks the files importing
  that name; the repair runs the reverse ``sed``.

The seeded single-file errors (:mod:`rein.bench.corpus`) are judged by their
lines; these are judged by the command line: ``basedpyright --outputjson``
and ``ruff check --output-format json`` on the changed files and their
importers, in a scratch copy of the tree, before and after the change. The
expected blockers are the errors the change added (:func:`new_errors`).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rein.disk.importers import ImportIndex
from rein.python_imports import imported_modules, module_name

__all__ = [
    "CASE_KINDS",
    "RUFF_ERROR_CODES",
    "Case",
    "CliRun",
    "ErrorKey",
    "command_edit_case",
    "delete_case",
    "direct_importers",
    "importers_of",
    "modules_with_importers",
    "new_errors",
    "parse_basedpyright",
    "parse_ruff",
    "renamable_functions",
    "rename_case",
    "run_cli",
    "run_ruff",
    "sed_rename",
]

CASE_KINDS = ("delete-module", "rename-module", "command-edit")

#: The ruff codes its language server reports as errors (the rest are
#: warnings, which the gate does not block on); a syntax error has no code.
RUFF_ERROR_CODES = frozenset({"F821", "E902", "E999", "invalid-syntax"})

#: (path relative to the root, 0-based line, rule or code).
ErrorKey = tuple[str, int, str]

_SUFFIX = "_rein_renamed"


@dataclass(frozen=True, slots=True)
class Case:
    kind: str
    #: What the case is about (the module, or ``module:function``).
    target: str
    #: The scripted model's turns: the change, then its repair.
    change: dict[str, Any]
    repair: dict[str, Any]
    #: Files the CLI checks before and after the change (the changed files
    #: and their importers), relative to the root.
    before_paths: tuple[str, ...]
    after_paths: tuple[str, ...]
    #: Applies the change (and its undo) to a scratch copy of the tree.
    apply: Callable[[Path], None] = field(compare=False, repr=False)
    undo: Callable[[Path], None] = field(compare=False, repr=False)
    #: A renamed file: (old path, new path); its errors keep their identity.
    renamed: tuple[str, str] | None = None
    #: Lines inserted: (path, first, last), 0-based [first, last); the
    #: file's later errors move down with them.
    inserted: tuple[str, int, int] | None = None


# ------------------------------------------------------------ the choosing


def direct_importers(files: Sequence[str], texts: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the files among ``files`` importing it directly."""
    index: dict[str, set[str]] = {}
    for path in files:
        text = texts.get(path)
        if text is None:
            continue
        for module in imported_modules(path, text):
            index.setdefault(module, set()).add(path)
    return index


def modules_with_importers(
    candidates: Iterable[str], files: Sequence[str], texts: dict[str, str]
) -> list[tuple[str, list[str]]]:
    """The ``candidates`` (no package ``__init__``, no test module) that
    other files among ``files`` import directly, each with those importers,
    most imported first (then by path)."""
    index = direct_importers(files, texts)
    out: list[tuple[str, list[str]]] = []
    for path in candidates:
        module = module_name(path)
        name = path.rsplit("/", 1)[-1]
        if module is None or name.startswith(("__init__", "test_", "conftest")):
            continue
        importers = sorted(index.get(module, set()) - {path})
        if importers:
            out.append((path, importers))
    out.sort(key=lambda item: (-len(item[1]), item[0]))
    return out


def importers_of(path: str, files: Sequence[str], texts: dict[str, str]) -> list[str]:
    """Every file importing ``path``'s module, as Rein's gate finds them
    (:class:`~rein.disk.importers.ImportIndex`, one level of re-export)."""
    return ImportIndex(files, texts.get).importers(path, 10_000)


def renamable_functions(
    path: str,
    text: str,
    files: Sequence[str],
    texts: dict[str, str],
    index: dict[str, set[str]] | None = None,
) -> list[tuple[str, list[str]]]:
    """Top-level functions of ``path`` that other files import by name
    (``from module import name``), each with those files; most imported
    first. Names that already contain the rename's suffix are left out.
    ``index``: the files' direct importers by module, when already built."""
    module = module_name(path)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    if module is None:
        return []
    names = [
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and _SUFFIX not in n.name
    ]
    if index is None:
        index = direct_importers(files, texts)
    out = [
        (name, sorted(index.get(f"{module}.{name}", set()) - {path}))
        for name in names
        if index.get(f"{module}.{name}", set()) - {path}
    ]
    out.sort(key=lambda item: (-len(item[1]), item[0]))
    return out


def sed_rename(path: str, old: str, new: str) -> str:
    """The shell command renaming the identifier ``old`` to ``new`` in
    ``path`` (whole words only, in place)."""
    for name in (old, new):
        if not name.isidentifier():
            raise ValueError(f"not an identifier: {name!r}")
    if "'" in path or not path:
        raise ValueError(f"cannot quote {path!r}")
    return f"sed -i 's/\\b{old}\\b/{new}/g' '{path}'"


def _call(name: str, **arguments: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def delete_case(path: str, text: str, importers: Sequence[str]) -> Case:
    def apply(root: Path) -> None:
        (root / path).unlink()

    def undo(root: Path) -> None:
        (root / path).write_text(text, encoding="utf-8")

    return Case(
        "delete-module",
        path,
        _call("delete_file", path=path),
        _call("write_file", path=path, content=text),
        (path, *importers),
        tuple(importers),
        apply,
        undo,
    )


def rename_case(path: str, importers: Sequence[str]) -> Case:
    stem, _, ext = path.rpartition(".")
    new_path = f"{stem}{_SUFFIX}.{ext}"

    def apply(root: Path) -> None:
        (root / path).rename(root / new_path)

    def undo(root: Path) -> None:
        (root / new_path).rename(root / path)

    return Case(
        "rename-module",
        f"{path} -> {new_path}",
        _call("move_file", path=path, new_path=new_path),
        _call("move_file", path=new_path, new_path=path),
        (path, *importers),
        (new_path, *importers),
        apply,
        undo,
        (path, new_path),
    )


def command_edit_case(path: str, text: str, name: str, importers: Sequence[str]) -> Case:
    new = f"{name}{_SUFFIX}"
    edited = re.sub(rf"\b{re.escape(name)}\b", new, text)

    def apply(root: Path) -> None:
        (root / path).write_text(edited, encoding="utf-8")

    def undo(root: Path) -> None:
        (root / path).write_text(text, encoding="utf-8")

    paths = (path, *importers)
    return Case(
        "command-edit",
        f"{path}:{name}",
        _call("run_command", command=sed_rename(path, name, new)),
        _call("run_command", command=sed_rename(path, new, name)),
        paths,
        paths,
        apply,
        undo,
    )


# -------------------------------------------------------------- the truth


def _relative(root: Path, filename: str) -> str:
    try:
        return Path(filename).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return filename


def parse_basedpyright(root: Path, output: str) -> list[ErrorKey]:
    """The errors of ``basedpyright --outputjson`` (warnings left out)."""
    data = json.loads(output) if output.strip() else {}
    out: list[ErrorKey] = []
    for d in data.get("generalDiagnostics", []):
        if d.get("severity") != "error":
            continue
        line = d.get("range", {}).get("start", {}).get("line", 0)
        out.append((_relative(root, d["file"]), int(line), str(d.get("rule", ""))))
    return out


def parse_ruff(root: Path, output: str) -> list[ErrorKey]:
    """The errors of ``ruff check --output-format json``: its syntax errors
    and :data:`RUFF_ERROR_CODES` (rows made 0-based)."""
    data = json.loads(output) if output.strip() else []
    out: list[ErrorKey] = []
    for d in data:
        code = d.get("code") or "invalid-syntax"
        if code not in RUFF_ERROR_CODES:
            continue
        row = (d.get("location") or {}).get("row", 1)
        out.append((_relative(root, d["filename"]), int(row) - 1, code))
    return out


def new_errors(
    before: Iterable[ErrorKey],
    after: Iterable[ErrorKey],
    renamed: tuple[str, str] | None = None,
    inserted: tuple[str, int, int] | None = None,
) -> list[ErrorKey]:
    """The errors in ``after`` that ``before`` did not have (as a multiset:
    a second error of the same rule on the same line is new too). A file
    ``renamed`` (old, new) keeps its errors: an error of the new path that
    the old path had is not new, and an error below lines ``inserted``
    (path, first, last) is the one it was before them."""
    remaining = Counter(before)
    out: list[ErrorKey] = []
    for key in after:
        if inserted is not None and key[0] == inserted[0] and key[1] >= inserted[2]:
            moved = (key[0], key[1] - (inserted[2] - inserted[1]), key[2])
            if remaining[moved] > 0:
                remaining[moved] -= 1
                continue
        if renamed is not None and key[0] == renamed[1]:
            old = (renamed[0], key[1], key[2])
            if remaining[old] > 0:
                remaining[old] -= 1
                continue
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            out.append(key)
    return sorted(out)


def _tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed")
    return found


@dataclass(frozen=True, slots=True)
class CliRun:
    errors: list[ErrorKey]
    #: Wall time of basedpyright and ruff, one after the other.
    seconds: float


def run_cli(root: Path, paths: Sequence[str]) -> CliRun:
    """basedpyright and ruff on ``paths`` (those that exist) under ``root``,
    as the command line runs them there."""
    present = [p for p in paths if (root / p).exists()]
    if not present:
        return CliRun([], 0.0)
    started = time.monotonic()
    pyright = subprocess.run(
        [_tool("basedpyright"), "--outputjson", *present],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    ruff = run_ruff(root, present)
    seconds = time.monotonic() - started
    errors = parse_basedpyright(root, pyright.stdout) + parse_ruff(root, ruff)
    return CliRun(sorted(errors), seconds)


def run_ruff(root: Path, paths: Sequence[str]) -> str:
    """``ruff check``'s JSON on ``paths``, never fixing: a project may set
    ``fix = true`` (flask does), which rewrote the scratch tree and reported
    rows of the fixed text (issue 32: a seeded error's F821 one line below
    where it is, and the importers' imports re-sorted for every later case)."""
    command = ["check", "--no-cache", "--no-fix", "--output-format", "json", "--exit-zero"]
    return subprocess.run(
        [_tool("ruff"), *command, *paths],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
