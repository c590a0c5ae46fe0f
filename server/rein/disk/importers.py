"""Which files import a module: the files an analyzer must also look at
when a large workspace is analysed file by file.

In a workspace too large for the analyzer's own workspace analysis (see
``gates.analyzer.workspaceMaxFiles``), basedpyright checks only the files
that are open. A change to ``pkg/mod.py`` can break the files that import
it, so the pool opens those too before the change (their baseline) and
after it (their verdict). This module finds them from the import statements
alone (a line scan, no parse, no import resolution beyond the workspace):

* ``import pkg.mod``, ``import pkg.mod as m``;
* ``from pkg.mod import x``, ``from pkg import mod``;
* relative forms (``from .mod import x``, ``from . import mod``,
  ``from ..pkg.mod import x``);
* one level of re-export: when ``pkg/__init__.py`` imports ``pkg.mod``, the
  importers of ``pkg`` count too (``from pkg import name_defined_in_mod``).

Module names are paths relative to the workspace root, or to its ``src/``
folder when the file lives there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

__all__ = ["ImportIndex", "import_names", "imported_modules", "module_name"]

_FROM = re.compile(r"^\s*from\s+(\.*[\w.]*)\s+import\s+(.*)$")
_IMPORT = re.compile(r"^\s*import\s+(.+)$")


def module_name(path: str) -> str | None:
    """``pkg/mod.py`` -> ``pkg.mod``; ``pkg/__init__.py`` -> ``pkg``;
    ``src/pkg/mod.py`` -> ``pkg.mod``. None for a file that is no module."""
    if not path.endswith((".py", ".pyi")):
        return None
    parts = path.rsplit(".", 1)[0].split("/")
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def _package_of(path: str) -> list[str]:
    """The package a module's relative imports start from."""
    module = module_name(path)
    if module is None:
        return []
    parts = module.split(".")
    return parts if path.endswith(("__init__.py", "__init__.pyi")) else parts[:-1]


def _statements(text: str) -> Iterable[str]:
    """Import statements, with parenthesised and backslash continuations joined."""
    lines = iter(text.splitlines())
    for line in lines:
        if "import" not in line or not line.lstrip().startswith(("import ", "from ")):
            continue
        statement = line.split("#", 1)[0]
        while statement.rstrip().endswith("\\") or ("(" in statement and ")" not in statement):
            more = next(lines, None)
            if more is None:
                break
            statement = statement.rstrip().rstrip("\\") + " " + more.split("#", 1)[0]
        yield statement


def import_names(path: str, text: str) -> set[tuple[str, str | None, str | None]]:
    """The imports of ``text`` (the file at ``path``), relative forms
    resolved: ``(module, name, bound)`` for ``from module import name as
    bound`` (``bound`` is ``name`` without ``as``); ``(module, None,
    bound)`` for ``import module as bound`` (``bound`` is ``module``
    without ``as``); ``(module, None, None)`` for ``from module import *``."""
    out: set[tuple[str, str | None, str | None]] = set()
    for statement in _statements(text):
        match = _FROM.match(statement)
        if match:
            source, names = match.groups()
            dots = len(source) - len(source.lstrip("."))
            if dots:
                base = _package_of(path)
                if dots - 1 > len(base):
                    continue
                base = base[: len(base) - (dots - 1)]
                rest = source[dots:]
                source = ".".join([*base, *([rest] if rest else [])])
            if not source:
                continue
            found = 0
            for item in names.replace("(", " ").replace(")", " ").split(","):
                name, _, bound = item.strip().partition(" as ")
                name, bound = name.strip(), bound.strip() or name.strip()
                if name.isidentifier():
                    out.add((source, name, bound))
                    found += 1
            if not found:  # ``*``, or names the scan cannot read: all of it
                out.add((source, None, None))
            continue
        match = _IMPORT.match(statement)
        if match:
            for item in match.group(1).split(","):
                name, _, bound = item.strip().partition(" as ")
                name, bound = name.strip(), bound.strip() or name.strip()
                if name and all(p.isidentifier() for p in name.split(".")):
                    out.add((name, None, bound))
    return out


def imported_modules(path: str, text: str) -> set[str]:
    """Every module name ``text`` (the file at ``path``) may import: for
    ``from a import b`` both ``a`` and ``a.b``."""
    out: set[str] = set()
    for module, name, _ in import_names(path, text):
        out.add(module)
        if name is not None:
            out.add(f"{module}.{name}")
    return out


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
