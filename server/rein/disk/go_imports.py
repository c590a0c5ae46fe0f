"""The line scan of a Go file's imports, for the analyzer pool's importer
index (:mod:`rein.disk.importers`). A Go package is a folder: a file is
known by its package's import path (the ``module`` line of the nearest
enclosing ``go.mod`` joined with the file's folder below it, so the modules
of a multi-module repository or a ``go.work`` meet by their paths), and its
imports are the quoted paths of its ``import`` declarations (single or
parenthesised). The other files of the same folder count as importers too:
they share the package, also when no ``go.mod`` encloses it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

__all__ = ["GoModules", "go_imports", "go_module"]

_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)
_SINGLE = re.compile(r'^\s*import\s+(?:[\w.]+\s+)?"([^"]+)"', re.MULTILINE)
_BLOCK = re.compile(r"^\s*import\s*\((.*?)\)", re.MULTILINE | re.DOTALL)
_QUOTED = re.compile(r'"([^"]+)"')


def go_module(go_mod: str | None) -> str | None:
    """The module path of a ``go.mod``'s text."""
    match = _MODULE.search(go_mod or "")
    return match.group(1).strip('"') if match else None


class GoModules:
    """The nearest enclosing ``go.mod`` of each folder, read with ``read``
    (a workspace path -> its text, or None), each folder looked at once."""

    def __init__(self, read: Callable[[str], str | None]) -> None:
        self._read = read
        #: folder -> (the module's folder, its module path), or None.
        self._of: dict[str, tuple[str, str] | None] = {}

    def _module(self, folder: str) -> tuple[str, str] | None:
        if folder not in self._of:
            manifest = posixpath.join(folder, "go.mod") if folder else "go.mod"
            module = go_module(self._read(manifest))
            if module is not None:
                self._of[folder] = (folder, module)
            else:
                self._of[folder] = self._module(posixpath.dirname(folder)) if folder else None
        return self._of[folder]

    def package(self, path: str) -> str | None:
        """The import path of ``path``'s package; with no enclosing
        ``go.mod``, a key of its folder alone (its folder's files still meet)."""
        if not path.endswith(".go"):
            return None
        folder = posixpath.dirname(path)
        found = self._module(folder)
        if found is None:
            return f"go-folder:{folder}"
        root, module = found
        below = posixpath.relpath(folder or ".", root or ".")
        return module if below == "." else f"{module}/{below}"


def go_imports(text: str) -> set[str]:
    """The import paths of a Go file (its import declarations come first:
    the scan stops at the first ``func``, ``type``, ``var`` or ``const``)."""
    head = re.split(r"^(?:func|type|var|const)\b", text, maxsplit=1, flags=re.MULTILINE)[0]
    found = set(_SINGLE.findall(head))
    for block in _BLOCK.findall(head):
        found.update(_QUOTED.findall(block))
    return found
