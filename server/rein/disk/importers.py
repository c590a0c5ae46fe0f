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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rein.python_imports import imported_modules, module_name

__all__ = ["ImportIndex"]


class ImportIndex:
    """Module -> the workspace files that import it, built on first use
    from ``files`` read with ``read`` (a path relative to the root -> its
    text, or None)."""

    def __init__(self, files: Iterable[str], read: Callable[[str], str | None]) -> None:
        self._files = [f for f in files if module_name(f) is not None]
        self._read = read
        self._importers: dict[str, set[str]] | None = None
        self._by_module: dict[str, str] = {}

    def _build(self) -> dict[str, set[str]]:
        index: dict[str, set[str]] = {}
        for path in self._files:
            module = module_name(path)
            if module is not None:
                self._by_module.setdefault(module, path)
            text = self._read(path)
            if text is None:
                continue
            for imported in imported_modules(path, text):
                index.setdefault(imported, set()).add(path)
        return index

    def importers(self, path: str, limit: int) -> list[str]:
        """The files that import ``path``'s module (or its package, when the
        package's ``__init__`` imports it), at most ``limit``, nearest
        first (same package, then by path)."""
        module = module_name(path)
        if module is None or limit <= 0:
            return []
        if self._importers is None:
            self._importers = self._build()
        targets = {module}
        parent = module.rpartition(".")[0]
        init = self._by_module.get(parent) if parent else None
        if init is not None and init in self._importers.get(module, set()):
            targets.add(parent)
        found = {p for t in targets for p in self._importers.get(t, set())}
        found.discard(path)
        here = path.rpartition("/")[0]
        ordered = sorted(found, key=lambda p: (p.rpartition("/")[0] != here, p))
        return ordered[:limit]

    def update(self, path: str) -> None:
        """``path`` changed (or appeared, or went): index its imports anew."""
        module = module_name(path)
        if module is None:
            return
        if path not in self._files:
            self._files.append(path)
        if self._importers is None:
            return
        for importers in self._importers.values():
            importers.discard(path)
        text = self._read(path)
        if text is None:
            return
        self._by_module.setdefault(module, path)
        for imported in imported_modules(path, text):
            self._importers.setdefault(imported, set()).add(path)
