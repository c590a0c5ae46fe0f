"""What each test ran: a pytest plugin of a few lines, and its record.

When the gate asks (``REIN_TESTS_COVERAGE``: the record's path), the
plugin ``rein_testgate_coverage`` (written beside the report plugin, on
``PYTHONPATH``; :mod:`rein.testgate.pytest_run`) sets a *call* tracer
(``sys.settrace`` and ``threading.settrace``, Python 3.11 has no
``sys.monitoring``) that notes each code object a frame starts, never a
line: a set insertion per call. What it notes goes to the test whose
setup, call or teardown runs (its function-scoped fixtures included), or
to the *shared* set: the collection (every module's import), a fixture of
a wider scope, what runs between tests, what a module's import runs (one
a test makes too: a registry filled then serves later tests as well). At
the session's end it writes,
for the workspace's own files only (under the run's folder, not an
environment's ``site-packages``), a module's own code left out (it runs at
import; the index compares what it runs, the skeleton, whole):

* ``tests``: node id -> the ``[file, first line]`` of each code object
  it ran; ``null`` for a test during which something else replaced the
  tracer (a test of a tracer, a debugger): not known;
* ``opaque``: node id -> why what the test ran is more than its record
  shows: it started a child process (``subprocess``, ``os.fork``,
  ``os.posix_spawn``, ``os.system``, multiprocessing: the child runs
  untraced) that may run the workspace's code or read its files
  (:mod:`rein.testgate.children`: any not on its allow-list; not a
  pager, ``cat``, ``sed`` on a temporary file), or a thread (traced, but it
  may outlive the test); a child
  started or source read outside the tests (at import, in a fixture of a
  wider scope) makes every test opaque;
* ``reads``: node id -> the workspace's ``.py`` files whose text the test
  read from the workspace's code (``linecache``, so ``inspect.getsource``
  and tracebacks; ``open``): it depends on their text, not only on the
  code it ran (parso's tests parse its own modules and ``.py`` data
  files). The
  hooks are set only while recording and cost nothing but on those
  calls. Not seen still: a test that reads line numbers
  (``frame.f_lineno``, a log record's), and a library that reads the
  source for the test (the first caller outside the standard library must
  be the workspace's);
* ``shared``: the same, for what ran outside the tests (the tracer is
  set before the first ``conftest.py`` is imported, so theirs too);
* ``imports``: test file -> the same, for what its own import ran when
  pytest collected it (its module-level code and what that calls; a
  module it imports is shared, as is a module imported any other way, and
  one collected for its doctests alone: the project's own module):
  its tests' own, unless another module imports it
  (:mod:`rein.testgate.coverage_index` tells);
* ``collected``: test file -> the node ids pytest collected in it (before
  any deselection: the tests a later verdict must know of); a file
  collected without error and with no test has none (Markdown's
  ``markdown/test_tools.py``, a helper module: unknown, it sent every
  verdict that selected it to the names and a recording run);
* ``files``: the workspace's modules imported by the end.

A run that records only some tests (``REIN_TESTS_UNTRACED``: a file of
the node ids whose record is still good, :mod:`rein.testgate.picking`)
runs the others with no tracer: they are in no ``tests`` entry, nor
``opaque`` or ``reads`` (their earlier records say). ``collected`` lists
every test of the files collected whole (``REIN_TESTS_COLLECT_ALL``: "1",
all; else a file naming them: those no valid record lists the tests of),
and no other file (only its named tests were made into items). What is shared is still seen: the collection is
traced, a fixture of a wider scope one sets up or tears down is traced
(its finalizers around the fixture's own), and a module
one of them imports is imported traced (a finder first on
``sys.meta_path`` turns the tracer on until that import returns). Only
the test's own thread goes untraced: a thread it starts (a pool made on
first use) is traced, for a later test may run its code there.

A pytest-xdist worker records nothing (the gate records only runs without
it). :mod:`rein.testgate.coverage_index` turns the record into what a
later verdict selects by.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "COVERAGE_ENV",
    "COVERAGE_PLUGIN",
    "PARTIAL",
    "UNTRACED_ENV",
    "RawCoverage",
    "Where",
    "read_coverage",
    "write_plugin",
]

COVERAGE_PLUGIN = "rein_testgate_coverage"
#: :mod:`rein.testgate.children`'s text, written beside the plugin.
CHILDREN_MODULE = "rein_testgate_children"
COVERAGE_ENV = "REIN_TESTS_COVERAGE"
#: A file of the node ids a recorded run runs untraced.
UNTRACED_ENV = "REIN_TESTS_UNTRACED"

_SOURCE = '''"""Written by Rein's tests gate: which code each test ran."""
import json
import os
import sys
import sysconfig
import threading

