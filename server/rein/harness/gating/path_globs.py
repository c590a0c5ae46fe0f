"""Which workspace paths are code and which are the preview's own output.

Both are lists of globs on workspace-relative POSIX paths, read like a
.gitignore: a pattern without ``/`` matches a name at any depth (``*.log``,
``README*``), a pattern with ``/`` matches from the workspace root
(``out/**``, ``docs/api.md``), ``dir/`` is everything under a folder named
``dir`` at any depth, ``*`` and ``?`` stay within one name, ``**`` spans
folders, and ``!pattern`` takes what an earlier pattern matched back out.
The last pattern that matches decides.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

__all__ = ["DEFAULT_NON_CODE", "PathGlobs", "is_code", "is_preview_output"]

#: What is not code by default: documentation and prose, licences, the
#: repository's own housekeeping. Text files that are manifests (the
#: requirements of pip, CMake's lists) stay code.
DEFAULT_NON_CODE: tuple[str, ...] = (
    "*.md",
    "*.markdown",
    "*.rst",
    "*.adoc",
    "*.txt",
    "!requirements*.txt",
    "!requirements/**",
    "!constraints*.txt",
    "!CMakeLists.txt",
    "docs/",
    "doc/",
    "LICENSE*",
    "LICENCE*",
    "COPYING*",
    "AUTHORS*",
    "CHANGELOG*",
    "CHANGES*",
    "NOTICE*",
    ".gitignore",
    ".gitattributes",
    ".editorconfig",
    ".github/",
)


def _translate(pattern: str) -> str:
    """The regular expression of one glob (without its ``!``)."""
    if pattern.startswith("./"):
        pattern = pattern[2:]
    anchored = pattern.startswith("/")
    pattern = pattern.lstrip("/")
    folder = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if folder:
        pattern += "/**"
    elif "/" not in pattern:
        anchored = False
    else:
        anchored = True
    if not anchored and not pattern.startswith("**/"):
        pattern = "**/" + pattern
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


class PathGlobs:
    """An ordered list of globs; the last that matches a path decides."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(p.strip() for p in patterns if p.strip())
        self._rules = [
            (p.startswith("!"), re.compile(_translate(p[1:] if p.startswith("!") else p)))
            for p in self.patterns
        ]

    def __call__(self, path: str) -> bool:
        path = path.lstrip("/")
        if path.startswith("./"):
            path = path[2:]
        matched = False
        for negated, rule in self._rules:
            if rule.fullmatch(path):
                matched = not negated
        return matched


@functools.lru_cache(maxsize=32)
def _globs(patterns: tuple[str, ...]) -> PathGlobs:
    return PathGlobs(patterns)


def is_code(path: str, non_code: Sequence[str] = DEFAULT_NON_CODE) -> bool:
    """A change to ``path`` changes what the program does: it matches none
    of the ``non_code`` globs (``gates.preview.nonCode``)."""
    return not _globs(tuple(non_code))(path)


def is_preview_output(path: str, outputs: Sequence[str]) -> bool:
    """``path`` matches one of the ``outputs`` globs
    (``gates.preview.outputs``)."""
    return _globs(tuple(outputs))(path)
