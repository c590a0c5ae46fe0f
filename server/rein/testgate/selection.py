"""Which tests run: the test files a run's changes can reach through the
project's imports, or the whole suite when that cannot be told.

The test files are the ones pytest collects by default: ``test_*.py`` and
``*_test.py`` (or the configured ``python_files``) under the configured
``testpaths`` (or the whole workspace), read from ``pytest.ini``,
``pyproject.toml`` (``[tool.pytest.ini_options]``), ``tox.ini`` (``[pytest]``)
or ``setup.cfg`` (``[tool:pytest]``), in pytest's order. Virtual
environments, hidden, build and vendored folders are skipped.

A test file is selected when it imports a changed module directly or through
other modules of the project (the line scan of :mod:`rein.disk.importers`),
or when it changed itself (a deleted one is not). A changed package
``__init__`` reaches every file that imports anything inside that package
(Python runs it first). A ``conftest.py`` reached through the imports
selects every test file below it.

The whole suite runs when the selection cannot be told: a changed
``conftest.py``; a changed file that is not Python and not documentation
(data, fixtures, ``pyproject.toml``: tests may read them); a file under a
tests folder that is no test file and that no test imports (tests may read
it as data). Documentation (``.md``, ``.rst``, ``.txt`` under ``docs/`` or
``doc/``) selects nothing, unless pytest collects it (a test path, a
``conftest.py`` there, ``--doctest-glob``).
"""

from __future__ import annotations

import configparser
import fnmatch
import os
import re
import shlex
import sys
import time
import tomllib
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rein.disk.importers import import_names, module_name

__all__ = ["TestSelection", "select_tests"]

#: Folders never walked (besides hidden ones and virtual environments).
SKIP_DIRS = frozenset(
    {"node_modules", "build", "dist", "site-packages", "venv", "__pycache__", "_darcs", "CVS"}
)
#: pytest's ``python_files`` when the project says nothing.
DEFAULT_PATTERNS = ("test_*.py", "*_test.py")
#: Folder names whose non-test Python files are test helpers.
TEST_DIRS = frozenset({"tests", "test", "testing"})
DOC_DIRS = frozenset({"docs", "doc"})
DOC_SUFFIXES = (".md", ".rst", ".txt")
PY_SUFFIXES = (".py", ".pyi")

_Imports = set[tuple[str, str | None, str | None]]
#: A file's scan: its modification time, size and imports.
_Scan = tuple[int, int, frozenset[tuple[str, str | None, str | None]], frozenset[str] | None]
_ALL = re.compile(r"^__all__\s*(?::[^=\n]*)?=\s*[\[(]([^\])]*)[\])]", re.MULTILINE)
_ALL_GROWN = re.compile(
    r"^\s*__all__\s*(?:\+=|\.(?:extend|append|insert|__iadd__)\b)", re.MULTILINE
)
#: An import statement's line (its names are no use of a module).
_IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t].*$", re.MULTILINE)
#: Root -> file -> its last scan, for the few roots seen last.
_SCANS: dict[str, dict[str, _Scan]] = {}
_MAX_ROOTS = 8
#: A scan of a file modified less than this ago is not kept.
_RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class TestSelection:
    """The test files to run for a change, and why. ``files`` is the
    selection, best first (changed tests, direct importers, then by chain
    length and path); when ``run_all`` it holds every test file found."""

    __test__ = False  # a result, not a pytest test class

    files: tuple[str, ...]
    run_all: bool
    reason: str
    #: Test file -> the import chain from a changed file to it.
    chains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    total_files: int = 0


@dataclass(frozen=True)
class _Config:
    testpaths: tuple[str, ...] = ()
    patterns: tuple[str, ...] = DEFAULT_PATTERNS
    norecurse: tuple[str, ...] = ()
    doctest_glob: bool = False


def select_tests(
    root: Path, changed: Iterable[str], *, max_tests: int | None = None
) -> TestSelection:
    """The test files under ``root`` that the ``changed`` files (paths
    relative to ``root``, or absolute inside it) can reach; at most
    ``max_tests`` of them, the rest named in the reason."""
    root = Path(root)
    config = _read_config(root)
    project = _Project(root, config)
    tests = project.tests
    total = len(tests)

    def everything(reason: str) -> TestSelection:
        return TestSelection(tuple(sorted(tests)), True, reason, {}, total)

    seeds: list[str] = []
    docs: list[str] = []
    for raw in changed:
        path = _relative(root, raw)
        if path is None:
            continue
        name = path.rpartition("/")[2]
        if name == "conftest.py":
            return everything(f"{path} changed: a conftest.py can change any test below it")
        if path.endswith(PY_SUFFIXES):
            if _skipped(path, config):
                return everything(f"{path} changed, outside the project's scanned sources")
            seeds.append(path)
        elif project.is_doc(path):
            docs.append(path)
        else:
            return everything(f"{path} changed: tests may read a file that is not Python")
    seeds = sorted(set(seeds))
    if not seeds:
        if docs:
            return TestSelection((), False, f"only documentation changed ({_few(docs)})", {}, total)
        return TestSelection((), False, "no file changed", {}, total)

    graph = project.graph()
    for seed in seeds:
        if _in_tests_folder(seed) and not project.is_test(seed):
            if not tests.intersection(graph.reach([seed])):
                reason = f"{seed} is under a tests folder and no test imports it: tests may read it"
                return everything(reason)
    chains = {t: c for t, c in graph.reach(seeds).items() if t in tests}
    if not chains:
        reason = f"no test file imports {_few(seeds)}, directly or through other modules"
        return TestSelection((), False, reason, {}, total)
    return _nearest(chains, total, max_tests)


