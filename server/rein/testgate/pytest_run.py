"""How the tests gate runs pytest, and what it reads back.

pytest runs in the shadow as ``<the project's interpreter> -m pytest
<node ids or files> -q -p no:cacheprovider -p rein_testgate_report
--rootdir=<shadow> --confcutdir=<shadow> [-c <empty ini>] --tb=native
--continue-on-collection-errors [-p xdist -n auto] --maxfail=0``
(``-I -S <client> <socket>`` in place of ``-m pytest`` when the warm
pytest runs it, :mod:`rein.testgate.warm`):

* ``rein_testgate_report`` is a plugin of a few lines written into the
  shadow's private folder (on ``PYTHONPATH``): it writes each of pytest's
  own report objects (the test's exact ``nodeid``, the phase, the outcome,
  the failure's text, the location, the captured sections; a collection
  failure's) as a JSON line, the number of tests collected, and a last
  ``finish`` line at the session's end (a report without it is of a
  pytest that ended early, a test's ``os._exit(0)``: never a pass). The
  console is never read.
* ``--rootdir`` and ``--confcutdir`` keep pytest inside the shadow (node
  ids relative to the workspace root, no ``conftest.py`` from above it);
  when no pytest configuration file lies between the targets and the
  workspace root, ``-c`` names an empty one, so none above the shadow (in
  the temporary folder) is read.
* ``--maxfail=0`` comes last: a project's ``-x`` / ``--maxfail`` (its
  ``addopts``, ``PYTEST_ADDOPTS``) cannot stop the run before the test
  the gate must see (the last one given wins; 0: no limit).
* ``-p xdist`` loads pytest-xdist for ``-n auto`` even when plugins are
  not loaded automatically.
* ``only`` (the baseline's run of the failing tests, a per-test
  selection): the targets are their files, which pytest collects whole,
  and the plugin keeps only the tests named in a file beside the report
  (``REIN_TESTS_ONLY``; a file's own path keeps all its tests, a class's
  node id all of its tests, a test's all of its parameters), deselecting
  the rest. A named test that is not there is not an error: it is just
  not run (the run added it). A function or class of those files that no
  named test is or lies in is not even made into test items (the
  plugin's ``pytest_pycollect_makeitem``): its parametrization and its
  fixtures are never worked out (more-itertools's ``test_more.py``, 664
  tests: collecting it whole took 0.27 s of a 0.42 s run). A recorded run
  makes them all in the files no valid record lists the tests of (the
  ``whole`` files, ``REIN_TESTS_COLLECT_ALL``), and deselects: its record
  lists every test of those files, and only of those.
  A file named with :data:`NO_TEST` alone (the baseline's check that a
  file that cannot be collected now could be before the run) has all its
  tests made and deselected: an error made with them (a bad
  ``parametrize``, a ``pytest_generate_tests`` that raises) is reported
  as the file's collection error, as in the first run, and none runs.
* ``tmp_path``: pytest's temporary folders are made in the shadow's
  private folder (``PYTEST_DEBUG_TEMPROOT``, unless set: ``<the tree's
  name>.tmp`` there, which the tree is not), not in the
  system's shared one where pytest cleans up old folders as it makes one:
  two runs at once (the re-run and the baseline) and the user's other
  pytest runs raced there.
* bytecode: the shadow's compiled-module prefix (:attr:`Shadow.pycache`,
  :mod:`rein.testgate.pycache`) is ``PYTHONPYCACHEPREFIX`` and
  ``PYTHONDONTWRITEBYTECODE`` is unset, so a run writes its compiled
  modules and pytest's rewritten test modules there (never beside a
  source file: not in the workspace, nor in a folder the shadow links to)
  and a later run imports them instead of compiling and rewriting its
  test files again (:class:`~rein.testgate.shadow.ShadowTree` deletes
  what could come back with the same stamp).
* ``again`` (the first run): ``-p rein_testgate_rerun`` too, a failing
  test run once more in the same process, both outcomes reported
  (:mod:`rein.testgate.rerun_in_process`).
* ``feed`` (the baseline's run beside the first): ``-p
  rein_testgate_feed`` too, the tests named in a file the gate appends to
  run as their names come (:mod:`rein.testgate.baseline_feed`).
* ``coverage`` (a run whose record the gate keeps): ``-p
  rein_testgate_coverage`` too, the record's path in
  ``REIN_TESTS_COVERAGE`` (:mod:`rein.testgate.recorder`); ``untraced``:
  the tests whose record is still good, run without the tracer (a file
  beside the report, ``REIN_TESTS_UNTRACED``).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rein.testgate.baseline_feed import FEED_ENV, FEED_PLUGIN, FEED_S_ENV, Feed, write_feed_plugin
from rein.testgate.junit import Outcome, TestResult
from rein.testgate.pytest_call import PytestCall
from rein.testgate.recorder import COVERAGE_ENV, COVERAGE_PLUGIN, UNTRACED_ENV, write_plugin
from rein.testgate.rerun_in_process import RERUN_PLUGIN, write_rerun_plugin
from rein.testgate.selection import distributed, uses_cache
from rein.testgate.shadow import Shadow
from rein.testgate.warm import WarmClient

__all__ = [
    "NO_TEST",
    "PLUGIN",
    "XDIST_FROM_FILES",
    "PytestCall",
    "pytest_call",
    "pytest_command",
    "read_report",
]

#: Selected test files from which pytest-xdist is used, when installed.
XDIST_FROM_FILES = 20
#: The plugin's module name.
PLUGIN = "rein_testgate_report"
_REPORT_ENV = "REIN_TESTS_REPORT"
_ONLY_ENV = "REIN_TESTS_ONLY"
#: Every test of the files is made into an item, named or not (a recorded
#: run): "1" for every file, else a file naming the test files so collected.
_COLLECT_ALL_ENV = "REIN_TESTS_COLLECT_ALL"
#: A test name no test has: named alone for a file in ``only``, the file
#: is collected whole (imported, every test made, so an error made with
#: them is reported as the file's collection error) and none of its tests
#: runs (all deselected).
NO_TEST = "<rein: collect only>"

_PLUGIN_SOURCE = '''"""Written by Rein's tests gate: pytest's reports as JSON lines."""
import json
import os
import time

import pytest

_state = {"path": os.environ.get("REIN_TESTS_REPORT"), "worker": False, "out": None}


def _emit(row):
    if not _state["path"] or _state["worker"]:
        return
    if _state["out"] is None:
        # Opened once, a line written at a time (what a run killed midway
        # leaves is whole lines): not opened again for every report.
        _state["out"] = open(_state["path"], "a", encoding="utf-8", buffering=1)
    _state["out"].write(json.dumps(row) + "\\n")


def _row(report, kind):
    crash = getattr(report.longrepr, "reprcrash", None)
    location = getattr(report, "location", None)
    return {
        "kind": kind,
        "nodeid": report.nodeid,
        "when": getattr(report, "when", "collect"),
        "outcome": report.outcome,
        "message": str(getattr(crash, "message", "") or ""),
        "text": report.longreprtext if report.longrepr else "",
        "location": [str(location[0]), location[1]] if location else None,
        # Only a failure's output is shown (a test's last report holds
        # what its earlier phases captured too).
        "sections": [[t, c] for t, c in report.sections] if report.failed else [],
        # Its in-process re-run's line follows (rein_testgate_rerun).
        "again": report.failed and _state.get("retrying") == report.nodeid,
        # The phase's time: the gate shares a later run's tests by it.
        "duration": getattr(report, "duration", None),
    }


def pytest_configure(config):
    _state["worker"] = hasattr(config, "workerinput")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if _state["out"] is not None:
        _state["out"].close()
        _state["out"] = None


def pytest_sessionstart(session):
    _emit({"kind": "start"})


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    # The last line: a report without it is of a pytest that ended early
    # (a test's os._exit(0) exits 0 with the tests before it only).
    _emit({"kind": "finish", "exitstatus": int(exitstatus)})


def pytest_collection_finish(session):
    # How many tests will run: the gate's waves weigh what is left.
    # (The clock is the machine's: the gate's own monotonic time.)
    _emit({"kind": "collected", "count": len(session.items), "at": time.monotonic()})


def pytest_runtest_logstart(nodeid, location):
    # A test that never ends (the gate's time limit) is named by this line.
    _emit({"kind": "begin", "nodeid": nodeid})


def pytest_runtest_logreport(report):
    _emit(_row(report, "test"))


def pytest_collectreport(report):
    if report.failed:
        _emit(_row(report, "collect"))


def _wanted():
    if "wanted" not in _state:
        only = os.environ.get("REIN_TESTS_ONLY")
        wanted = None
        if only:
            with open(only, encoding="utf-8") as names:
                wanted = {line for line in names.read().splitlines() if line}
        _state["wanted"] = wanted
        bases = {w.split("[")[0] for w in wanted or ()}
        heads = set()
        for base in bases:
            parts = base.split("::")
            heads.update("::".join(parts[:end]) for end in range(1, len(parts) + 1))
        _state["bases"], _state["heads"] = bases, heads
    return _state["wanted"]


def _whole(file):
    if "whole" not in _state:
        name = os.environ.get("REIN_TESTS_COLLECT_ALL") or ""
        whole = name == "1"
        if name and not whole:
            with open(name, encoding="utf-8") as names:
                whole = {line for line in names.read().splitlines() if line}
        _state["whole"] = whole
    whole = _state["whole"]
    return whole is True or (bool(whole) and file in whole)


NO_TEST = __NO_TEST__


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector, name, obj):
    # A test or class no named test is or lies in is never made (its
    # parameters, its fixtures' closure): a file collects what it must,
    # unless the run is recorded and no record lists the file's tests (a
    # new record lists all of them).
    file = collector.nodeid.split("::")[0]
    if not _wanted() or _whole(file) or file + "::" + NO_TEST in _state["wanted"]:
        # A file named with NO_TEST (collected, none of its tests run):
        # its items are made, then all deselected, so an error made with
        # them (a bad parametrize, its pytest_generate_tests) is reported.
        return None
    node = collector.nodeid + "::" + name
    if node in _state["heads"]:
        return None  # named, or holds a named test
    parts = node.split("::")
    bases = _state["bases"]
    if any("::".join(parts[:end]) in bases for end in range(1, len(parts))):
        return None  # in a named file or class
    return []


def pytest_collection_modifyitems(config, items):
    wanted = _wanted()
    if not wanted:
        return
    keep, drop = [], []
    for item in items:
        parts = item.nodeid.split("[")[0].split("::")
        named = item.nodeid in wanted or any(
            "::".join(parts[:end]) in wanted for end in range(1, len(parts) + 1)
        )
        (keep if named else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
'''
_PLUGIN_SOURCE = _PLUGIN_SOURCE.replace("__NO_TEST__", repr(NO_TEST))

#: pytest's configuration files, and the section that makes one count.
_CONFIG_FILES = {
    "pytest.toml": None,
    ".pytest.toml": None,
    "pytest.ini": None,
    ".pytest.ini": None,
    "pyproject.toml": ("[tool.pytest.ini_options]", "[tool.pytest]"),
    "tox.ini": ("[pytest]",),
    "setup.cfg": ("[tool:pytest]",),
}


def _has_config(folder: Path) -> bool:
    for name, sections in _CONFIG_FILES.items():
        file = folder / name
        if not file.is_file():
            continue
        if sections is None:
            return True
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(section in text for section in sections):
            return True
    return False


def own_config(root: Path, targets: Sequence[str] | None) -> bool:
    """pytest finds a configuration file of the workspace: one lies in
    the targets' common folder or a folder above it, up to ``root``."""
    folders = [Path(t.split("::")[0]).parent.parts for t in targets or ()]
    common: list[str] = []
    if folders:
        for parts in zip(*folders, strict=False):
            if len(set(parts)) != 1:
                break
            common.append(parts[0])
    here = root.joinpath(*common)
    while True:
        if _has_config(here):
            return True
        if here == root or root not in here.parents:
            return False
        here = here.parent


