"""The project's import graph for the tests gate: which files a change
reaches, name by name through package ``__init__`` re-exports.

Each file's imports come from the line scan of :mod:`rein.python_imports`.
Three refinements keep a change to one module from reaching every test
that imports the package: ``from pkg import run`` reaches the module
``pkg/__init__.py`` takes ``run`` from; ``from .mod import *`` in an
``__init__`` takes ``mod``'s literal ``__all__``; and ``import pkg`` in a
file that uses it only as ``pkg.name`` counts as ``from pkg import name``.
The names an ``__init__`` defines itself count as changed with what it
imports, and an ``__init__`` with a module ``__getattr__`` passes on all.
A module the project loads by name (an entry point's, a dotted string)
is imported by the files that hold that name as a string literal
(:mod:`rein.testgate.by_name`). A file's scan is kept per root while its
size and modification time stay.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable
from pathlib import Path

from rein.python_imports import import_names, module_name
from rein.testgate.by_name import entry_points, named_strings, string_imports

__all__ = ["ImportGraph", "has_doctest", "is_init", "scan", "scan_ahead", "under"]

_Imports = set[tuple[str, str | None, str | None]]
#: What a file's scan finds in its text (:data:`_Scan` without the stamp).
_Found = tuple[
    frozenset[tuple[str, str | None, str | None]],
    frozenset[str] | None,
    frozenset[str],
    tuple[frozenset[str], frozenset[str]],
    frozenset[str],
]
#: A file's scan: its modification time, size, imports, literal
#: ``__all__``, the names an ``__init__`` defines, the dotted names and
#: identifiers it holds as strings, and the modules its import imports
#: (:func:`_at_import`).
_Scan = tuple[
    int,
    int,
    frozenset[tuple[str, str | None, str | None]],
    frozenset[str] | None,
    frozenset[str],
    tuple[frozenset[str], frozenset[str]],
    frozenset[str],
]
_ALL = re.compile(r"^__all__\s*(?::[^=\n]*)?=\s*[\[(]([^\])]*)[\])]", re.MULTILINE)
_ALL_GROWN = re.compile(
    r"^\s*__all__\s*(?:\+=|\.(?:extend|append|insert|__iadd__)\b)", re.MULTILINE
)
_DEFINES = re.compile(
    r"^(?:async[ \t]+def|def|class)[ \t]+(\w+)|^(\w+)[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE
)
#: An import statement's line (its names are no use of a module).
_IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t].*$", re.MULTILINE)
#: (root, file, text) -> what a scan of that text found: a file changed
#: and changed back (a repair, an edit undone), or one modified in the
#: last two seconds (scanned at every call), is not scanned again.
_BY_TEXT: OrderedDict[tuple[str, str, str], _Found] = OrderedDict()
_MAX_TEXTS = 64
_TEXTS_LOCK = threading.Lock()
#: Root -> file -> its last scan, for the few roots seen last.
_SCANS: dict[str, dict[str, _Scan]] = {}
_MAX_ROOTS = 8
#: A scan of a file modified less than this ago is not kept.
_RACY_NS = 2_000_000_000


def scan(root: Path, files: list[str], tests: set[str]) -> ImportGraph:
    """The import graph of ``files`` under ``root`` (``tests``: the test
    files, which a reached conftest.py reaches). A file is scanned anew only
    when its size or modification time changed since the last call for
    this root; one modified in the last two seconds is scanned every time
    (a quick second edit may keep both)."""
    graph = ImportGraph(files, tests)
    points = entry_points(root)
    key = str(root.resolve())
    before = _SCANS.pop(key, {})
    after: dict[str, _Scan] = {}
    recent = time.time_ns() - _RACY_NS
    for path in files:
        try:
            stat = os.stat(root / path)
            entry = before.get(path)
            if entry is None or entry[:2] != (stat.st_mtime_ns, stat.st_size):
                text = (root / path).read_text(encoding="utf-8", errors="replace")
                entry = (stat.st_mtime_ns, stat.st_size, *_scanned(key, path, text))
        except OSError:
            continue
        if entry[0] < recent:
            after[path] = entry
        by_name = string_imports(*entry[5], points)
        graph.add(path, entry[2] | by_name, entry[3], entry[4])
        # A module loaded by name (importlib.import_module("pkg.mod")) may be
        # loaded at import.
        graph.add_at_import(path, entry[6] | {module for module, _, _ in by_name})
    _SCANS[key] = after
    while len(_SCANS) > _MAX_ROOTS:
        _SCANS.pop(next(iter(_SCANS)))
    return graph


#: A reached file's state: every name it defines may have changed (None),
#: or only these names (a package ``__init__`` re-exporting them).
_State = frozenset[str] | None


def scan_ahead(root: Path, paths: Iterable[str]) -> None:
    """Scan ``paths`` (changed files) as they are now, for the next
    :func:`scan` (one modified in the last two seconds is scanned at each
    call: by its text, this one is kept)."""
    key = str(root.resolve())
    for path in paths:
        try:
            text = (root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        _scanned(key, path, text)


def _scanned(root: str, path: str, text: str) -> _Found:
    """What a scan of ``path``'s ``text`` finds (kept by the text itself)."""
    key = (root, path, text)
    with _TEXTS_LOCK:  # selections of two sessions may scan at once
        found = _BY_TEXT.get(key)
        if found is not None:
            _BY_TEXT.move_to_end(key)
            return found
    imports = _attributes_taken(path, text, import_names(path, text))
    own = _defines(text) if is_init(path) else frozenset()
    found = (frozenset(imports), _exports(text), own, named_strings(text), _at_import(path, text))
    with _TEXTS_LOCK:
        _BY_TEXT[key] = found
        while len(_BY_TEXT) > _MAX_TEXTS:
            _BY_TEXT.popitem(last=False)
    return found


