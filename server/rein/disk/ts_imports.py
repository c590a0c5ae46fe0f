"""The line scan of a TypeScript or JavaScript file's imports, for the
analyzer pool's importer index (:mod:`rein.disk.importers`): which workspace
files a file imports, read from its ``import``/``export ... from``/
``require()``/``import()`` specifiers alone (no parse, no module
resolution beyond the cheap part):

* a relative specifier (``./util``, ``../lib/index.js``) is resolved against
  the file's folder;
* a bare one is tried against the root ``tsconfig.json``'s (or
  ``jsconfig.json``'s) ``compilerOptions.baseUrl`` and its ``paths``
  patterns with one ``*``; a package name resolves to nothing.

A file is known by its module key: its path without the extension, and a
folder's ``index`` file also by the folder (``lib/index.ts`` -> ``lib/index``
and ``lib``). An import's key is the specifier's path without a script
extension, so ``./util``, ``./util.js`` and ``./util.ts`` meet.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["TS_EXTENSIONS", "TsResolver", "module_keys"]

TS_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")

_SPECIFIER = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)(["'])([^"'\n]+)\1""",
    re.MULTILINE,
)


def _strip(path: str) -> str:
    """The path without a script extension (``.d.ts`` too)."""
    if path.endswith(".d.ts"):
        return path[: -len(".d.ts")]
    root, ext = posixpath.splitext(path)
    return root if ext in TS_EXTENSIONS else path


def module_keys(path: str) -> list[str]:
    """The keys an import of ``path`` meets it by; none for another file."""
    if not path.endswith(TS_EXTENSIONS):
        return []
    key = _strip(path)
    keys = [key]
    folder, name = posixpath.split(key)
    if name == "index":
        keys.append(folder)
    return keys


@dataclass
class TsResolver:
    """The root's ``baseUrl`` and ``paths`` (from ``tsconfig.json`` or
    ``jsconfig.json`` read with ``read``), and the scan with them."""

    base_url: str | None = None
    #: (prefix, suffix) of a pattern -> its targets' (prefix, suffix).
    paths: list[tuple[tuple[str, str], list[tuple[str, str]]]] = field(default_factory=list)

    @classmethod
    def of(cls, read_root_file: Callable[[str], str | None]) -> TsResolver:
        """``read_root_file(name)`` gives a root file's text or None."""
        for name in ("tsconfig.json", "jsconfig.json"):
            text = read_root_file(name)
            if text:
                return cls.parse(text)
        return cls()

    @classmethod
    def parse(cls, text: str) -> TsResolver:
        try:
            # tsconfig allows comments and trailing commas: drop the common forms.
            cleaned = re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE)
            cleaned = re.sub(r",(\s*[}\]])", r"\1", cleaned)
            options = json.loads(cleaned).get("compilerOptions") or {}
        except (ValueError, AttributeError):
            return cls()
        base = options.get("baseUrl")
        base_url = posixpath.normpath(base) if isinstance(base, str) else None
        out: list[tuple[tuple[str, str], list[tuple[str, str]]]] = []
        paths = options.get("paths")
        if isinstance(paths, dict):
            for pattern, targets in paths.items():
                if not isinstance(targets, list) or pattern.count("*") > 1:
                    continue
                prefix, _, suffix = pattern.partition("*")
                split = [
                    tuple(t.partition("*")[::2])
                    for t in targets
                    if isinstance(t, str) and t.count("*") <= 1
                ]
                out.append(((prefix, suffix), split))  # type: ignore[arg-type]
        return cls(base_url, out)

    def _bare(self, specifier: str) -> list[str]:
        base = self.base_url or "."
        found: list[str] = []
        for (prefix, suffix), targets in self.paths:
            if specifier.startswith(prefix) and specifier.endswith(suffix):
                middle = specifier[len(prefix) : len(specifier) - len(suffix) or None]
                for before, after in targets:
                    found.append(posixpath.join(base, before + middle + after))
        if self.base_url is not None:
            found.append(posixpath.join(base, specifier))
        return found

    def imported(self, path: str, text: str) -> set[str]:
        """The module keys ``path``'s imports may name."""
        folder = posixpath.dirname(path)
        keys: set[str] = set()
        for match in _SPECIFIER.finditer(text):
            specifier = match.group(2)
            if specifier.startswith("."):
                candidates = [posixpath.join(folder, specifier)]
            else:
                candidates = self._bare(specifier)
            for candidate in candidates:
                normal = posixpath.normpath(candidate)
                if not normal.startswith("../"):
                    keys.add(_strip(normal))
        return keys
