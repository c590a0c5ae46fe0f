"""The tests gate on what real projects have (found by driving ``rein run``
over such projects, explore20): a per-protocol timeout plugin
(pytest-timeout's design), a test that hangs, a failing doctest, a test
that runs the changed code in a child process."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rein.disk.disk_workspace import DiskWorkspace
from tests.testgate.projects import BAD, GOOD, gate_for, project, verdict, verdict_on

#: pytest-timeout's design in a few lines: one timer armed around a test's
#: whole protocol (``pytest_runtest_protocol``), failing the test when it
#: fires. Loaded as ``-p timeout``, the name pytest-timeout registers.
TIMEOUT_PLUGIN = """import signal

import pytest


def _fire(signum, frame):
    pytest.fail("Timeout >0.5s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    signal.signal(signal.SIGALRM, _fire)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
"""
#: The run's change: a loop that never ends for these arguments.
LOOPS = "def first_n(xs, n):\n    while n == 2:\n        pass\n    return xs[:n]\n"
TESTS = (
    "from mod import first_n\n\n\n"
    "def test_first_two():\n    assert first_n([1, 2, 3], 2) == [1, 2]\n\n\n"
    "def test_first_one():\n    assert first_n([1, 2, 3], 1) == [1]\n"
)


async def test_a_test_a_timeout_plugin_stopped_is_blocked_not_hung_on(tmp_path: Path) -> None:
    """The in-process re-run ran a timed-out test again inside the same
    protocol, with no timer left: it looped to the gate's time limit and
    the verdict was "unverified" (120 s with pytest-timeout's
    ``--timeout``); now it is judged by the fresh re-run, timed."""
    root = project(
        tmp_path / "proj",
        {
            "mod.py": GOOD,
            "timeout.py": TIMEOUT_PLUGIN,
            "pytest.ini": "[pytest]\naddopts = -p timeout\n",
            "tests/test_mod.py": TESTS,
        },
    )
    started = time.monotonic()
    outcome = await verdict_on(root, "mod.py", LOOPS, timeoutMs=15_000)
    assert outcome.unverified is None, outcome.unverified
    assert [b.message for b in outcome.blockers] == [
        "tests/test_mod.py::test_first_two failed: Failed: Timeout >0.5s"
    ]
    assert time.monotonic() - started < 12


async def test_a_hang_s_timeout_names_the_test_that_was_running(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": TESTS})
    outcome = await verdict_on(root, "mod.py", LOOPS, timeoutMs=4_000)
    assert outcome.unverified is not None
    assert outcome.unverified.endswith("still running then: tests/test_mod.py::test_first_two")


async def test_a_failing_doctest_says_what_it_expected_and_got(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said "failed: failed", with one frame and no text."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "--doctest-modules")
    doc = '    """\n    >>> first_n([1, 2, 3], 2)\n    [1, 2]\n    """\n'
    good, bad = (t.replace("\n", "\n" + doc, 1) for t in (GOOD, BAD))
    tests = "from mod import first_n\n\n\ndef test_one():\n    assert first_n([1], 1) == [1]\n"
    root = project(tmp_path / "proj", {"mod.py": good, "tests/test_mod.py": tests})
    outcome = await verdict_on(root, "mod.py", bad)
    [blocker] = outcome.blockers
    assert blocker.message == "mod.py::mod.first_n failed: doctest expected [1, 2], got [1, 2, 3]"
    assert blocker.context is not None
    assert "Expected:\n    [1, 2]\nGot:\n    [1, 2, 3]" in blocker.context
    assert "rein-tests" not in blocker.context  # the shadow's path is not the model's


CHILD = (
    "import subprocess\nimport sys\n\nfrom mod import first_n\n\n\n"
    "def test_short_list():\n    assert first_n([1], 5) == [1]\n\n\n"
    "def test_in_a_child():\n"
    "    code = 'from mod import first_n; print(first_n([1, 2, 3], 2))'\n"
    "    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)\n"
    "    assert out.stdout.strip() == '[1, 2]', out.stderr\n\n\n"
    "def _cli(*args):\n"
    "    return subprocess.run([sys.executable, *args], capture_output=True, text=True)\n\n\n"
    "def test_by_a_helper():\n"
    "    out = _cli('-c', 'import mod; print(mod.first_n([1, 2, 3], 2))')\n"
    "    assert out.stdout.strip() == '[1, 2]', out.stderr\n\n\n"
    "def test_unrelated():\n    assert sys.version_info > (3,)\n"
)


async def test_a_test_running_the_change_in_a_child_process_is_run(tmp_path: Path) -> None:
    """Per test, only ``test_short_list`` named ``first_n`` (the others'
    code is a string for ``python -c``): it passed, and so did the verdict,
    with the two tests the change broke never run."""
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_child.py": CHILD})
    outcome = await verdict_on(root, "mod.py", BAD)
    assert sorted(b.message for b in outcome.blockers) == [
        "tests/test_child.py::test_by_a_helper failed: AssertionError: "
        "assert '[1, 2, 3]' == '[1, 2]'",
        "tests/test_child.py::test_in_a_child failed: AssertionError: "
        "assert '[1, 2, 3]' == '[1, 2]'",
    ]
    # Still per test: the test that starts no child and names nothing
    # reached does not run.
    assert outcome.detail is not None and outcome.detail.startswith("1 of 3 tests passed")


HELPERS = (
    "import subprocess\nimport sys\n\n\n"
    "def cli(*args):\n"
    "    return subprocess.run([sys.executable, *args], capture_output=True, text=True)\n"
)
BY_A_HELPER_MODULE = (
    "from helpers import cli\nfrom mod import first_n\n\n\n"
    "def test_short_list():\n    assert first_n([1], 5) == [1]\n\n\n"
    "def test_by_a_helper():\n"
    "    out = cli('-c', 'import mod; print(mod.first_n([1, 2, 3], 2))')\n"
    "    assert out.stdout.strip() == '[1, 2]', out.stderr\n"
)


async def test_a_child_process_a_helper_module_starts_is_run_too(tmp_path: Path) -> None:
    """review20b: the test calls ``cli`` of ``tests/helpers.py``, which
    runs ``python -c``: only spawns of the test file and of a conftest.py
    counted, so ``test_by_a_helper`` was left out and the verdict passed."""
    files = {"mod.py": GOOD, "tests/helpers.py": HELPERS, "tests/test_child.py": BY_A_HELPER_MODULE}
    root = project(tmp_path / "proj", files)
    outcome = await verdict_on(root, "mod.py", BAD)
    assert [b.message for b in outcome.blockers] == [
        "tests/test_child.py::test_by_a_helper failed: AssertionError: "
        "assert '[1, 2, 3]' == '[1, 2]'"
    ]


async def test_a_sed_temporary_file_is_no_change_at_a_later_verdict_either(
    tmp_path: Path,
) -> None:
    """``sed -i`` made the bug, an edit repaired it: the repair's verdict
    still counted sed's temporary file (the run's touched paths are the
    whole run's) as a changed file whose earlier text was unknown, so the
    undone change was judged, and with a test failing before the run,
    "unverified" (a project with a ``.git``, explore20)."""
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": TESTS})
    workspace = DiskWorkspace(root)
    gate = gate_for(root)
    try:
        await gate.before_change([], workspace)  # a command about to run
        (root / "sedAb12Cd").write_text(BAD)  # sed -i: a temporary file, renamed
        (root / "sedAb12Cd").replace(root / "mod.py")
        touched = ("mod.py", "sedAb12Cd")
        first = await verdict(gate, workspace, *touched)
        assert [b.message for b in first.blockers] == [
            "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]",
            "tests/test_mod.py::test_first_one failed: assert [1, 2] == [1]",
        ]
        await gate.before_change(["mod.py"], workspace)  # the repair, an edit
        (root / "mod.py").write_text(GOOD)
        again = await verdict(gate, workspace, *touched)
    finally:
        await gate.close()
    assert again.unverified is None and not again.blockers
    assert again.detail is not None and again.detail.startswith("the run's changes are undone")


async def test_a_module_no_test_imports_and_a_type_checking_block_are_no_hooks(
    tmp_path: Path,
) -> None:
    """click: a typing check under ``tests/typing`` (imported by no test,
    calling what the change reached at its module level) and
    ``if t.TYPE_CHECKING:`` imports (never run) each made every verdict
    run its test files whole."""
    check = "from mod import first_n\n\nfirst_n([1], 1)\n"
    user = (
        "import typing as t\n\nfrom mod import first_n\n\n"
        "if t.TYPE_CHECKING:\n    from mod import first_n as typed\n\n\n"
        "def two(xs):\n    return first_n(xs, 2)\n"
    )
    tests = (
        "from user import two\n\n\n"
        "def test_two():\n    assert two([1, 2, 3]) == [1, 2]\n\n\n"
        "def test_other():\n    assert True\n"
    )
    root = project(
        tmp_path / "proj",
        {
            "mod.py": GOOD,
            "user.py": user,
            "tests/typing/check_first.py": check,
            "tests/test_user.py": tests,
        },
    )
    outcome = await verdict_on(root, "mod.py", BAD)
    assert [b.message for b in outcome.blockers] == [
        "tests/test_user.py::test_two failed: assert [1, 2, 3] == [1, 2]"
    ]
    assert outcome.detail is not None
    assert outcome.detail.startswith("0 of 1 tests passed"), outcome.detail
    assert "per test: 1 tests, classes or files" in outcome.detail


async def test_definitions_under_a_module_level_if_or_try_are_units(tmp_path: Path) -> None:
    """click's ``if WIN: def getchar(echo)`` (a platform's functions) was
    one module-level statement naming what it reached: every verdict ran
    its test files whole."""
    user = (
        "import sys\n\nfrom mod import first_n\n\n"
        "try:\n    import tomllib\nexcept ImportError:\n    tomllib = None\n\n"
        "if sys.platform == 'win32':\n\n"
        "    def two(xs):\n        return first_n(xs, 2)\n\n"
        "else:\n\n"
        "    def two(xs):\n        return list(first_n(xs, 2))\n"
    )
    tests = (
        "from user import two\n\n\n"
        "def test_two():\n    assert two([1, 2, 3]) == [1, 2]\n\n\n"
        "def test_other():\n    assert True\n"
    )
    files = {"mod.py": GOOD, "user.py": user, "tests/test_user.py": tests}
    root = project(tmp_path / "proj", files)
    outcome = await verdict_on(root, "mod.py", BAD)
    assert [b.message for b in outcome.blockers] == [
        "tests/test_user.py::test_two failed: assert [1, 2, 3] == [1, 2]"
    ]
    assert outcome.detail is not None
    assert outcome.detail.startswith("0 of 1 tests passed"), outcome.detail
    # A change in a branch's definition is a definition's change.
    branch = user.replace("list(first_n(xs, 2))", "list(first_n(xs, 3))")
    outcome = await verdict_on(root, "user.py", branch)
    assert [b.message for b in outcome.blockers] == [
        "tests/test_user.py::test_two failed: assert [1, 2, 3] == [1, 2]"
    ]
    assert outcome.detail is not None and "per test: 1 tests" in outcome.detail, outcome.detail


async def test_a_project_s_own_dash_n_does_not_distribute_the_gate_s_small_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-n auto`` in the project's ``addopts`` started pytest-xdist's
    workers for every run of the gate, a tiny one's too (2.6x slower under
    load, explore20), and its failing tests never ran again in process."""
    where = tmp_path / "where.txt"
    monkeypatch.setenv("WHERE_OUT", str(where))
    tests = TESTS + (
        "\n\ndef test_where():\n    import os\n\n"
        "    with open(os.environ['WHERE_OUT'], 'a') as out:\n"
        "        out.write(os.environ.get('PYTEST_XDIST_WORKER', 'main') + '\\n')\n"
        "    assert first_n([1, 2, 3], 3) == [1, 2, 3]\n"
    )
    files = {
        "mod.py": GOOD,
        # Loaded by name: this suite's pytest loads no plugin by itself.
        "pytest.ini": "[pytest]\naddopts = -p xdist -n 2\n",
        "tests/test_mod.py": tests,
    }
    root = project(tmp_path / "proj", files)
    outcome = await verdict_on(root, "mod.py", BAD)
    assert sorted(b.message for b in outcome.blockers) == [
        "tests/test_mod.py::test_first_one failed: assert [1, 2] == [1]",
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]",
    ]
    assert set(where.read_text().split()) == {"main"}


