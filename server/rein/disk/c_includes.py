"""The line scan of a C or C++ file's includes, for the analyzer pool's
importer index (:mod:`rein.disk.importers`). A file is met by the spellings
an ``#include`` can name it with: its path's every tail at a folder
boundary (``include/util.h`` by ``"util.h"`` and ``"include/util.h"``),
whatever the include paths are (Rein does not read the compile commands'
``-I``: two headers of one name in two folders are both met, which opens
a file more, never one less). A header passes its importers on to what it
includes (a change of ``a.h`` can break a ``.c`` file that includes ``b.h``,
which includes ``a.h``): the index treats headers as it treats TypeScript
barrels.

clangd, run without its background index, knows only the files open in
it: in a workspace over ``gates.analyzer.workspaceMaxFiles`` a header's
changed prototype broke every caller, none of them open, and the analyzer
gate passed.
"""

from __future__ import annotations

import posixpath
import re

__all__ = ["C_EXTENSIONS", "HEADER_EXTENSIONS", "c_includes", "c_keys"]

#: The C and C++ files the index reads (the clangd preset's extensions).
C_EXTENSIONS = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx")
#: Those whose includes pass their importers on.
HEADER_EXTENSIONS = (".h", ".hh", ".hpp", ".hxx")
_PREFIX = "c-include:"
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)


def c_keys(path: str) -> list[str]:
    """The keys an ``#include`` meets ``path`` by; none for another file."""
    if not path.endswith(C_EXTENSIONS):
        return []
    parts = path.split("/")
    return [_PREFIX + "/".join(parts[i:]) for i in range(len(parts))]


def c_includes(text: str) -> set[str]:
    """The keys of what a C or C++ file includes (``"x.h"`` and ``<x.h>``
    alike: a workspace header may be included either way)."""
    found: set[str] = set()
    for spelled in _INCLUDE.findall(text):
        name = posixpath.normpath(spelled.strip())
        while name.startswith("../"):  # the folder above: met by its tail
            name = name[3:]
        if name and name not in (".", ".."):
            found.add(_PREFIX + name.removeprefix("./"))
    return found
