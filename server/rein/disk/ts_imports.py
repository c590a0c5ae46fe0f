"""The line scan of a TypeScript or JavaScript file's imports, for the
analyzer pool's importer index (:mod:`rein.disk.importers`): which workspace
files a file imports, read from its ``import``/``export ... from``/
``require()``/``import()`` specifiers alone (no parse, no module
resolution beyond the cheap part):

* a relative specifier (``./util``, ``../lib/index.js``) is resolved against
  the file's folder;
* a bare one is tried against the root ``tsconfig.json``'s (or
  ``jsconfig.json``'s) ``compilerOptions.baseUrl`` and its ``paths``
  patterns with one ``*``, and against the workspace's own packages (a
  monorepo's ``@org/pkg``): the ``package.json`` files of the folders the
  scanned files are in, and of their parents, by their ``name``; the package
  is met by its ``types``/``main``/``source`` file and its (or its ``src``
  folder's) ``index``. Another package name resolves to nothing.

A barrel's re-exports (``export * from``, ``export {...} from``) are told
apart (:meth:`TsResolver.scan`): the barrel's importers count as importers of
what it re-exports.

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

_REEXPORT = re.compile(
    r"""\bexport\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s*from\s*(["'])([^"'\n]+)\1"""
)
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


def _package(text: str | None) -> tuple[str, list[str]] | None:
    """A ``package.json``'s name and its entry files (relative to it)."""
    try:
        data = json.loads(text or "")
    except ValueError:
        return None
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        return None
    entries = [data.get(k) for k in ("types", "typings", "main", "source", "module")]
    return name, [e for e in entries if isinstance(e, str)]


@dataclass
class TsResolver:
    """The root's ``baseUrl`` and ``paths`` (from ``tsconfig.json`` or
    ``jsconfig.json`` read with ``read``), and the scan with them."""

    base_url: str | None = None
    #: (prefix, suffix) of a pattern -> its targets' (prefix, suffix).
    paths: list[tuple[tuple[str, str], list[tuple[str, str]]]] = field(default_factory=list)
    #: Reads a workspace file (None: workspace packages are not looked for).
    read: Callable[[str], str | None] | None = None
    #: The workspace's packages: name -> (folder, entry files).
    packages: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    #: The folders whose ``package.json`` was looked for.
    _seen: set[str] = field(default_factory=set, init=False, repr=False)

    @classmethod
    def of(cls, read: Callable[[str], str | None]) -> TsResolver:
        """``read(path)`` gives a workspace file's text or None."""
        found = cls()
        for name in ("tsconfig.json", "jsconfig.json"):
            text = read(name)
            if text:
                found = cls.parse(text)
                break
        found.read = read
        return found

    def look_for_packages(self, path: str) -> None:
        """Note the ``package.json`` of ``path``'s folder and of its parents
        (each folder read once)."""
        folder = posixpath.dirname(path)
        while self.read is not None and folder not in self._seen:
            self._seen.add(folder)
            manifest = posixpath.join(folder, "package.json") if folder else "package.json"
            package = _package(self.read(manifest))
            if package is not None:
                self.packages.setdefault(package[0], (folder, package[1]))
            if not folder:
                break
            folder = posixpath.dirname(folder)

    def _workspace_package(self, specifier: str) -> list[str]:
        parts = specifier.split("/")
        size = 2 if specifier.startswith("@") else 1
        package = self.packages.get("/".join(parts[:size]))
        if package is None:
            return []
        folder, entries = package
        rest = "/".join(parts[size:])
        if rest:
            return [posixpath.join(folder, rest), posixpath.join(folder, "src", rest)]
        found = [posixpath.join(folder, e) for e in entries]
        return [*found, posixpath.join(folder, "src"), folder or "."]

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
        return found + self._workspace_package(specifier)

    def _keys(self, folder: str, specifier: str) -> set[str]:
        if specifier.startswith("."):
            candidates = [posixpath.join(folder, specifier)]
        else:
            candidates = self._bare(specifier)
        normal = (posixpath.normpath(c) for c in candidates)
        # The root's index is the root folder's key: "".
        return {_strip(n) if n != "." else "" for n in normal if not n.startswith("../")}

    def scan(self, path: str, text: str) -> tuple[set[str], set[str]]:
        """The module keys ``path``'s imports may name, and those of them it
        re-exports (``export * from``, ``export {...} from``)."""
        folder = posixpath.dirname(path)
        keys: set[str] = set()
        for match in _SPECIFIER.finditer(text):
            keys |= self._keys(folder, match.group(2))
        again: set[str] = set()
        for match in _REEXPORT.finditer(text):
            again |= self._keys(folder, match.group(2))
        return keys, again