import pytest

_STDLIB = sysconfig.get_paths()["stdlib"].rstrip(os.sep) + os.sep

_OUT = os.environ.get("REIN_TESTS_COVERAGE")
_UNTRACED_FILE = os.environ.get("REIN_TESTS_UNTRACED")
#: "1": every test file collected whole; else a file naming those that are.
_WHOLE_FILE = os.environ.get("REIN_TESTS_COLLECT_ALL") or "1"
# Tests run untraced (their record is still good); [True] while one runs.
_UNTRACED = set()
_SKIPPING = [False]
_IGNORED = set()
_SHARED = set()
# A module imported outside the tests and any other import -> what it ran.
_BY_MODULE = {}
# Collected test files with a test function (not a module's doctests).
_TEST_MODULES = set()
_TESTS = {}
_COLLECTED = {}
_ON = []
_WHOLE = []
_OUTER = []
_add = _SHARED.add
# What a record cannot see: node id -> why; [why] outside the tests.
_OPAQUE = {}
_OPAQUE_SHARED = []
# Node id -> the workspace's .py files whose text it read.
_READS = {}
_NOW = [None]
_MINE = {}
# The workspace's code objects (True) and the others (False).
_CODE_MINE = {}
# (id of the set a code object went to, the code object) -> the lines it ran.
_LINES = {}
# A code object -> how many of its frames were traced by line.
_CALLS = {}
# In a line set: not all the lines it ran are known (a hot function or loop).
_PARTIAL = -1
_MAX_CALLS = 20000
_MAX_LINES = 100000
# (the set's id, a code object) -> its frames traced by line there.
_HERE = {}
_MAX_HERE = 200


def _trace(frame, event, arg):
    global _add
    code = frame.f_code
    _add(code)
    if code.co_name != "<module>":
        mine = _CODE_MINE.get(code)
        if mine is None:
            mine = _CODE_MINE[code] = _mine(code.co_filename)
        if mine is not True:
            return None  # not the workspace's, or hot
        calls = _CALLS[code] = _CALLS.get(code, 0) + 1
        if calls > _MAX_CALLS:
            # A hot function (a generator resumed a million times): traced
            # by line no more, and its lines known nowhere (the session's
            # end marks them so).
            _CODE_MINE[code] = "hot"
            return None
        # The lines this frame runs go where its code object went.
        key = (id(_add.__self__), code)
        lines = _LINES.get(key)
        if lines is None:
            lines = _LINES[key] = set()
            _HERE[key] = 0
        elif _PARTIAL in lines:
            return None
        _HERE[key] += 1
        if _HERE[key] > _MAX_HERE:
            # Called this often by one test (attrs's hypothesis tests build
            # classes by the thousand): its lines there, not all known.
            lines.add(_PARTIAL)
            return None
        note = lines.add
        # A generator resumed mid-line gets no line event for the rest of
        # that line (CPython 3.11): the line it starts on has run.
        note(frame.f_lineno)
        seen = [0]

        def _lines(frame, event, arg):
            if event == "line":
                note(frame.f_lineno)
                seen[0] += 1
                if seen[0] > _MAX_LINES:
                    # A hot loop: the rest of this frame untraced.
                    note(_PARTIAL)
                    frame.f_trace_lines = False
            return _lines

        return _lines
    # An import, even one a test makes: what it runs is shared; but a
    # module pytest itself imports outside the tests (a test file's
    # collection) is kept apart by its file, for the index to tell.
    outer = not _OUTER and _NOW[0] is None and not _SKIPPING[0] and _add == _SHARED.add
    _OUTER.append(_add)
    _add = _BY_MODULE.setdefault(code.co_filename, set()).add if outer else _SHARED.add
    return _imported


def _imported(frame, event, arg):
    global _add
    if event == "return" and _OUTER:
        _add = _OUTER.pop()
        if _SKIPPING[0] and not _OUTER:
            sys.settrace(None)  # the import an untraced test made is over
    return _imported


