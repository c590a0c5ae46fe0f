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
  it ran, its Python children's included (each writes its own record,
  joined at the test's end: :mod:`rein.testgate.child_tracer`); ``null``
  for a test during which something else replaced the
  tracer (a test of a tracer, a debugger): not known;
* ``opaque``: node id -> why what the test ran is more than its record
  shows: it started a child process (``subprocess``, ``os.fork``,
  ``os.posix_spawn``, ``os.system``, multiprocessing: the child runs
  untraced) that may run the workspace's code or read its files
  (:mod:`rein.testgate.children`: any not on its allow-list; not a
  pager, ``cat``, ``sed`` on a temporary file; a Python child only when
  it left no record or its record says so), or a thread (traced, but it
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

from rein.testgate.child_tracer import SITE_MODULE, SITE_SOURCE
from rein.testgate.recorder_plugin import PLUGIN_SOURCE

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


def write_plugin(folder: Path) -> None:
    """Write the plugin into ``folder`` (on the run's ``PYTHONPATH``), and
    beside it what it judges a child process by
    (:mod:`rein.testgate.children`) and what a Python child records by
    (:mod:`rein.testgate.child_tracer`, as ``sitecustomize``)."""
    (folder / f"{COVERAGE_PLUGIN}.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    children = Path(__file__).with_name("children.py").read_text(encoding="utf-8")
    (folder / f"{CHILDREN_MODULE}.py").write_text(children, encoding="utf-8")
    (folder / f"{SITE_MODULE}.py").write_text(SITE_SOURCE, encoding="utf-8")


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