async def test_a_changed_test_file_missing_a_module_before_the_run_too_blocks_nothing(
    tmp_path: Path,
) -> None:
    """A test file that needs a module the interpreter lacks (an optional
    dependency) did not import before the run either: the run that added a
    test to it was blocked at once, a blocker no repair can fix."""
    needs = "import not_installed_here\n\n\ndef test_x():\n    pass\n"
    files = {"mod.py": GOOD, "tests/test_mod.py": TESTS, "tests/test_needs.py": needs}
    root = project(tmp_path / "proj", files)
    outcome = await verdict_on(root, "tests/test_needs.py", needs + "\n\ndef test_y():\n    pass\n")
    assert outcome.blockers == []
    assert outcome.detail is not None
    assert "failing before the run too (not blocking): tests/test_needs.py" in outcome.detail
    # The run's own missing import still blocks.
    added = "import not_installed_here\n" + TESTS
    outcome = await verdict_on(root, "tests/test_mod.py", added)
    assert [b.message for b in outcome.blockers] == [
        "tests/test_mod.py cannot be collected (importing it or making its tests failed)"
    ]


CACHED = (
    "import functools\n\n\n@functools.lru_cache\ndef table():\n"
    "    return {'a': 1, 'b': 2}\n\n\ndef lookup(k):\n    return table()[k]\n"
)