class _Imports:
    """First on ``sys.meta_path``: a module imported while an untraced test
    runs is imported traced (what its import runs is shared: a registry it
    fills serves the traced tests too). It finds nothing itself."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if _SKIPPING[0] and sys.gettrace() is None:
            sys.settrace(_trace)
        return None


def _start():
    sys.settrace(_trace)
    threading.settrace(_trace)


def _mine(name):
    """``name`` is the workspace's own (not an environment's)."""
    if name not in _MINE:
        root = _ON[0].rstrip(os.sep) + os.sep
        _MINE[name] = name.startswith(root) and "site-packages" not in name
    return _MINE[name]


def _opaque(why, shared=True):
    """What runs now escapes the record: the test running is opaque (or,
    outside the tests and when ``shared``, every test); not an untraced
    test (its earlier record says so)."""
    if _SKIPPING[0]:
        return
    if _NOW[0] is not None:
        _OPAQUE.setdefault(_NOW[0], why)
    elif shared and not _OPAQUE_SHARED:
        _OPAQUE_SHARED.append(why)


def _from_workspace(frame, first_only):
    """A workspace frame is on the stack (``first_only``: the first frame
    outside the standard library is one)."""
    while frame is not None:
        name = frame.f_code.co_filename
        if _mine(name):
            return True
        if first_only and not (name.startswith(_STDLIB) or name.startswith("<")):
            return False
        frame = frame.f_back
    return False


def _child(frame):
    if _from_workspace(frame, False):
        _opaque("it starts a child process")


def _read(path, why):
    try:
        name = os.path.abspath(os.fspath(path))
    except (TypeError, ValueError):
        return
    if isinstance(name, str) and name.endswith(".py") and _mine(name):
        if _from_workspace(sys._getframe(2), True):
            if _NOW[0] is None:
                _opaque(why)
            else:
                _READS.setdefault(_NOW[0], set()).add(name)


def _watch():
    """Hook where a test escapes the tracer, only while recording: a child
    process that may run the workspace's code or read its files (a fork
    of this one, any not on ``rein_testgate_children``'s allow-list; not
    a pager, ``sed`` on a temporary file), a thread a test starts
    (traced, but it may outlive the test), a read of the workspace's
    source text (``linecache``, so ``inspect.getsource`` and a formatted
    traceback; ``open`` of a ``.py`` file)."""
    import _thread
    import builtins
    import io
    import linecache

    import rein_testgate_children

    rein_testgate_children.install(_ON[0], _child)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=lambda: _child(sys._getframe(1)) if _ON else None)
    real_start, real_new = threading.Thread.start, _thread.start_new_thread

    def start(self):
        if _NOW[0] is not None and _from_workspace(sys._getframe(1), False):
            _opaque("it starts a thread", shared=False)
        return real_start(self)

    def start_new_thread(*args, **kwargs):
        if _NOW[0] is not None and _from_workspace(sys._getframe(1), False):
            _opaque("it starts a thread", shared=False)
        return real_new(*args, **kwargs)

    threading.Thread.start = start
    _thread.start_new_thread = start_new_thread
    real_lines, real_open = linecache.getlines, io.open

    def getlines(filename, module_globals=None):
        _read(filename, "it reads source text (linecache, inspect)")
        return real_lines(filename, module_globals)

    def opened(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)):
            _read(file, "it reads source text (open)")
        return real_open(file, *args, **kwargs)

    linecache.getlines = getlines
    builtins.open = io.open = opened


def _end():
    # pytest stopped before the session's end (a conftest.py that cannot
    # be imported): no tracer call while the interpreter tears down.
    sys.settrace(None)
    threading.settrace(None)


def _begin():
    if _ON:
        return
    import atexit

    atexit.register(_end)
    _ON.append(os.getcwd())
    if _UNTRACED_FILE:
        with open(_UNTRACED_FILE, encoding="utf-8") as names:
            _UNTRACED.update(line for line in names.read().splitlines() if line)
        sys.meta_path.insert(0, _Imports)
    _watch()
    _start()


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    # Before the first conftest.py is imported: what its import runs is
    # shared too (a value it makes may serve any test).
    if _OUT and not os.environ.get("PYTEST_XDIST_WORKER"):
        _begin()


def pytest_configure(config):
    if _OUT and not hasattr(config, "workerinput"):
        _begin()


def pytest_collectreport(report):
    # A test file collected without error, even one with no test (a
    # helper named test_*.py): its tests are known to be none.
    node = report.nodeid
    if _ON and report.passed and "::" not in node and node.endswith(".py") and _whole(node):
        _COLLECTED.setdefault(node, [])


def _whole(file):
    if not _WHOLE:
        if _WHOLE_FILE == "1":
            _WHOLE.append(True)
        else:
            with open(_WHOLE_FILE, encoding="utf-8") as names:
                _WHOLE.append({line for line in names.read().splitlines() if line})
    return _WHOLE[0] is True or file in _WHOLE[0]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    for item in items:
        file = item.nodeid.split("::")[0]
        if _whole(file):  # else only the named tests were made: not listed
            _COLLECTED.setdefault(file, []).append(item.nodeid)
        if isinstance(item, pytest.Function):
            _TEST_MODULES.add(file)  # a test module, not a module's doctests


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _add
    if not _ON:
        yield
        return
    if item.nodeid in _UNTRACED:
        # Its record is still good: it runs at full speed. Not
        # threading.settrace(None): a thread it starts (a pool made on
        # first use) may run a later traced test's code.
        sys.settrace(None)
        _add, _SKIPPING[0] = _IGNORED.add, True
        try:
            yield
        finally:
            _SKIPPING[0] = False
            _IGNORED.clear()
            _add = _SHARED.add
            _start()
        return
    mine = set()
    _add = mine.add
    _NOW[0] = item.nodeid
    _start()
    try:
        yield
    finally:
        _TESTS[item.nodeid] = mine if sys.gettrace() is _trace else None
        _add = _SHARED.add
        _NOW[0] = None
        _start()


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    global _add
    if not _ON or fixturedef.scope == "function":
        yield
        return
    saved, now, skipping = _add, _NOW[0], _SKIPPING[0]
    _add, _NOW[0], _SKIPPING[0] = _SHARED.add, None, False
    if skipping:  # set up in an untraced test: what it runs is shared all the same
        _start()
    if _UNTRACED:
        # Its teardown runs at some test's end, maybe an untraced one's:
        # finalizers run last first, so these run around its own.
        torn = []
        fixturedef.addfinalizer(lambda: _torn_down(torn))
    try:
        yield
    finally:
        _add, _NOW[0], _SKIPPING[0] = saved, now, skipping
        if skipping:
            sys.settrace(None)
        if _UNTRACED:
            fixturedef.addfinalizer(lambda: _tearing_down(torn))


def _tearing_down(torn):
    """A wider fixture's teardown in an untraced test: traced, shared."""
    global _add
    if _SKIPPING[0]:
        torn.append(_add)
        _add, _SKIPPING[0] = _SHARED.add, False
        _start()


