"""Where the tests gate's pytest keeps compiled modules, and what of them
must go.

The gate's pytest runs with ``PYTHONPYCACHEPREFIX`` set (and
``PYTHONDONTWRITEBYTECODE`` unset): the interpreter writes every compiled
module, and pytest its rewritten test modules, under that prefix, at the
module's absolute folder (``<prefix>/tmp/rein-tests-x/proj/pkg/mod.cpython-311.pyc``),
never in a ``__pycache__`` beside a source file. The prefix is shared
(:func:`shared_prefix`: one per user, every tree, gate and session; the
file names carry the interpreter's tag, the folders the absolute path, so
no two trees clash), so the standard library's and the dependencies'
modules are compiled once, not once per shadow tree. A sandboxed run
(``sandbox.also``), which can write only its tree's own folder, uses a
prefix in that folder instead (:attr:`rein.testgate.shadow.ShadowTree.own_pycache`),
so no test run in the sandbox writes a file another run would import.

A compiled file is trusted while its source's size and whole-second mtime
are the same, so what a test could write again with the same stamp must
go: a placed module's compiled files (:func:`drop_compiled`), a folder's
when it is removed (:func:`drop_mirror`), and, after each run, those of
paths in the temporary folder that no shadow tree owns nor links to
(:func:`drop_foreign`: pytest's ``pytest-of-*`` folders, a reused
``--basetemp`` there).
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "TREE_PREFIX",
    "drop_compiled",
    "drop_foreign",
    "drop_mirror",
    "mirror",
    "shared_prefix",
]

#: A shadow tree's folder name in the temporary folder starts with this.
TREE_PREFIX = "rein-tests-"


def shared_prefix() -> Path:
    """The user's prefix: ``$XDG_CACHE_HOME/rein/pycache``, else
    ``~/.cache/rein/pycache``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rein" / "pycache"


def mirror(prefix: Path, folder: Path) -> Path:
    """Where ``prefix`` keeps the compiled modules of ``folder`` (absolute)."""
    return prefix.joinpath(*folder.parts[1:])


def _as_named(folder: Path) -> set[Path]:
    """``folder`` as imported and as ``getcwd()`` has it (resolved)."""
    return {folder, folder.resolve()}


def drop_compiled(module: Path, prefixes: Iterable[Path]) -> None:
    """The interpreter's compiled files of ``module`` (and pytest's
    rewritten ones) in each prefix and in a ``__pycache__`` beside it."""
    if module.suffix != ".py":
        return
    pattern = glob.escape(module.stem) + ".*.pyc"
    folders = {module.parent / "__pycache__"}
    for prefix in prefixes:
        folders.update(mirror(prefix, parent) for parent in _as_named(module.parent))
    for folder in folders:
        for compiled in folder.glob(pattern):
            compiled.unlink(missing_ok=True)


def drop_mirror(folder: Path, prefixes: Iterable[Path]) -> None:
    """Every compiled file of what ``folder`` held, in each prefix (call
    before the folder is deleted: its resolved path is read)."""
    named = _as_named(folder)
    for prefix in prefixes:
        for path in named:
            shutil.rmtree(mirror(prefix, path), ignore_errors=True)


def drop_foreign(prefix: Path, owned: Iterable[Path] = ()) -> None:
    """The compiled files of paths in the temporary folder that are not a
    shadow tree's nor in ``owned`` (the folders a tree links to): a
    test's temporary folders, which a later test may fill again with
    same-stamped modules."""
    keep = {mirror(prefix, path) for folder in owned for path in _as_named(folder)}
    for temp in _as_named(Path(tempfile.gettempdir())):
        _drop_unkept(mirror(prefix, temp), keep, top=True)


def _drop_unkept(folder: Path, keep: set[Path], *, top: bool = False) -> None:
    """Delete what ``folder`` holds but the folders in ``keep`` and their
    ancestors (a shadow tree's, at the top)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        if (top and entry.name.startswith(TREE_PREFIX)) or path in keep:
            continue
        if entry.is_dir(follow_symlinks=False):
            if any(path in kept.parents for kept in keep):
                _drop_unkept(path, keep)
            else:
                shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
