"""Which tests run: the test files a run's changes can reach through the
project's imports, or the whole suite when that cannot be told.

The test files are the ones pytest collects by default: ``test_*.py`` and
``*_test.py`` (or the configured ``python_files``) under the configured
``testpaths`` (or the whole workspace), and with ``--doctest-modules`` in
the configured ``addopts`` or in ``PYTEST_ADDOPTS`` (pytest reads both: the
gate's pytest inherits the server's environment, less its secrets), unless
``-p no:doctest`` turns the plugin off there, every other module there that
holds a doctest (``>>>``; not ``setup.py`` nor ``__main__.py``), read from
``pytest.ini``, ``pyproject.toml`` (``[tool.pytest.ini_options]``),
``tox.ini`` (``[pytest]``) or ``setup.cfg`` (``[tool:pytest]``), in pytest's
order. Virtual environments, hidden, build and vendored folders are skipped.

A test file is selected when it imports a changed module directly or through
other modules of the project (:mod:`rein.testgate.import_graph`, over the
line scan of :mod:`rein.python_imports`), or when it changed itself (a
deleted one is not). A changed package ``__init__`` reaches every file that
imports anything inside that package (Python runs it first). A
``conftest.py`` reached through the imports selects every test file below
it.

The whole suite runs when the selection cannot be told: a changed
``conftest.py``; a changed file that is not Python and not documentation
(data, fixtures, ``pyproject.toml``: tests may read them); a file under a
tests folder that is no test file and that no test imports (tests may read
it as data). Documentation (``.md``, ``.rst``, ``.txt`` under ``docs/`` or
``doc/``) selects nothing, unless pytest collects it (a test path, a
``conftest.py`` there, ``--doctest-glob``).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from rein.testgate.import_graph import has_doctest, is_init, scan, under
from rein.testgate.pytest_config import addopts, config_values, words
from rein.testgate.shadow import in_tool_cache

__all__ = [
    "TestSelection",
    "distributed",
    "find_test_files",
    "imported_by",
    "pytest_configured",
    "select_tests",
    "uses_cache",
]

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
    #: Reached test files left out by ``max_tests`` (the verdict is then
    #: never "passed").
    left_out: int = 0
    #: The other Python files the change reaches (the changed ones too):
    #: the code between the change and the tests; the selected doctest
    #: modules too.
    modules: tuple[str, ...] = ()
    #: The selected files that are modules whose doctests pytest collects
    #: (``--doctest-modules``): they run whole.
    doctests: tuple[str, ...] = ()
    #: Test files that reach no name the change reaches, but whose import
    #: runs a changed module all the same (through a package's
    #: ``__init__``: ``from pkg.util import slug`` runs ``pkg/__init__.py``
    #: and what it imports): an import the change breaks fails them. Not in
    #: ``files``; :mod:`rein.testgate.picking` collects them (their chains
    #: are in ``chains``).
    importing: tuple[str, ...] = ()
    #: The project's other Python modules (neither reached nor test files):
    #: they can still call what the change reaches by an attribute's name
    #: (a base class calling ``self.visit_node`` that a subclass in a
    #: changed module overrides), so the per-test selection reads them too.
    others: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Config:
    testpaths: tuple[str, ...] = ()
    patterns: tuple[str, ...] = DEFAULT_PATTERNS
    norecurse: tuple[str, ...] = ()
    doctest_glob: bool = False
    doctest_modules: bool = False
    distributed: bool = False
    cached: bool = False


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
        if in_tool_cache(path):
            continue  # a tool's cache: never in the shadow the tests run in
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

    graph = scan(root, project.files, project.tests)
    for seed in seeds:
        if _in_tests_folder(seed) and not project.is_test(seed):
            if not tests.intersection(graph.reach([seed])):
                reason = f"{seed} is under a tests folder and no test imports it: tests may read it"
                return everything(reason)
    edges: dict[str, set[str]] = {}
    reached = graph.reach(seeds, edges)
    chains = {t: c for t, c in reached.items() if t in tests}
    importing = {
        t: c for t, c in graph.import_reach(seeds).items() if t in tests and t not in chains
    }
    if not chains:
        reason = f"no test file imports {_few(seeds)}, directly or through other modules"
        if importing:
            reason += f"; {_importing(importing)}"
        return TestSelection(
            (), False, reason, importing, total, importing=tuple(sorted(importing))
        )
    # Between the change and a test: what a test file imports, directly or
    # not. A reached module no test imports (a script, a typing check)
    # runs in no test: one of the others (its module-level code no hook).
    between = _upstream(chains, edges, reached)
    modules = tuple(
        sorted(f for f in reached if (f in between and f not in tests) or f in project.doctests)
    )
    others = tuple(
        sorted(
            f
            for f in project.files
            if f.endswith(".py") and (f not in reached or f not in between) and f not in tests
        )
    )
    nearest = _nearest(chains, total, max_tests)
    doctests = tuple(f for f in nearest.files if f in project.doctests)
    return replace(
        nearest,
        reason=f"{nearest.reason}; {_importing(importing)}" if importing else nearest.reason,
        chains={**nearest.chains, **importing},
        importing=tuple(sorted(importing)),
        modules=modules,
        doctests=doctests,
        others=others,
    )


def _importing(importing: Mapping[str, tuple[str, ...]]) -> str:
    """What the reason says of the test files whose import runs the change
    though they take none of its names."""
    return (
        f"{len(importing)} more import it through a package's __init__ (collected: an import "
        "the change breaks fails them)"
    )


def _upstream(tests: Iterable[str], edges: dict[str, set[str]], reached: Iterable[str]) -> set[str]:
    """The files from which the change goes on to one of ``tests`` or to a
    reached package ``__init__``."""
    importers: dict[str, set[str]] = {}
    for node, files in edges.items():
        for file in files:
            importers.setdefault(file, set()).add(node)
    # A package's ``__init__`` runs when any module of the package is
    # imported, which the graph does not show (``from pkg.mod import x``
    # depends on ``pkg/mod.py`` alone): every reached one is between.
    found: set[str] = set()
    queue = [*tests, *(f for f in reached if is_init(f))]
    while queue:
        node = queue.pop()
        if node not in found:
            found.add(node)
            queue.extend(importers.get(node, ()))
    return found


def imported_by(root: Path, paths: Iterable[str], tests: Iterable[str]) -> list[str]:
    """Those Python files of ``paths`` that one of the test files ``tests``
    imports, directly or through other modules of the project (a test file
    among ``paths`` counts when it is one of ``tests``)."""
    wanted = set(tests)
    found = {_relative(root, raw) for raw in paths}
    python = sorted(p for p in found if p is not None and p.endswith(PY_SUFFIXES))
    if not python or not wanted:
        return []
    project = _Project(root, _read_config(root))
    graph = scan(root, project.files, project.tests)
    return [p for p in python if p in wanted or wanted.intersection(graph.reach([p]))]


def find_test_files(root: Path, limit: int | None = None) -> list[str]:
    """The files pytest collects as tests under ``root`` by the project's
    configuration (``testpaths``, ``python_files``, ``norecursedirs``); with
    a ``limit``, among at most that many files looked at."""
    project = _Project(root, _read_config(root), limit)
    return sorted(project.tests)


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
    left_out = 0
    if max_tests is not None and len(ordered) > max_tests:
        kept = max(max_tests, 0)
        left_out = len(ordered) - kept
        reason += f"; {left_out} left out (at most {max_tests})"
        ordered = ordered[:kept]
    chosen = {t: chains[t] for t in ordered}
    return TestSelection(tuple(ordered), False, reason, chosen, total, left_out)


class _Project:
    """The workspace's Python files and its test files."""

    def __init__(self, root: Path, config: _Config, limit: int | None = None) -> None:
        self.root = root
        self.config = config
        self.files = _walk(root, config, limit)
        self.testpaths = _existing_testpaths(root, config.testpaths)
        self.doctests = {f for f in self.files if self._doctest(f)}
        self.tests = {f for f in self.files if self.is_test(f)} | self.doctests

    def is_test(self, path: str) -> bool:
        """Whether pytest collects ``path`` as a test file (were it there;
        a doctest module: it is, with a doctest)."""
        return path in self.doctests or (
            path.endswith(".py")
            and _matches(path.rpartition("/")[2], self.config.patterns)
            and self._in_testpaths(path)
        )

    def _in_testpaths(self, path: str) -> bool:
        return not self.testpaths or any(under(path, tp) for tp in self.testpaths)

    def _doctest(self, path: str) -> bool:
        """A module whose doctests pytest collects (``--doctest-modules``)."""
        name = path.rpartition("/")[2]
        if not self.config.doctest_modules or not path.endswith(".py"):
            return False
        if name in ("setup.py", "__main__.py", "conftest.py") or not self._in_testpaths(path):
            return False
        return not _matches(name, self.config.patterns) and has_doctest(self.root / path)

    def is_doc(self, path: str) -> bool:
        """Documentation pytest does not collect."""
        parts = path.split("/")
        if not path.endswith(DOC_SUFFIXES) or parts[0] not in DOC_DIRS or self.config.doctest_glob:
            return False
        if fnmatch.fnmatch(parts[-1], "test*.txt"):  # pytest's default doctest glob
            return False
        if any(under(path, tp) for tp in self.testpaths):
            return False
        folders = ("/".join(parts[:i]) for i in range(1, len(parts)))
        return not any((self.root / folder / "conftest.py").exists() for folder in folders)