def _torn_down(torn):
    global _add
    if torn:
        _add, _SKIPPING[0] = torn.pop(), True
        sys.settrace(None)


def pytest_sessionfinish(session):
    if not _ON:
        return
    sys.settrace(None)
    threading.settrace(None)
    root = _ON[0].rstrip(os.sep) + os.sep
    seen = {}

    def where(code):
        if code not in seen:
            name = code.co_filename
            # A module's own code runs at import: its text is compared whole.
            ok = name.startswith(root) and "site-packages" not in name
            ok = ok and code.co_name != "<module>"
            seen[code] = [name[len(root):], code.co_firstlineno] if ok else None
        return seen[code]

    def rows(codes):
        return sorted({tuple(w) for w in map(where, codes) if w is not None})

    files = set()
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None) or ""
        if name.startswith(root) and name.endswith(".py") and "site-packages" not in name:
            files.add(name[len(root):])
    imports = {}
    for name, codes in _BY_MODULE.items():
        file = name[len(root):] if name.startswith(root) else None
        if file in _TEST_MODULES:
            imports[file] = rows(codes)
        else:  # a conftest.py, a module of the project's (its doctests too)
            _SHARED.update(codes)
    # The lines each test (outside the tests, each test file's import) ran
    # of each function: a list of the distinct line sets, each row naming
    # one by its place in it.
    contexts = {id(_SHARED): ("shared", "")}
    for node, codes in _TESTS.items():
        if codes is not None:
            contexts[id(codes)] = ("tests", node)
    for name, codes in _BY_MODULE.items():
        file = name[len(root):] if name.startswith(root) else None
        contexts[id(codes)] = ("imports", file) if file in _TEST_MODULES else ("shared", "")
    paths, places = [], {}
    line_rows = {"tests": {}, "shared": [], "imports": {}}
    for (bucket, code), ran in _LINES.items():
        if _CODE_MINE.get(code) == "hot":
            ran.add(_PARTIAL)
        context, w = contexts.get(bucket), where(code)
        if context is None or w is None or not ran:
            continue
        ran = tuple(sorted(ran))
        if ran not in places:
            places[ran] = len(paths)
            paths.append(ran)
        row = [w[0], w[1], places[ran]]
        if context[0] == "shared":
            line_rows["shared"].append(row)
        else:
            line_rows[context[0]].setdefault(context[1], []).append(row)
    record = {
        "paths": paths,
        "lines": line_rows,
        "tests": {k: (None if v is None else rows(v)) for k, v in _TESTS.items()},
        "opaque": {
            k: _OPAQUE.get(k) or _OPAQUE_SHARED[0] + " (outside the tests)"
            for k in _TESTS
            if k in _OPAQUE or _OPAQUE_SHARED
        },
        "reads": {
            k: sorted(n[len(root):] for n in v if n.startswith(root)) for k, v in _READS.items()
        },
        "shared": rows(_SHARED),
        "collected": _COLLECTED,
        "imports": imports,
        "files": sorted(files),
    }
    with open(_OUT, "w", encoding="utf-8") as out:
        json.dump(record, out)
