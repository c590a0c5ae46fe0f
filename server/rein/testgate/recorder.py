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
* ``shared``: the same, for what ran outside the tests;
* ``collected``: test file -> the node ids pytest collected in it (before
  any deselection: the tests a later verdict must know of);
* ``files``: the workspace's modules imported by the end.

A pytest-xdist worker records nothing (the gate records only runs without
it). :mod:`rein.testgate.coverage_index` turns the record into what a
later verdict selects by.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["COVERAGE_ENV", "COVERAGE_PLUGIN", "RawCoverage", "read_coverage", "write_plugin"]

COVERAGE_PLUGIN = "rein_testgate_coverage"
COVERAGE_ENV = "REIN_TESTS_COVERAGE"

_SOURCE = '''"""Written by Rein's tests gate: which code each test ran."""
import json
import os
import sys
import threading

import pytest

_OUT = os.environ.get("REIN_TESTS_COVERAGE")
_SHARED = set()
_TESTS = {}
_COLLECTED = {}
_ON = []
_OUTER = []
_add = _SHARED.add


def _trace(frame, event, arg):
    global _add
    _add(frame.f_code)
    if frame.f_code.co_name == "<module>":
        # An import, even one a test makes: what it runs is shared.
        _OUTER.append(_add)
        _add = _SHARED.add
        return _imported


def _imported(frame, event, arg):
    global _add
    if event == "return" and _OUTER:
        _add = _OUTER.pop()
    return _imported


def _start():
    sys.settrace(_trace)
    threading.settrace(_trace)


def pytest_configure(config):
    if _OUT and not hasattr(config, "workerinput"):
        _ON.append(os.getcwd())
        _start()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    for item in items:
        _COLLECTED.setdefault(item.nodeid.split("::")[0], []).append(item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _add
    if not _ON:
        yield
        return
    mine = set()
    _add = mine.add
    _start()
    try:
        yield
    finally:
        _TESTS[item.nodeid] = mine if sys.gettrace() is _trace else None
        _add = _SHARED.add
        _start()


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    global _add
    if not _ON or fixturedef.scope == "function":
        yield
        return
    saved = _add
    _add = _SHARED.add
    try:
        yield
    finally:
        _add = saved


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
    record = {
        "tests": {k: (None if v is None else rows(v)) for k, v in _TESTS.items()},
        "shared": rows(_SHARED),
        "collected": _COLLECTED,
        "files": sorted(files),
    }
    with open(_OUT, "w", encoding="utf-8") as out:
        json.dump(record, out)
'''


def write_plugin(folder: Path) -> None:
    """Write the plugin into ``folder`` (on the run's ``PYTHONPATH``)."""
    (folder / f"{COVERAGE_PLUGIN}.py").write_text(_SOURCE, encoding="utf-8")


Where = tuple[str, int]


@dataclass(slots=True)
class RawCoverage:
    """The plugin's record (see the module docstring)."""

    tests: dict[str, frozenset[Where] | None] = field(default_factory=dict)
    shared: frozenset[Where] = frozenset()
    collected: dict[str, tuple[str, ...]] = field(default_factory=dict)
    files: tuple[str, ...] = ()


def _wheres(rows: Any) -> frozenset[Where]:
    return frozenset((str(r[0]), int(r[1])) for r in rows)


def read_coverage(path: Path) -> RawCoverage | None:
    """The record at ``path``; None when there is none or it cannot be
    read (the run ended before pytest's session did)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tests = {
            str(node): None if rows is None else _wheres(rows)
            for node, rows in data["tests"].items()
        }
        return RawCoverage(
            tests=tests,
            shared=_wheres(data["shared"]),
            collected={str(k): tuple(map(str, v)) for k, v in data["collected"].items()},
            files=tuple(map(str, data["files"])),
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