def _nearest(
    chains: dict[str, tuple[str, ...]], total: int, max_tests: int | None
) -> TestSelection:
    """The reached test files, changed ones first, then direct importers,
    then by chain length and path; at most ``max_tests``."""
    ordered = sorted(chains, key=lambda t: (len(chains[t]), t))
    own = sum(len(chains[t]) == 1 for t in ordered)
    direct = sum(len(chains[t]) == 2 for t in ordered)
    through = len(ordered) - own - direct
    parts = [
        *([f"{own} changed"] if own else []),
        *([f"{direct} import a changed file"] if direct else []),
        *([f"{through} through other modules"] if through else []),
    ]
    reason = f"{len(ordered)} of {total} test files reach the change ({', '.join(parts)})"
    if max_tests is not None and len(ordered) > max_tests:
        kept = max(max_tests, 0)
        reason += f"; {len(ordered) - kept} left out (at most {max_tests})"
        ordered = ordered[:kept]
    return TestSelection(tuple(ordered), False, reason, {t: chains[t] for t in ordered}, total)


class _Project:
    """The workspace's Python files, its test files and its import graph."""

    def __init__(self, root: Path, config: _Config) -> None:
        self.root = root
        self.config = config
        self.files = _walk(root, config)
        self.inits = {f for f in self.files if _is_init(f)}
        self.packages = {f.rpartition("/")[0] for f in self.inits}
        testpaths = _existing_testpaths(root, config.testpaths)
        self.testpaths = testpaths
        self.tests = {f for f in self.files if self.is_test(f)}

    def is_test(self, path: str) -> bool:
        """Whether pytest collects ``path`` as a test file (were it there)."""
        return (
            path.endswith(".py")
            and _matches(path.rpartition("/")[2], self.config.patterns)
            and (not self.testpaths or any(_under(path, tp) for tp in self.testpaths))
        )

    def is_doc(self, path: str) -> bool:
        """Documentation pytest does not collect."""
        parts = path.split("/")
        if not path.endswith(DOC_SUFFIXES) or parts[0] not in DOC_DIRS or self.config.doctest_glob:
            return False
        if fnmatch.fnmatch(parts[-1], "test*.txt"):  # pytest's default doctest glob
            return False
        if any(_under(path, tp) for tp in self.testpaths):
            return False
        folders = ("/".join(parts[:i]) for i in range(1, len(parts)))
        return not any((self.root / folder / "conftest.py").exists() for folder in folders)

    def graph(self) -> _Graph:
        """The import graph, each file scanned anew only when it changed
        since the last call for this root (its size and modification time;
        a file modified within the last seconds is scanned every time, as
        a quick second edit may keep both)."""
        graph = _Graph(self)
        key = str(self.root.resolve())
        before = _SCANS.pop(key, {})
        after: dict[str, _Scan] = {}
        recent = time.time_ns() - _RACY_NS
        for path in self.files:
            try:
                stat = os.stat(self.root / path)
                scan = before.get(path)
                if scan is None or scan[:2] != (stat.st_mtime_ns, stat.st_size):
                    text = (self.root / path).read_text(encoding="utf-8", errors="replace")
                    imports = _attributes_taken(path, text, import_names(path, text))
                    scan = (stat.st_mtime_ns, stat.st_size, frozenset(imports), _exports(text))
            except OSError:
                continue
            if scan[0] < recent:
                after[path] = scan
            graph.add(path, scan[2], scan[3])
        _SCANS[key] = after
        while len(_SCANS) > _MAX_ROOTS:
            _SCANS.pop(next(iter(_SCANS)))
        return graph


#: A reached file's state: every name it defines may have changed (None),
#: or only these names (a package ``__init__`` re-exporting them).
_State = frozenset[str] | None