def pytest_command(
    python: str, shadow: Shadow, targets: Sequence[str] | None, report: Path, **options: Any
) -> str:
    """:func:`pytest_call`'s shell command (``options``: its keywords)."""
    return pytest_call(python, shadow, targets, report, **options).shell()


def _cache(shadow: Shadow, own: Callable[[str], Path]) -> list[str]:
    """pytest's cache off; kept for a project whose options use it (``--ff``
    in ``addopts`` was a usage error, every verdict unverified), in a
    folder of the shadow's own emptied before each run: it remembers no
    earlier run's failures (``--lf`` runs all); each share's own (``own``)."""
    if not uses_cache(shadow.root):
        return ["-p", "no:cacheprovider"]
    folder = own("cache")
    shutil.rmtree(folder, ignore_errors=True)
    return ["-o", f"cache_dir={folder}"]


def pytest_call(
    python: str,
    shadow: Shadow,
    targets: Sequence[str] | None,
    report: Path,
    *,
    xdist: bool,
    only: Sequence[str] | None = None,
    warm: WarmClient | None = None,
    coverage: Path | None = None,
    untraced: Sequence[str] = (),
    whole: Sequence[str] | None = None,
    again: bool = False,
    feed: Feed | None = None,
    feed_s: float = 60.0,
    share: int = 0,
) -> PytestCall:
    """The run of pytest in ``shadow``, its reports
    written to ``report`` (the plugin and the empty ini are the shadow's
    own files, :meth:`~rein.testgate.shadow.Shadow.own`);
    ``only``: of the tests ``targets`` collect, run only these node ids
    (or test files); ``warm``: run by the warm pytest process
    (:mod:`rein.testgate.warm`) through its client; ``coverage``: what
    each test ran is recorded there (:mod:`rein.testgate.recorder`), but
    for the ``untraced`` tests', and with ``only``, of ``targets`` only the
    ``whole`` files (None: all) are collected whole, the others as
    ``only`` names them (an earlier record lists their tests); ``again``: a
    failing test runs once more at once in the same process
    (:mod:`rein.testgate.rerun_in_process`: the first run's); ``feed``:
    of the tests collected, run those named in the feed as they come,
    waiting up to ``feed_s`` for its end (:mod:`rein.testgate.baseline_feed`:
    the baseline's run beside the first); ``share``: one of the first
    run's shares (:mod:`rein.testgate.cores`) but the first, whose files
    (its named tests, its temporary folder) are its own."""

    def own(name: str) -> Path:
        stem, dot, ext = name.partition(".")
        return shadow.own(f"{stem}.{share}{dot}{ext}" if share else name)

    plugin_dir = shadow.own("plugin")
    plugin_dir.mkdir(exist_ok=True)
    (plugin_dir / f"{PLUGIN}.py").write_text(_PLUGIN_SOURCE, encoding="utf-8")
    root = shadow.root
    start = ["-m", "pytest"] if warm is None else ["-I", "-S", warm.script, warm.socket, warm.token]
    argv = [python, *start, *(targets or ()), "-q", *_cache(shadow, own)]
    argv += ["-p", PLUGIN, f"--rootdir={root}", f"--confcutdir={root}"]
    env: list[tuple[str, str]] = []
    if again:
        write_rerun_plugin(plugin_dir)
        argv += ["-p", RERUN_PLUGIN]
    if feed is not None:
        write_feed_plugin(plugin_dir)
        argv += ["-p", FEED_PLUGIN]
        feed.attach(shadow.own("feed.txt"))
        env += [(FEED_ENV, str(feed.path)), (FEED_S_ENV, f"{feed_s:.1f}")]
    if coverage is not None:
        write_plugin(plugin_dir)
        argv += ["-p", COVERAGE_PLUGIN]
        collect = "1"
        if whole is not None and only is not None:
            listed = own("whole.txt")
            listed.write_text("".join(f"{name}\n" for name in whole), encoding="utf-8")
            collect = str(listed)
        env += [(COVERAGE_ENV, str(coverage)), (_COLLECT_ALL_ENV, collect)]
        if untraced:
            names = own("untraced.txt")
            names.write_text("".join(f"{name}\n" for name in untraced), encoding="utf-8")
            env.append((UNTRACED_ENV, str(names)))
    if not own_config(root, targets):
        empty = shadow.own("ini") / "pytest.ini"
        empty.parent.mkdir(exist_ok=True)
        empty.write_text("[pytest]\n", encoding="utf-8")
        argv += ["-c", str(empty)]
    argv += ["--tb=native", "--continue-on-collection-errors"]
    if xdist:
        argv += ["-p", "xdist", "-n", "auto"]
    elif distributed(root):
        # The project's ``-n auto``: workers for a run of a few tests, the
        # re-run and the baseline's too (a tiny run 2-3x slower), and no
        # in-process re-run there. The gate decides (the last ``-n`` wins).
        argv += ["-n", "0"]
    argv += ["--maxfail=0"]
    paths = [str(plugin_dir), str(root)]
    if (root / "src").is_dir():
        paths.append(str(root / "src"))
    if only is not None:
        names = own("only.txt")
        names.write_text("".join(f"{name}\n" for name in only), encoding="utf-8")
        env.insert(0, (_ONLY_ENV, str(names)))
    # tmp_path's folders in the shadow's own (unless the user set where):
    # pytest removes old ones as it makes one, and two runs at once (the
    # re-run beside the baseline), or any other pytest of the machine's
    # user, sharing the system's one raced (an unclosed directory iterator,
    # an error under click's filterwarnings = error).
    # Named after the tree, never the tree (it is named as the workspace:
    # one named tmp was its own temporary folder).
    temp = own("tmp")
    temp.mkdir(exist_ok=True)
    env.insert(0, (_REPORT_ENV, str(report)))
    unset: tuple[str, ...] = ()
    if shadow.pycache is not None:
        unset = ("PYTHONDONTWRITEBYTECODE",)
        env.insert(0, ("PYTHONPYCACHEPREFIX", str(shadow.pycache)))
    return PytestCall(
        cwd=str(root),
        argv=tuple(argv),
        env=tuple(env),
        unset=unset,
        defaults=(("PYTEST_DEBUG_TEMPROOT", str(temp)),),
        path=tuple(paths),
    )