async def test_a_cached_function_s_change_runs_the_tests_its_cache_served(
    tmp_path: Path,
) -> None:
    """The first verdict recorded ``test_a`` running ``table`` and
    ``test_b`` served by its cache (``table``'s code never ran under it);
    a later change of ``table`` ran ``test_a`` alone, by coverage, and
    passed with ``test_b`` broken."""
    tests = (
        "from mod import lookup, table\n\n\n"
        "def test_a():\n    assert table()['a'] == 1\n\n\n"
        "def test_b():\n    assert lookup('b') == 2\n"
    )
    root = project(tmp_path / "proj", {"mod.py": CACHED, "tests/test_mod.py": tests})
    recorded = CACHED.replace("{'a': 1, 'b': 2}", "dict(a=1, b=2)")
    workspace = DiskWorkspace(root)
    gate = gate_for(root)
    try:
        for text in (recorded, recorded.replace("b=2", "b=3")):
            await gate.before_change(["mod.py"], workspace)
            (root / "mod.py").write_text(text)
            outcome = await verdict(gate, workspace, "mod.py")
            gate.on_validated(2)
    finally:
        await gate.close()
    assert [b.message for b in outcome.blockers] == [
        "tests/test_mod.py::test_b failed: AssertionError: assert 3 == 2"
    ]