class ImportGraph:
    """Reverse imports, name by name through package ``__init__`` files:
    ``from pkg import run`` depends on the module ``pkg/__init__.py`` takes
    ``run`` from, not on everything the package re-exports."""

    def __init__(self, files: list[str], tests: set[str]) -> None:
        self._files = files
        self._tests = tests
        self._inits = {f for f in files if is_init(f)}
        self._packages = {f.rpartition("/")[0] for f in self._inits}
        #: module -> the files that import all of it (``import m``)
        self._whole: dict[str, set[str]] = {}
        #: module -> the files that take its names with ``from m import *``
        self._star: dict[str, set[str]] = {}
        #: file -> its literal ``__all__`` (what ``*`` takes from it)
        self._exports: dict[str, frozenset[str]] = {}
        #: module -> (file, name, bound) for ``from m import name as bound``
        self._named: dict[str, dict[str, set[tuple[str, str]]]] = {}
        self._names: dict[str, set[str]] = {}
        #: package ``__init__`` -> the names it defines itself (which may
        #: use any name it imports)
        self._defines: dict[str, frozenset[str]] = {}
        #: module -> the files whose own import imports it (:func:`_at_import`)
        self._at_import: dict[str, set[str]] = {}

    def add(
        self,
        path: str,
        imports: Iterable[tuple[str, str | None, str | None]],
        exports: frozenset[str] | None,
        defines: frozenset[str],
    ) -> None:
        if exports is not None:
            self._exports[path] = exports
        if defines:
            self._defines[path] = defines
        for module, name, bound in imports:
            if name is None and bound is None:
                self._star.setdefault(module, set()).add(path)
            elif name is None or bound is None:
                self._whole.setdefault(module, set()).add(path)
            else:
                by_name = self._named.setdefault(module, {})
                by_name.setdefault(name, set()).add((path, bound))

    def add_at_import(self, path: str, modules: Iterable[str]) -> None:
        """The modules ``path``'s own import imports (:func:`_at_import`)."""
        for module in modules:
            self._at_import.setdefault(module, set()).add(path)

    def import_reach(self, seeds: list[str]) -> dict[str, tuple[str, ...]]:
        """Every file whose import runs one of ``seeds`` -> its shortest
        chain from a seed, whatever names it takes: each file that imports
        a reached module at import time (not in a function, nor under
        ``if TYPE_CHECKING``), every file of a package whose reached
        ``__init__`` runs when any of them is imported (``from pkg.util
        import slug`` runs the package's ``__init__``, and the ``from .core
        import *`` there), and the test files below a reached
        ``conftest.py``. A change that breaks an import (a circular one, a
        module-level error) fails all of them, though none takes a name it
        changed: :meth:`reach` follows the names."""
        parent: dict[str, str | None] = dict.fromkeys(seeds)
        queue = deque(seeds)
        while queue:
            node = queue.popleft()
            found: set[str] = set()
            for module in self.names(node):
                found |= self._at_import.get(module, set())
            folder = node.rpartition("/")[0]
            if node in self._inits:
                found.update(f for f in self._files if not folder or under(f, folder))
            if node.rpartition("/")[2] == "conftest.py":
                found.update(t for t in self._tests if not folder or under(t, folder))
            for file in sorted(found):
                if file not in parent:
                    parent[file] = node
                    queue.append(file)
        return _chains(parent)

    def names(self, path: str) -> set[str]:
        """The module names ``path`` is imported by: its name from the root
        (or ``src/``), and its name from its outermost package folder."""
        if path not in self._names:
            self._names[path] = self._module_names(path)
        return self._names[path]

    def _module_names(self, path: str) -> set[str]:
        names = {n for n in (module_name(path),) if n}
        parts = path.rsplit(".", 1)[0].split("/")
        start = len(parts) - 1
        while start > 0 and "/".join(parts[:start]) in self._packages:
            start -= 1
        rooted = parts[start:]
        if rooted[-1] == "__init__":
            rooted = rooted[:-1]
        if rooted and all(p.isidentifier() for p in rooted):
            names.add(".".join(rooted))
        return names

    def _in_init(self, file: str, names: _State) -> _State:
        """What changed in ``file`` when ``names`` it imports did: for a
        package ``__init__``, those names and every name it defines itself
        (all of it when it defines ``__getattr__``); any other file, all."""
        if names is None or file not in self._inits:
            return None
        own = self._defines.get(file, frozenset())
        return None if "__getattr__" in own else names | own

    def reach(
        self, seeds: list[str], edges: dict[str, set[str]] | None = None
    ) -> dict[str, tuple[str, ...]]:
        """Every file the seeds reach -> its shortest chain from a seed. A
        seed that is a package ``__init__`` reaches the files of its package
        first (importing any of them runs it). ``edges``, when given, gets
        each reached file's importers the change goes on to."""
        parent: dict[str, str | None] = {}
        state: dict[str, _State] = {}
        queue: deque[str] = deque()
        queued: set[str] = set()

        def visit(file: str, new: _State, via: str | None) -> None:
            if file not in parent:
                parent[file], state[file] = via, new
            else:
                old = state[file]
                if old is None or (new is not None and new <= old):
                    return
                state[file] = None if new is None else old | new
            if file not in queued:
                queued.add(file)
                queue.append(file)

        for seed in seeds:
            visit(seed, None, None)
        for seed in seeds:
            if is_init(seed):
                folder = seed.rpartition("/")[0]
                for file in self._files:
                    if not folder or under(file, folder):
                        visit(file, None, seed)
        while queue:
            node = queue.popleft()
            queued.discard(node)
            changed = state[node]
            # (file, what changed in it were it a package ``__init__``)
            found: list[tuple[str, _State]] = []
            star = changed if changed is not None else self._exports.get(node)
            for module in self.names(node):
                found.extend((file, None) for file in self._whole.get(module, ()))
                found.extend((file, star) for file in self._star.get(module, ()))
                by_name = self._named.get(module, {})
                for name in by_name if changed is None else changed & by_name.keys():
                    found.extend((file, frozenset({bound})) for file, bound in by_name[name])
                package, _, last = module.rpartition(".")
                if package:  # ``from package import module``
                    by_name = self._named.get(package, {})
                    found.extend((file, frozenset({b})) for file, b in by_name.get(last, ()))
            if node.rpartition("/")[2] == "conftest.py":
                folder = node.rpartition("/")[0]
                found.extend((t, None) for t in self._tests if not folder or under(t, folder))
            for file, names in sorted(found, key=lambda item: item[0]):
                if edges is not None and file != node:
                    edges.setdefault(node, set()).add(file)
                if file != node and state.get(file, frozenset()) is not None:
                    visit(file, self._in_init(file, names), node)
        return _chains(parent)