def read_report(text: str) -> tuple[list[TestResult], bool]:
    """The test results of the plugin's JSON lines, in order, and whether
    pytest finished its session (else it ended early: the results are of
    the tests before). Raises ``ValueError`` when pytest never started a
    session (no plugin line)."""
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not any(row.get("kind") == "start" for row in rows):
        raise ValueError("pytest started no session")
    finished = any(row.get("kind") == "finish" for row in rows)
    results: list[TestResult] = []
    phases: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("kind") == "collect":
            results.append(_collection_error(row))
        elif row.get("kind") == "test":
            node = str(row.get("nodeid", ""))
            if node not in phases:
                phases[node] = []
                results.append(TestResult(node_id=node, outcome="passed"))
            phases[node].append(row)
    tests = [r if r.collection_error else _test(r.node_id, phases[r.node_id]) for r in results]
    return tests, finished


def _collection_error(row: dict[str, Any]) -> TestResult:
    node = str(row.get("nodeid") or ".")
    text = str(row.get("text", ""))
    last = [line for line in text.splitlines() if line.strip()]
    message = last[-1].strip().removeprefix("E").strip() if last else "collection failure"
    return TestResult(
        node_id=node,
        outcome="error",
        message=message,
        text=text,
        file=node.split("::")[0],
        collection_error=True,
    )


def _test(node: str, rows: Sequence[dict[str, Any]]) -> TestResult:
    outcome: Outcome = "passed"
    failure: dict[str, Any] | None = None
    for row in rows:
        when, got = row.get("when"), row.get("outcome")
        if got == "failed":
            kind: Outcome = "failed" if when == "call" else "error"
            if failure is None or (kind == "failed" and outcome == "error"):
                failure, outcome = row, kind
        elif got == "skipped" and outcome == "passed":
            outcome = "skipped"
    sections: dict[str, str] = {}
    for row in rows:
        for title, content in row.get("sections") or ():
            sections.setdefault(str(title), str(content))
    file = node.split("::")[0]
    line = None
    location = rows[0].get("location")
    if isinstance(location, list) and len(location) == 2 and location[0] == file:
        line = location[1] + 1 if isinstance(location[1], int) else None
    return TestResult(
        node_id=node,
        outcome=outcome,
        message=str(failure.get("message", "")) if failure else "",
        text=str(failure.get("text", "")) if failure else "",
        output="\n".join(c.strip() for c in sections.values() if c.strip()),
        file=file,
        line=line,
    )