def pytest_configured(root: Path) -> bool:
    """``root`` has pytest's configuration: ``pytest.toml``,
    ``pytest.ini`` (or their hidden names), ``[tool.pytest]`` or
    ``[tool.pytest.ini_options]`` in ``pyproject.toml``, ``[pytest]`` in
    ``tox.ini`` or ``[tool:pytest]`` in ``setup.cfg``."""
    return config_values(root) is not None


def _read_config(root: Path) -> _Config:
    """pytest's settings from the first file that has them, in pytest's order."""
    values = config_values(root) or {}
    patterns = words(values.get("python_files"))
    options = addopts(root)
    doctests = _doctest_plugin(options)
    return _Config(
        testpaths=tuple(p.strip("/").removeprefix("./") for p in words(values.get("testpaths"))),
        patterns=patterns or DEFAULT_PATTERNS,
        norecurse=words(values.get("norecursedirs")),
        doctest_glob=doctests and "doctest-glob" in " ".join(options),
        doctest_modules=doctests and "--doctest-modules" in options,
        distributed=any(_numprocesses(arg) for arg in options),
        cached=any(arg.split("=")[0] in _CACHE_OPTIONS for arg in options),
    )


#: pytest's options that need its cache plugin (``cacheprovider``, ``stepwise``).
_CACHE_OPTIONS = frozenset(
    {
        *("--lf", "--last-failed", "--ff", "--failed-first", "--nf", "--new-first"),
        *("--lfnf", "--last-failed-no-failures", "--cache-show", "--cache-clear"),
        *("--sw", "--stepwise", "--sw-skip", "--stepwise-skip", "--sw-reset", "--stepwise-reset"),
    }
)