'''


def write_plugin(folder: Path) -> None:
    """Write the plugin into ``folder`` (on the run's ``PYTHONPATH``), and
    beside it what it judges a child process by
    (:mod:`rein.testgate.children`)."""
    (folder / f"{COVERAGE_PLUGIN}.py").write_text(_SOURCE, encoding="utf-8")
    children = Path(__file__).with_name("children.py").read_text(encoding="utf-8")
    (folder / f"{CHILDREN_MODULE}.py").write_text(children, encoding="utf-8")


Where = tuple[str, int]
#: In a record's line set: the lines it ran there are not all known (the
#: plugin stopped tracing a hot function or loop by line).
PARTIAL = -1


@dataclass(slots=True)
class RawCoverage:
    """The plugin's record (see the module docstring)."""

    tests: dict[str, frozenset[Where] | None] = field(default_factory=dict)
    #: Node id -> why its record cannot be trusted (see the module docstring).
    opaque: dict[str, str] = field(default_factory=dict)
    shared: frozenset[Where] = frozenset()
    collected: dict[str, tuple[str, ...]] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    #: Node id -> the workspace's ``.py`` files whose text it read.
    reads: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Test file -> what its import at the collection ran (each of its
    #: tests depends on it; see the module docstring).
    imports: dict[str, frozenset[Where]] = field(default_factory=dict)
    #: The lines each function ran: node id -> where -> its lines (in the
    #: run's text of the function's file) ...
    test_lines: dict[str, dict[Where, frozenset[int]]] = field(default_factory=dict)
    #: ... outside the tests ...
    shared_lines: dict[Where, frozenset[int]] = field(default_factory=dict)
    #: ... and at each test file's import.
    import_lines: dict[str, dict[Where, frozenset[int]]] = field(default_factory=dict)


def _wheres(rows: Any) -> frozenset[Where]:
    return frozenset((str(r[0]), int(r[1])) for r in rows)


def _lines(rows: Any, paths: list[frozenset[int]]) -> dict[Where, frozenset[int]]:
    """Rows of ``[file, first line, place in paths]`` as where -> lines (a
    function with two code objects, or run twice: their lines together)."""
    out: dict[Where, frozenset[int]] = {}
    for row in rows:
        where, ran = (str(row[0]), int(row[1])), paths[int(row[2])]
        out[where] = out[where] | ran if where in out else ran
    return out


def read_coverage(path: Path) -> RawCoverage | None:
    """The record at ``path``; None when there is none or it cannot be
    read (the run ended before pytest's session did)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tests = {
            str(node): None if rows is None else _wheres(rows)
            for node, rows in data["tests"].items()
        }
        raw = RawCoverage(
            tests=tests,
            opaque={str(k): str(v) for k, v in data["opaque"].items()},
            shared=_wheres(data["shared"]),
            collected={str(k): tuple(map(str, v)) for k, v in data["collected"].items()},
            files=tuple(map(str, data["files"])),
            reads={str(k): tuple(map(str, v)) for k, v in data.get("reads", {}).items()},
            imports={str(k): _wheres(v) for k, v in data.get("imports", {}).items()},
        )
        paths = [frozenset(map(int, ran)) for ran in data.get("paths", ())]
        lines = data.get("lines", {})
        raw.test_lines = {str(k): _lines(v, paths) for k, v in lines.get("tests", {}).items()}
        raw.shared_lines = _lines(lines.get("shared", ()), paths)
        raw.import_lines = {str(k): _lines(v, paths) for k, v in lines.get("imports", {}).items()}
        return raw
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
