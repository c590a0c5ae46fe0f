"""The line scan of a Go file's imports, for the analyzer pool's importer
index (:mod:`rein.disk.importers`). A Go package is a folder: a file is
known by its package's import path (the ``module`` line of the root's
``go.mod`` joined with the file's folder), and its imports are the quoted
paths of its ``import`` declarations (single or parenthesised). The other
files of the same folder count as importers too: they share the package.
"""

from __future__ import annotations

import posixpath
import re

__all__ = ["go_imports", "go_module", "go_package"]

_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)
_SINGLE = re.compile(r'^\s*import\s+(?:[\w.]+\s+)?"([^"]+)"', re.MULTILINE)
_BLOCK = re.compile(r"^\s*import\s*\((.*?)\)", re.MULTILINE | re.DOTALL)
_QUOTED = re.compile(r'"([^"]+)"')


def go_module(go_mod: str | None) -> str | None:
    """The module path of a ``go.mod``'s text."""
    match = _MODULE.search(go_mod or "")
    return match.group(1).strip('"') if match else None


def go_package(path: str, module: str | None) -> str | None:
    """The import path of ``path``'s package (None: no ``.go`` file or no module)."""
    if not path.endswith(".go") or module is None:
        return None
    folder = posixpath.dirname(path)
    return f"{module}/{folder}" if folder else module


def go_imports(text: str) -> set[str]:
    """The import paths of a Go file (its import declarations come first:
    the scan stops at the first ``func``, ``type``, ``var`` or ``const``)."""
    head = re.split(r"^(?:func|type|var|const)\b", text, maxsplit=1, flags=re.MULTILINE)[0]
    found = set(_SINGLE.findall(head))
    for block in _BLOCK.findall(head):
        found.update(_QUOTED.findall(block))
    return found
