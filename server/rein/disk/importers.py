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
specifiers, the root tsconfig's ``baseUrl`` and ``paths``) and Go files
(:mod:`rein.disk.go_imports`: the package is the folder, named after the
root ``go.mod``'s module; the folder's other files count as importers) are
indexed the same way, each language by its own keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rein.disk.go_imports import go_imports, go_module, go_package
from rein.disk.ts_imports import TsResolver, module_keys
from rein.python_imports import imported_modules, module_name

__all__ = ["ImportIndex"]


class ImportIndex:
    """Module (or TypeScript module key, or Go package) -> the workspace
    files that import it, built on first use from ``files`` read with
    ``read`` (a path relative to the root -> its text, or None)."""

    def __init__(self, files: Iterable[str], read: Callable[[str], str | None]) -> None:
        self._read = read
        self._importers: dict[str, set[str]] | None = None
        self._by_module: dict[str, str] = {}
        self._ts: TsResolver | None = None
        self._go: str | None = None
        self._files = [f for f in files if self._keys(f)]

    def _keys(self, path: str) -> list[str]:
        """The keys an import meets ``path`` by (a Python module name, a
        TypeScript module key, a Go package's import path)."""
        if path.endswith(".go"):
            if self._go is None:
                self._go = go_module(self._read("go.mod")) or ""
            package = go_package(path, self._go or None)
            return [package] if package else []
        module = module_name(path)
        return [module] if module is not None else module_keys(path)

    def _imported(self, path: str, text: str) -> set[str]:
        if path.endswith(".go"):
            # The folder's other files share the package: they count too.
            return go_imports(text) | set(self._keys(path))
        if module_name(path) is not None:
            return imported_modules(path, text)
        if self._ts is None:
            self._ts = TsResolver.of(self._read)
        return self._ts.imported(path, text)

    def _add(self, index: dict[str, set[str]], path: str) -> None:
        text = self._read(path)
        if text is None:
            return
        module = module_name(path)
        if module is not None:
            self._by_module.setdefault(module, path)
        for imported in self._imported(path, text):
            index.setdefault(imported, set()).add(path)

    def _build(self) -> dict[str, set[str]]:
        index: dict[str, set[str]] = {}
        for path in self._files:
            self._add(index, path)
        return index

    def importers(self, path: str, limit: int) -> list[str]:
        """The files that import ``path``'s module (or its package, when the
        package's ``__init__`` imports it), at most ``limit``, nearest
        first (same package, then by path)."""
        keys = self._keys(path)
        if not keys or limit <= 0:
            return []
        if self._importers is None:
            self._importers = self._build()
        targets = set(keys)
        module = module_name(path)
        parent = module.rpartition(".")[0] if module else ""
        init = self._by_module.get(parent) if parent else None
        if module and init is not None and init in self._importers.get(module, set()):
            targets.add(parent)
        found = {p for t in targets for p in self._importers.get(t, set())}
        found.discard(path)
        here = path.rpartition("/")[0]
        ordered = sorted(found, key=lambda p: (p.rpartition("/")[0] != here, p))
        return ordered[:limit]

    def update(self, path: str) -> None:
        """``path`` changed (or appeared, or went): index its imports anew."""
        if not self._keys(path):
            return
        if path not in self._files:
            self._files.append(path)
        if self._importers is None:
            return
        for importers in self._importers.values():
            importers.discard(path)
        self._add(self._importers, path)
