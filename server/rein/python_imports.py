"""The line scan of a Python file's imports: which modules (and which of
their names) a file imports, read from its import statements alone (no
parse, no import resolution), relative forms resolved against the file's
own package:

* ``import pkg.mod``, ``import pkg.mod as m``;
* ``from pkg.mod import x``, ``from pkg import mod``;
* relative forms (``from .mod import x``, ``from . import mod``,
  ``from ..pkg.mod import x``), parenthesised and continued lines.

Module names are paths relative to the workspace root, or to its ``src/``
folder when the file lives there. A leaf: it imports nothing of Rein, so
the analyzer pool's importer index (:mod:`rein.disk.importers`), the
analyzer gate (:mod:`rein.analysis.run_texts`: what imports a module the
run created) and the tests gate's selection
(:mod:`rein.testgate.import_graph`) share it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["import_names", "imported_modules", "module_name"]

_FROM = re.compile(r"^\s*from\s+(\.*[\w.]*)\s+import\s+(.*)$")
_IMPORT = re.compile(r"^\s*import\s+(.+)$")
_INLINE = re.compile(r"[:;]\s*((?:import|from)\s.*)$")


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
    """Import statements, with parenthesised and backslash continuations
    joined; one after a compound statement's colon or a semicolon on the
    same line too (``try: import x``, ``if TYPE_CHECKING: from a import b``,
    ``x = 1; import y``)."""
    lines = iter(text.splitlines())
    for line in lines:
        if "import" not in line:
            continue
        statement = line.split("#", 1)[0]
        if not statement.lstrip().startswith(("import ", "from ")):
            inline = _INLINE.search(statement)
            if inline is None:
                continue
            statement = inline.group(1)
        while statement.rstrip().endswith("\\") or ("(" in statement and ")" not in statement):
            more = next(lines, None)
            if more is None:
                break
            statement = statement.rstrip().rstrip("\\") + " " + more.split("#", 1)[0]
        yield from statement.split(";")


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