#: ``table()`` is cached; what it calls runs only under the test that
#: fills the cache: ``_build`` here, ``rows`` in another module.
CALLS_UNDER_CACHE = (
    "import functools\n\nfrom build import rows\n\n\ndef _build():\n    return dict(rows())\n\n\n"
    "@functools.lru_cache\ndef table():\n    return _build()\n\n\n"
    "def lookup(k):\n    return table()[k]\n"
)
ROWS = "def rows():\n    return [('a', 1), ('b', 2)]\n"


@pytest.mark.parametrize(
    ("path", "seeded"),
    [
        pytest.param("mod.py", ("dict(rows())", "dict(rows(), b=3)"), id="same-module"),
        pytest.param("build.py", ("('b', 2)", "('b', 3)"), id="another-module"),
    ],
)
async def test_a_change_of_what_a_cached_function_calls_runs_the_tests_its_cache_served(
    tmp_path: Path, path: str, seeded: tuple[str, str]
) -> None:
    """review20b: with ``_build`` changed, coverage ran only ``test_a``,
    which filled ``table``'s cache (``test_b``'s record never saw
    ``_build`` run), and passed with ``test_b`` broken. The first verdict
    (a change of ``lookup``, or of ``rows``) records; the second seeds a
    bug in what ``table`` calls."""
    tests = (
        "from mod import lookup, table\n\n\n"
        "def test_a():\n    assert table()['a'] == 1\n\n\n"
        "def test_b():\n    assert lookup('b') == 2\n"
    )
    files = {"mod.py": CALLS_UNDER_CACHE, "build.py": ROWS, "tests/test_mod.py": tests}
    root = project(tmp_path / "proj", files)
    recorded = files[path].replace("[k]", "[str(k)]").replace("1)", "1 + 0)")
    workspace = DiskWorkspace(root)
    gate = gate_for(root)
    try:
        for text in (recorded, recorded.replace(*seeded)):
            await gate.before_change([path], workspace)
            (root / path).write_text(text)
            outcome = await verdict(gate, workspace, path)
            gate.on_validated(2)
    finally:
        await gate.close()
    assert [b.message for b in outcome.blockers] == [
        "tests/test_mod.py::test_b failed: AssertionError: assert 3 == 2"
    ]
    assert outcome.detail is not None and "may run under a memoized function" in outcome.detail


