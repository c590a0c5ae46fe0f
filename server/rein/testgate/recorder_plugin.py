"""The recording plugin's text (:mod:`rein.testgate.recorder` writes it
beside the run's report plugin and documents the record it writes): a call
tracer noting each code object a frame starts, and a line tracer on the
workspace's own functions, under the test that runs them; the hooks where
a test escapes the tracer (a child process, a thread, a read of source
text); the record written at the session's end."""

from __future__ import annotations

__all__ = ["PLUGIN_SOURCE"]

PLUGIN_SOURCE = '''"""Written by Rein's tests gate: which code each test ran."""
import json
import os
import sys
import sysconfig
import threading

import pytest

_STDLIB = sysconfig.get_paths()["stdlib"].rstrip(os.sep) + os.sep

_OUT = os.environ.get("REIN_TESTS_COVERAGE")
# Where the tests' Python children write their records (the sitecustomize
# of rein.testgate.child_tracer).
_KIDS = (_OUT or "") + ".children"
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
# Node id -> the Python children it started: (pid, the clock before).
_EXPECTED = {}
# Node id -> its Python children's rows: [file, first line, lines].
_KID_ROWS = {}
# The workspace's modules its Python children imported.
_KID_FILES = set()
# What the Python children record by (set while a traced test runs).
_KID_ENV = {}
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


def _python_child(pid, since, frame):
    """A Python child started: its record is read at its test's end (none
    there: the test is opaque); outside the tests, every test is."""
    if not _from_workspace(frame, False):
        return
    if _NOW[0] is None:
        _opaque("it starts a child process")
    elif not _SKIPPING[0]:
        _EXPECTED.setdefault(_NOW[0], []).append((pid, since, os.getpid()))


def _ended(pid):
    """Process ``pid`` has ended (gone, or a zombie): its record is whole."""
    if not os.path.isdir("/proc/self"):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:
            pass
        return False  # running, or a zombie: not told apart here
    try:
        with open("/proc/%d/stat" % pid, "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        return False


def _gather(node):
    """The records of the Python children ``node`` started (and theirs),
    joined to its own. One missing (killed, untraced), not whole (the
    child still runs), not that child's (older than its start, another
    parent: another process with its pid), or opaque itself: the test is
    opaque."""
    waiting = list(_EXPECTED.pop(node, ()))
    while waiting:
        pid, since, parent = waiting.pop()
        path = os.path.join(_KIDS, "%d.json" % pid)
        record = None
        if _ended(pid):
            try:
                with open(path, encoding="utf-8") as text:
                    record = json.load(text)
                os.remove(path)
            except (OSError, ValueError):
                pass
        if (
            not isinstance(record, dict)
            or record.get("started", 0) < since
            or record.get("parent") != parent
        ):
            _opaque("a Python child it started left no record (killed, still running, untraced)")
            continue
        if record["opaque"]:
            _opaque(record["opaque"])
        _KID_ROWS.setdefault(node, []).extend(record["rows"])
        _KID_FILES.update(record["files"])
        if record["reads"]:
            _READS.setdefault(node, set()).update(record["reads"])
        waiting.extend((int(p), float(s), pid) for p, s in record["children"])


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

    rein_testgate_children.install(_ON[0], _child, _python_child)
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
    # For the Python children the tests start (and only them: set here).
    os.makedirs(_KIDS, exist_ok=True)
    for name in os.listdir(_KIDS):
        try:
            os.remove(os.path.join(_KIDS, name))
        except OSError:  # a child of an earlier run wrote it meanwhile
            pass
    _KID_ENV.update(REIN_TESTS_CHILDREN=_KIDS, REIN_TESTS_CHILD_ROOT=_ON[0])
    os.environ.update(_KID_ENV)
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
        for name in _KID_ENV:  # its Python children record nothing either
            os.environ.pop(name, None)
        try:
            yield
        finally:
            _SKIPPING[0] = False
            _IGNORED.clear()
            _add = _SHARED.add
            os.environ.update(_KID_ENV)
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
        _gather(item.nodeid)
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

    files = set(_KID_FILES)
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
    tests = {k: (None if v is None else rows(v)) for k, v in _TESTS.items()}
    for node, kid_rows in _KID_ROWS.items():
        if tests.get(node) is None:
            continue
        tests[node] = sorted(set(map(tuple, tests[node])) | {(f, n) for f, n, _ in kid_rows})
        for file, first, ran in kid_rows:
            ran = tuple(ran)
            if ran not in places:
                places[ran] = len(paths)
                paths.append(ran)
            line_rows["tests"].setdefault(node, []).append([file, first, places[ran]])
    record = {
        "paths": paths,
        "lines": line_rows,
        "tests": tests,
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