def uses_cache(root: Path) -> bool:
    """The project's options (``addopts``, ``PYTEST_ADDOPTS``) use pytest's
    cache (``--ff``, ``--lf``, ``--sw``): without its plugin, pytest does
    not know them."""
    return _read_config(root).cached


def distributed(root: Path) -> bool:
    """The project's options (``addopts``, ``PYTEST_ADDOPTS``) give
    pytest-xdist's ``-n``: its every run would start workers."""
    return _read_config(root).distributed


def _numprocesses(arg: str) -> bool:
    return (arg.startswith("-n") and not arg.startswith("--")) or arg.startswith("--numprocesses")


def _doctest_plugin(args: Sequence[str]) -> bool:
    """pytest's doctest plugin is on: ``args`` block it nowhere (``-p
    no:doctest`` or ``-pno:doctest``, wherever it comes)."""
    for at, arg in enumerate(args):
        if arg == "-p" and at + 1 < len(args):
            arg = "-p" + args[at + 1]
        if arg == "-pno:doctest":
            return False
    return True


def _walk(root: Path, config: _Config, limit: int | None = None) -> list[str]:
    """The Python files under ``root``, relative and posix, skipped folders
    left out; with a ``limit``, the walk stops after that many files."""
    out: list[str] = []
    seen = 0
    for folder, dirs, names in os.walk(root):
        if limit is not None and seen >= limit:
            break
        seen += len(names)
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