async def test_a_project_s_cache_options_work_and_remember_no_earlier_verdict(
    tmp_path: Path,
) -> None:
    """``--lf`` (or ``--ff``, ``--sw``) in ``addopts`` was a usage error
    under the gate's ``-p no:cacheprovider``: every verdict unverified.
    The cache is kept, empty at each run: ``--lf`` never narrows a verdict
    to the tests an earlier one saw failing."""
    root = project(
        tmp_path / "proj",
        {"mod.py": GOOD, "pytest.ini": "[pytest]\naddopts = --lf\n", "tests/test_mod.py": TESTS},
    )
    workspace = DiskWorkspace(root)
    gate = gate_for(root)
    blocked: list[list[str]] = []
    try:
        for broken in (1, 2):  # each breaks one test
            text = GOOD.replace("xs[:n]", f"xs[:n] if n != {broken} else []")
            await gate.before_change(["mod.py"], workspace)
            (root / "mod.py").write_text(text)
            outcome = await verdict(gate, workspace, "mod.py")
            assert outcome.unverified is None, outcome.unverified
            blocked.append([b.message for b in outcome.blockers])
    finally:
        await gate.close()
    assert blocked == [
        ["tests/test_mod.py::test_first_one failed: assert [] == [1]"],
        ["tests/test_mod.py::test_first_two failed: assert [] == [1, 2]"],
    ]


async def test_a_data_file_a_command_changed_is_judged_against_its_earlier_text(
    tmp_path: Path,
) -> None:
    """A CSV the tests read, changed by a command (``sed -i``): its text
    before was not kept (only Python and configuration suffixes were), so
    the test it broke "failed before the run too" as far as the gate
    knew, and the verdict was unverified."""
    load = (
        "from pathlib import Path\n\n\ndef load():\n"
        "    rows = Path(__file__).with_name('data.csv').read_text().splitlines()\n"
        "    return dict(r.split(',') for r in rows)\n"
    )
    tests = "from mod import load\n\n\ndef test_b():\n    assert load()['b'] == '2'\n"
    files = {"mod.py": load, "data.csv": "a,1\nb,2\n", "tests/test_mod.py": tests}
    root = project(tmp_path / "proj", files)
    workspace = DiskWorkspace(root)
    gate = gate_for(root)
    try:
        await gate.before_change([], workspace)  # a command about to run
        (root / "data.csv").write_text("a,1\nb,3\n")
        outcome = await verdict(gate, workspace, "data.csv")
    finally:
        await gate.close()
    assert outcome.unverified is None, outcome.unverified
    assert [b.message for b in outcome.blockers] == [
        "tests/test_mod.py::test_b failed: AssertionError: assert '3' == '2'"
    ]


