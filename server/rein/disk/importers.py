"""Which files import a module: the files an analyzer must also look at
when a large workspace is analysed file by file.

In a workspace too large for the analyzer's own workspace analysis (see
``gates.analyzer.workspaceMaxFiles``), basedpyright checks only the files
that are open. A change to ``pkg/mod.py`` can break the files that import
it, so the pool opens those too before the change (their baseline) and
after it (their verdict). This module finds them from the import statements
alone (the line scan of :mod:`rein.python_imports`), with one level of
re-export: when ``pkg/__init__.py`` imports ``pkg.mod``, the importers of
``pkg`` count too (``from pkg import name_defined_in_mod``).

TypeScript and JavaScript files (:mod:`rein.disk.ts_imports`: relative
specifiers, the root tsconfig's ``baseUrl`` and ``paths``, the workspace's
own packages by their ``package.json`` name) and Go files
(:mod:`rein.disk.go_imports`: the package is the folder, named after the
nearest enclosing ``go.mod``'s module; the folder's other files count as
importers, with or without a ``go.mod``) are indexed the same way, each
language by its own keys. A TypeScript barrel (``lib/index.ts`` with
``export * from './a'``) passes its importers on to what it re-exports,
through barrels re-exporting barrels up to :data:`BARREL_DEPTH` deep.
C and C++ files (:mod:`rein.disk.c_includes`: an ``#include`` meets a file
by its path's tails) too, a header passing its importers on to what it
includes as a barrel does, at any depth (each header once).

Building the index reads every indexed file: :meth:`ImportIndex.build` is
meant for a worker thread (the pool awaits it off the event loop); one
build runs, a call meanwhile waits for it, and :meth:`ImportIndex.update`
never waits (it is applied at the next question).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable

from rein.disk.c_includes import C_EXTENSIONS, HEADER_EXTENSIONS, c_includes, c_keys
from rein.disk.go_imports import GoModules, go_imports
from rein.disk.ts_imports import TsResolver, module_keys
from rein.python_imports import import_names, imported_modules, module_name

#: Folders modules are named from besides the root and ``src/``, each with
#: the package it is (``("lib", "")``: ``lib/pkg/mod.py`` is ``pkg.mod``;
#: ``("lib/pkg", "pkg")``): :mod:`rein.disk.python_environment`.
Roots = tuple[tuple[str, str], ...]


def rooted_names(path: str, roots: Roots) -> list[str]:
    """The module names the Python file ``path`` has from ``roots``."""
    names: list[str] = []
    for folder, package in roots:
        if not path.startswith(f"{folder}/"):
            continue
        parts = path[len(folder) + 1 :].rsplit(".", 1)[0].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        parts = [*package.split("."), *parts] if package else parts
        if parts and all(p.isidentifier() for p in parts):
            names.append(".".join(parts))
    return names


__all__ = ["BARREL_DEPTH", "ImportIndex", "Roots", "rooted_names"]

#: How many barrels deep a TypeScript re-export passes importers on (a C
#: header's includers: no bound but the headers, each met once).
BARREL_DEPTH = 4


def _python(path: str) -> bool:
    """A Python file, importable or not (django's ``migrations/0001_initial.py``
    has no module name but imports what it uses)."""
    return path.endswith((".py", ".pyi"))


def _typescript(path: str) -> bool:
    return not _python(path) and bool(module_keys(path))


def _indexed(path: str) -> bool:
    return path.endswith((".go", *C_EXTENSIONS)) or _python(path) or bool(module_keys(path))


def _from_their_folder(index: dict[str, set[str]], path: str) -> set[str]:
    """The files importing the Python module at ``path`` by its name from
    their own folder (basedpyright resolves an import from the importing
    file's folder too: ``scripts/run.py``'s ``import lib`` meets
    ``scripts/lib.py``, ``a/x.py``'s ``import b.c`` meets ``a/b/c.py``)."""
    parts = path.rpartition(".")[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    found: set[str] = set()
    for i in range(1, len(parts)):
        folder, name = "/".join(parts[:i]), ".".join(parts[i:])
        found.update(p for p in index.get(name, ()) if p.rpartition("/")[0] == folder)
    return found


def _bound_packages(path: str, text: str) -> set[str]:
    """The packages whose name ``text``'s plain imports of their modules
    bind: ``import a.b.c`` binds ``a``, and ``a.b`` is reached through it,
    so the file depends on ``a/__init__.py`` and ``a/b/__init__.py``
    (``import a.b.c as m`` and ``from a.b.c import x`` bind neither)."""
    found: set[str] = set()
    for module, name, bound in import_names(path, text):
        if name is None and bound == module and "." in module:
            parts = module.split(".")
            found.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return found


class ImportIndex:
    """Module (or TypeScript module key, or Go package) -> the workspace
    files that import it, built on first use from ``files`` read with
    ``read`` (a path relative to the root -> its text, or None)."""

    def __init__(self, files: Iterable[str], read: Callable[[str], str | None]) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._importers: dict[str, set[str]] | None = None
        #: TypeScript module key -> the barrels that re-export it.
        self._reexports: dict[str, set[str]] = {}
        self._by_module: dict[str, str] = {}
        #: Package -> the files binding its name by importing a module of it
        #: (``import pkg.sub.mod`` binds ``pkg``: ``pkg`` and ``pkg.sub``).
        self._binding: dict[str, set[str]] = {}
        self._ts: TsResolver | None = None
        self._go = GoModules(read)
        self._files = [f for f in files if _indexed(f)]
        self._pending: deque[str] = deque()

    @property
    def built(self) -> bool:
        return self._importers is not None

    def _keys(self, path: str, roots: Roots = ()) -> list[str]:
        """The keys an import meets ``path`` by (a Python module name, from
        the root or ``src/`` and from each of ``roots``; a TypeScript module
        key, a Go package's import path)."""
        if path.endswith(".go"):
            package = self._go.package(path)
            return [package] if package else []
        if _python(path):
            module = module_name(path)
            return ([module] if module is not None else []) + rooted_names(path, roots)
        if path.endswith(C_EXTENSIONS):
            return c_keys(path)
        return module_keys(path)

    def _resolver(self) -> TsResolver:
        if self._ts is None:
            self._ts = TsResolver.of(self._read)
        return self._ts

    def _add(self, index: dict[str, set[str]], path: str) -> None:
        text = self._read(path)
        if text is None:
            return
        module = module_name(path)
        if path.endswith(".go"):
            # The folder's other files share the package: they count too.
            imported = go_imports(text) | set(self._keys(path))
        elif _python(path):
            if module is not None:
                self._by_module.setdefault(module, path)
            imported = imported_modules(path, text)
            for package in _bound_packages(path, text):
                self._binding.setdefault(package, set()).add(path)
        elif path.endswith(C_EXTENSIONS):
            imported = c_includes(text)
            if path.endswith(HEADER_EXTENSIONS):  # a header: what it includes, it passes on
                for key in imported:
                    self._reexports.setdefault(key, set()).add(path)
        else:
            imported, again = self._resolver().scan(path, text)
            for key in again:
                self._reexports.setdefault(key, set()).add(path)
        for key in imported:
            index.setdefault(key, set()).add(path)

    def build(self) -> None:
        """Read and index every file (once; a call meanwhile waits for it),
        then apply the updates since."""
        with self._lock:
            self._ready()

    def _ready(self) -> dict[str, set[str]]:
        if self._importers is None:
            index: dict[str, set[str]] = {}
            # Every package first: a file may import one scanned after it.
            for path in filter(_typescript, self._files):
                self._resolver().look_for_packages(path)
            for path in self._files:
                self._add(index, path)
            self._importers = index
        while self._pending:
            self._apply(self._importers, self._pending.popleft())
        return self._importers

    def importers(self, path: str, limit: int, roots: Roots = ()) -> list[str]:
        """The files that import ``path``'s module (or its package, when the
        package's ``__init__`` imports it; or a barrel re-exporting it), at
        most ``limit``, nearest first (same package, then by path); a module
        under one of ``roots`` by its name from there too. Builds the index
        first if :meth:`build` did not."""
        if not _indexed(path) or limit <= 0:
            return []
        with self._lock:
            index = self._ready()
            keys = self._keys(path, roots)
            targets = set(keys)
            module = module_name(path)
            parent = module.rpartition(".")[0] if module else ""
            init = self._by_module.get(parent) if parent else None
            if module and init is not None and init in index.get(module, set()):
                # The package's __init__ re-exports it: by any of its names.
                targets |= {k.rpartition(".")[0] for k in keys if "." in k}
            targets |= self._through_barrels(path, keys)
            found = {p for t in targets for p in index.get(t, set())}
        found.discard(path)
        here = path.rpartition("/")[0]
        ordered = sorted(found, key=lambda p: (p.rpartition("/")[0] != here, p))
        return ordered[:limit]

    def closure(self, paths: Iterable[str], roots: Roots = ()) -> set[str]:
        """``paths`` and every indexed file whose analysis may depend on
        them: their importers, transitively (a file's diagnostics depend on
        its text, what it imports, transitively, and the environment). A
        package's ``__init__`` reached counts for the files importing from
        the package itself (``from pkg import x``, ``from . import mod``) and
        those binding its name (``import pkg.sub.mod`` binds ``pkg``, and
        ``pkg.sub`` through it), not for ``from pkg.mod import x`` nor
        ``import pkg.mod as m``: basedpyright resolves those to the module
        alone (checked on a real run: an ``__init__`` rebinding ``mod`` or
        ``x`` changes none of their diagnostics). One among ``paths`` (the
        changed files: created or deleted, perhaps) counts for every file
        importing a module of the package. A re-export (an
        ``__init__`` or a barrel importing a module, ``from .mod import *``
        included) passes its importers on at any depth; so does a file
        importing it from its own folder (:func:`_from_their_folder`). A
        module under one of ``roots`` (an editable install's folder:
        :mod:`rein.disk.python_environment`) is met by its name from there
        too. Builds the index first if :meth:`build` did not."""
        found = set(paths)
        with self._lock:
            index = self._ready()
            changed = set(found)
            frontier = [p for p in found if _indexed(p)]
            while frontier:
                path = frontier.pop()
                keys = self._keys(path, roots)
                targets = set(keys) | self._through_barrels(path, keys)
                reached = {other for target in targets for other in index.get(target, ())}
                if _python(path) and path.rpartition("/")[2] in ("__init__.py", "__init__.pyi"):
                    reached |= {p for k in keys for p in self._binding.get(k, ())}
                    if path in changed:
                        # Changed itself (created or deleted, perhaps): every
                        # file importing a module of the package.
                        prefixes = tuple(f"{k}." for k in keys)
                        reached |= {p for k in index if k.startswith(prefixes) for p in index[k]}
                if _python(path):
                    reached |= _from_their_folder(index, path)
                for other in reached - found:
                    found.add(other)
                    frontier.append(other)
        return found

    def _through_barrels(self, path: str, keys: list[str]) -> set[str]:
        """The keys of the barrels re-exporting ``keys`` (and of barrels
        re-exporting those, up to :data:`BARREL_DEPTH`; a C or C++ header's
        includers until no new one is found, ``seen`` stopping cycles: a
        header chain is often deeper than four, and a ``.c`` file five
        headers from the changed one was not opened)."""
        found: set[str] = set()
        seen = {path}
        frontier = keys
        depth = 0
        while path.endswith(C_EXTENSIONS) or depth < BARREL_DEPTH:
            depth += 1
            barrels = {b for k in frontier for b in self._reexports.get(k, ())} - seen
            if not barrels:
                break
            seen |= barrels
            frontier = [k for b in sorted(barrels) for k in self._keys(b)]
            found.update(frontier)
        return found

    def update(self, path: str) -> None:
        """``path`` changed (or appeared, or went): index its imports anew
        (at the next question; never waits for a build)."""
        if _indexed(path):
            self._pending.append(path)

    def _apply(self, index: dict[str, set[str]], path: str) -> None:
        if path not in self._files:
            self._files.append(path)
        for importers in index.values():
            importers.discard(path)
        for barrels in self._reexports.values():
            barrels.discard(path)
        for binders in self._binding.values():
            binders.discard(path)
        if _typescript(path):
            self._resolver().look_for_packages(path)
        self._add(index, path)