class _Graph:
    """Reverse imports, name by name through package ``__init__`` files:
    ``from pkg import run`` depends on the module ``pkg/__init__.py`` takes
    ``run`` from, not on everything the package re-exports."""

    def __init__(self, project: _Project) -> None:
        self._project = project
        #: module -> the files that import all of it (``import m``)
        self._whole: dict[str, set[str]] = {}
        #: module -> the files that take its names with ``from m import *``
        self._star: dict[str, set[str]] = {}
        #: file -> its literal ``__all__`` (what ``*`` takes from it)
        self._exports: dict[str, frozenset[str]] = {}
        #: module -> (file, name, bound) for ``from m import name as bound``
        self._named: dict[str, dict[str, set[tuple[str, str]]]] = {}
        self._names: dict[str, set[str]] = {}

    def add(
        self,
        path: str,
        imports: Iterable[tuple[str, str | None, str | None]],
        exports: frozenset[str] | None,
    ) -> None:
        if exports is not None:
            self._exports[path] = exports
        for module, name, bound in imports:
            if name is None and bound is None:
                self._star.setdefault(module, set()).add(path)
            elif name is None or bound is None:
                self._whole.setdefault(module, set()).add(path)
            else:
                by_name = self._named.setdefault(module, {})
                by_name.setdefault(name, set()).add((path, bound))

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
        while start > 0 and "/".join(parts[:start]) in self._project.packages:
            start -= 1
        rooted = parts[start:]
        if rooted[-1] == "__init__":
            rooted = rooted[:-1]
        if rooted and all(p.isidentifier() for p in rooted):
            names.add(".".join(rooted))
        return names

    def reach(self, seeds: list[str]) -> dict[str, tuple[str, ...]]:
        """Every file the seeds reach -> its shortest chain from a seed. A
        seed that is a package ``__init__`` reaches the files of its package
        first (importing any of them runs it)."""
        project = self._project
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
            if _is_init(seed):
                folder = seed.rpartition("/")[0]
                for file in project.files:
                    if not folder or _under(file, folder):
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
                found.extend((t, None) for t in project.tests if not folder or _under(t, folder))
            for file, names in sorted(found, key=lambda item: item[0]):
                if file != node and state.get(file, frozenset()) is not None:
                    visit(file, names if file in project.inits else None, node)
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
    if _is_init(path):
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


def _read_config(root: Path) -> _Config:
    """pytest's settings from the first file that has them, in pytest's order."""
    values: dict[str, object] | None = None
    if (root / "pytest.ini").is_file():
        values = _ini(root / "pytest.ini", "pytest") or {}
    if values is None and (root / "pyproject.toml").is_file():
        try:
            data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            data = {}
        section = data.get("tool", {}).get("pytest", {}).get("ini_options")
        values = section if isinstance(section, dict) else None
    if values is None:
        values = _ini(root / "tox.ini", "pytest")
    if values is None:
        values = _ini(root / "setup.cfg", "tool:pytest")
    values = values or {}
    patterns = _words(values.get("python_files"))
    return _Config(
        testpaths=tuple(p.strip("/").removeprefix("./") for p in _words(values.get("testpaths"))),
        patterns=patterns or DEFAULT_PATTERNS,
        norecurse=_words(values.get("norecursedirs")),
        doctest_glob="doctest-glob" in " ".join(_words(values.get("addopts"))),
    )


def _ini(path: Path, section: str) -> dict[str, object] | None:
    if not path.is_file():
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    return dict(parser[section]) if parser.has_section(section) else None


def _words(value: object) -> tuple[str, ...]:
    """An ini value (space or line separated) or a TOML list or string."""
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError:
            return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return ()


def _walk(root: Path, config: _Config) -> list[str]:
    """The Python files under ``root``, relative and posix, skipped folders left out."""
    out: list[str] = []
    for folder, dirs, names in os.walk(root):
        if "pyvenv.cfg" in names:  # a virtual environment
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if not _skipped_dir(d, config)]
        rel = Path(folder).relative_to(root).as_posix()
        prefix = "" if rel == "." else rel + "/"
        out.extend(prefix + n for n in names if n.endswith(PY_SUFFIXES))
    return sorted(out)


def _skipped_dir(name: str, config: _Config) -> bool:
    return (
        name.startswith(".")
        or name in SKIP_DIRS
        or name.endswith(".egg")
        or any(fnmatch.fnmatch(name, p) for p in config.norecurse)
    )


def _skipped(path: str, config: _Config) -> bool:
    return any(_skipped_dir(d, config) for d in path.split("/")[:-1])


def _existing_testpaths(root: Path, testpaths: tuple[str, ...]) -> tuple[str, ...]:
    """The test paths that exist (globs expanded); none when none does, as
    pytest then collects from the root."""
    found: list[str] = []
    for tp in testpaths:
        if tp in ("", "."):
            return ()
        if any(c in tp for c in "*?["):
            found.extend(p.relative_to(root).as_posix() for p in sorted(root.glob(tp)))
        elif (root / tp).exists():
            found.append(tp)
    return tuple(found)


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in patterns)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _is_init(path: str) -> bool:
    return path.rpartition("/")[2] in ("__init__.py", "__init__.pyi")


def _in_tests_folder(path: str) -> bool:
    """A Python file under a tests folder."""
    return any(d in TEST_DIRS for d in path.split("/")[:-1])


def _relative(root: Path, raw: str) -> str | None:
    """A changed path relative to the root, posix; None outside it."""
    path = Path(raw.replace("\\", "/"))
    if path.is_absolute():
        for base in (root.absolute(), root.resolve()):
            if path.is_relative_to(base):
                path = path.relative_to(base)
                break
        else:
            return None
    text = path.as_posix().removeprefix("./")
    return None if text in ("", ".") or text.startswith("../") else text


def _few(paths: list[str]) -> str:
    shown = ", ".join(paths[:3])
    return shown if len(paths) <= 3 else f"{shown} and {len(paths) - 3} more"