async def test_a_module_a_package_s_init_imports_is_between_the_change_and_its_tests(
    tmp_path: Path,
) -> None:
    """``from pkg.registry import get`` runs ``pkg/__init__.py``, which
    imports ``pkg/plugin.py``, whose module-level call fills the registry
    with what the change computes: that call is a hook (the test files
    run whole), though the graph has no edge from the package to the test
    (which imports ``pkg/registry.py`` alone)."""
    files = {
        "mod.py": GOOD,
        "pkg/__init__.py": "from . import plugin\n",
        "pkg/registry.py": (
            "TABLE = {}\n\n\ndef register(key, value):\n    TABLE[key] = value\n\n\n"
            "def get(key):\n    return TABLE[key]\n"
        ),
        "pkg/plugin.py": (
            "from mod import first_n\nfrom pkg.registry import register\n\n"
            "register('two', first_n([1, 2, 3], 2))\n"
        ),
        "tests/test_two.py": (
            "from mod import first_n\nfrom pkg.registry import get\n\n\n"
            "def test_two():\n    assert get('two') == [1, 2]\n\n\n"
            "def test_direct():\n    assert first_n([1], 5) == [1]\n"
        ),
    }
    root = project(tmp_path / "proj", files)
    outcome = await verdict_on(root, "mod.py", BAD)
    assert [b.message for b in outcome.blockers] == [
        "tests/test_two.py::test_two failed: assert [1, 2, 3] == [1, 2]"
    ]


#: ``table()`` is cached and calls ``_build`` through a module-level
#: table: filled where it is written, or by a registering decorator.
BY_TABLE = (
    "import functools\n\n\ndef _build():\n    return {'a': 1, 'b': 2}\n\n\n"
    "BUILDERS = {'t': _build}\n\n\n"
    "@functools.cache\ndef table():\n    return BUILDERS['t']()\n"
)
BY_REGISTRY = (
    "import functools\n\nREGISTRY = {}\n\n\n"
    "def register(f):\n    REGISTRY[f.__name__] = f\n    return f\n\n\n"
    "@register\ndef _build():\n    return {'a': 1, 'b': 2}\n\n\n"
    "@functools.cache\ndef table():\n    return REGISTRY['_build']()\n"
)


@pytest.mark.parametrize("mod", [BY_TABLE, BY_REGISTRY], ids=["table", "registry"])
async def test_a_cached_function_calling_through_a_module_table_reaches_what_it_names(
    tmp_path: Path, mod: str
) -> None:
    """review23 F5: ``table()`` names only ``BUILDERS`` (or ``REGISTRY``);
    with ``_build`` changed, coverage ran only ``test_a`` (it filled the
    cache) and passed with ``test_b`` broken."""
    tests = (
        "from mod import table\n\n\n"
        "def test_a():\n    assert table()['a'] == 1\n\n\n"
        "def test_b():\n    assert table()['b'] == 2\n"
    )
    root = project(tmp_path / "proj", {"mod.py": mod, "tests/test_mod.py": tests})
    workspace = DiskWorkspace(root)
    gate = gate_for(root)
    recorded = mod.replace("'a': 1", "'a': 1 + 0")
    try:
        for text in (recorded, recorded.replace("'b': 2", "'b': 3")):
            await gate.before_change(["mod.py"], workspace)
            (root / "mod.py").write_text(text)
            outcome = await verdict(gate, workspace, "mod.py")
            gate.on_validated(2)
    finally:
        await gate.close()
    assert [b.message.split(" failed:")[0] for b in outcome.blockers] == [
        "tests/test_mod.py::test_b"
    ]