def _chains(parent: dict[str, str | None]) -> dict[str, tuple[str, ...]]:
    """Each reached file -> its chain from a seed, by the file it was
    reached from (``parent``; a seed's is None)."""
    chains: dict[str, tuple[str, ...]] = {}
    for node in parent:
        chain = [node]
        while (up := parent[chain[-1]]) is not None:
            chain.append(up)
        chains[node] = tuple(reversed(chain))
    return chains


def _attributes_taken(path: str, text: str, imports: _Imports) -> _Imports:
    """``import pkg`` (or ``import pkg as p``) in a file that uses it only
    as ``pkg.name``: taken as ``from pkg import name`` for each name used,
    so a change re-exported by the package reaches only the files that use
    it. A bare use (``f(pkg)``, ``getattr(pkg, ...)``, a string), no use at
    all, or a package ``__init__``: the whole module, as before."""
    if is_init(path):
        return imports
    body: str | None = None
    out: set[tuple[str, str | None, str | None]] = set()
    for module, name, bound in imports:
        if name is not None or bound is None or module.split(".")[0] in sys.stdlib_module_names:
            out.add((module, name, bound))
            continue
        if body is None:
            body = _IMPORT_LINE.sub("", text)
        used: set[str] = set()
        bare = False
        for match in re.finditer(rf"{re.escape(bound)}\b(?:\.(\w+))?", body):
            before = body[match.start() - 1 : match.start()]
            if before == "." or before.isidentifier() or before.isdigit():
                continue  # ``x.pkg`` or ``mypkg``: not this name
            if match.group(1) is None:
                bare = True
                break
            used.add(match.group(1))
        if bare or not used:
            out.add((module, None, bound))
        else:
            out.update((module, attribute, attribute) for attribute in used)
    return out


#: A block whose body does not run when its module is imported: a
#: function's, or ``if TYPE_CHECKING:``'s.
_NOT_AT_IMPORT = re.compile(
    r"^[ \t]*(?:async[ \t]+def|def)[ \t]|^[ \t]*if[ \t]+(?:typing\.)?TYPE_CHECKING[ \t]*:"
)


def _at_import(path: str, text: str) -> frozenset[str]:
    """The modules ``text``'s import imports: its imports outside function
    bodies and ``if TYPE_CHECKING:`` blocks (``from pkg import mod``
    counts ``pkg.mod`` too: it may be a module). sympy's
    ``pygletplot/__init__.py`` imports its plot module inside ``def
    PygletPlot``: counted, a change of that module made all 604 test files
    collected (review31). A line scan: a line less indented than a
    skipped block's body ends it, so text a string holds at the left
    margin counts as at import (more files collected, never fewer)."""
    kept: list[str] = []
    skipping: int | None = None  # the skipped block's own indentation
    for line in text.splitlines():
        body = line.lstrip()
        indent = len(line) - len(body)
        if skipping is not None:
            if not body or body.startswith("#") or indent > skipping:
                kept.append("")
                continue
            skipping = None
        if _NOT_AT_IMPORT.match(line):
            skipping = indent
            kept.append("")
            continue
        kept.append(line)
    modules: set[str] = set()
    for module, name, _bound in import_names(path, "\n".join(kept)):
        modules.add(module)
        if name is not None:
            modules.add(f"{module}.{name}")
    return frozenset(modules)


def _defines(text: str) -> frozenset[str]:
    """The names a module defines at its top level (``def``, ``class``, an
    assignment)."""
    return frozenset(a or b for a, b in _DEFINES.findall(text))


def _exports(text: str) -> frozenset[str] | None:
    """A module's ``__all__`` when it is one literal list or tuple of
    strings, set once; None otherwise (``*`` then takes anything)."""
    if "__all__" not in text:
        return None
    found = list(_ALL.finditer(text))
    if len(found) != 1 or _ALL_GROWN.search(text):
        return None
    rest = text[found[0].end() :].split("\n", 1)[0].split("#", 1)[0]
    if rest.strip():
        return None  # ``__all__ = [...] + other``
    return frozenset(re.findall(r"""['"](\w+)['"]""", found[0].group(1)))


#: Path -> its modification time, size, and whether it holds a doctest.
_DOCTESTS: dict[str, tuple[int, int, bool]] = {}
_MAX_DOCTESTS = 20_000


def has_doctest(path: Path) -> bool:
    """``path`` holds a doctest (a ``>>>`` prompt); kept while its size
    and modification time stay (not for a file modified in the last two
    seconds)."""
    try:
        stat = os.stat(path)
        key = str(path)
        known = _DOCTESTS.get(key)
        if known is not None and known[:2] == (stat.st_mtime_ns, stat.st_size):
            return known[2]
        found = ">>>" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if stat.st_mtime_ns < time.time_ns() - _RACY_NS:
        if len(_DOCTESTS) >= _MAX_DOCTESTS:
            _DOCTESTS.clear()
        _DOCTESTS[key] = (stat.st_mtime_ns, stat.st_size, found)
    return found


def is_init(path: str) -> bool:
    return path.rpartition("/")[2] in ("__init__.py", "__init__.pyi")


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
