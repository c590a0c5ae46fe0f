"""The recording plugin in a real pytest run: what each test ran, and
what an import ran (shared, even when a test imports lazily)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rein.process.environment import child_environment
from rein.testgate.coverage_index import CoverageChoice, CoverageIndex
from rein.testgate.recorder import (
    COVERAGE_ENV,
    COVERAGE_PLUGIN,
    PARTIAL,
    UNTRACED_ENV,
    RawCoverage,
    read_coverage,
    write_plugin,
)
from tests.testgate.projects import project

#: Why a test whose Python child left no record is opaque.
NO_RECORD = "a Python child it started left no record (killed, still running, untraced)"

FILES = {
    "reg.py": "KINDS = {}\n\n\ndef register(name):\n    KINDS[name] = len(KINDS)\n",
    "late.py": "from reg import register\n\nregister('late')\n\n\ndef use():\n    return 1\n",
    "tests/test_r.py": (
        "def test_imports_late():\n    import late\n    assert late.use() == 1\n\n\n"
        "def test_reads_registry():\n    from reg import KINDS\n    assert 'late' in KINDS\n"
    ),
    # A helper named like a test file, with no test (Markdown's test_tools.py).
    "tests/test_tools.py": "def helper():\n    return 1\n",
    # What a record cannot see: each of these is opaque.
    "tests/test_o.py": (
        "import inspect, os, subprocess, sys, threading\nimport reg\n\n\n"
        # A Python child records what it ran; one that leaves no record cannot.
        "def test_child():\n"
        "    subprocess.run([sys.executable, '-c', 'import os; os._exit(0)'], check=True)\n\n\n"
        "def test_fork():\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n\n\n"
        "def test_thread():\n    t = threading.Thread(target=reg.register, args=('t',))\n"
        "    t.start()\n    t.join()\n\n\n"
        "def test_source():\n    assert 'KINDS' in inspect.getsource(reg.register)\n\n\n"
        "def test_open():\n    with open(reg.__file__) as f:\n        assert 'KINDS' in f.read()\n"
    ),
}


def record_of(
    tmp_path: Path,
    files: dict[str, str],
    untraced: tuple[str, ...] = (),
    args: tuple[str, ...] = ("tests",),
) -> RawCoverage:
    """The record of a real pytest run of a project of ``files``, the
    ``untraced`` tests run without the tracer."""
    root = project(tmp_path / "proj", files)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    write_plugin(plugins)
    out = tmp_path / "coverage.json"
    # The environment the gate gives its pytest (under the suite's own
    # pytest-xdist, the inherited worker's variables made the project's
    # pytest skip the tracer's early start).
    env = child_environment({COVERAGE_ENV: str(out), "PYTHONPATH": f"{plugins}:{root}"})
    if untraced:
        names = tmp_path / "untraced.txt"
        names.write_text("".join(f"{n}\n" for n in untraced), encoding="utf-8")
        env[UNTRACED_ENV] = str(names)
    argv = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", COVERAGE_PLUGIN, *args]
    done = subprocess.run([sys.executable, *argv], cwd=root, env=env, capture_output=True)
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    raw = read_coverage(out)
    assert raw is not None
    return raw


def test_a_run_records_each_test_and_what_imports_ran(tmp_path: Path) -> None:
    raw = record_of(tmp_path, FILES)
    late, reads = "tests/test_r.py::test_imports_late", "tests/test_r.py::test_reads_registry"
    assert raw.collected["tests/test_r.py"] == (late, reads)
    assert raw.collected["tests/test_tools.py"] == ()  # known to hold no test
    # The test's own function and the module function it called; not
    # register, which late.py's import ran: shared, as at collection.
    assert raw.tests[late] == {("tests/test_r.py", 1), ("late.py", 6)}
    assert ("reg.py", 4) in raw.shared
    assert raw.tests[reads] == {("tests/test_r.py", 6)}
    assert {"reg.py", "late.py", "tests/test_r.py"} <= set(raw.files)
    # And the lines each ran of each function (in the file as it ran; a
    # call's first line with them).
    assert raw.test_lines[late] == {
        ("tests/test_r.py", 1): frozenset({1, 2, 3}),
        ("late.py", 6): frozenset({6, 7}),
    }
    assert raw.test_lines[reads] == {("tests/test_r.py", 6): frozenset({6, 7, 8})}
    assert raw.shared_lines[("reg.py", 4)] == frozenset({4, 5})
    # A child process, a thread: opaque, and only those; a read of source
    # text: the file read (pytest reading the files, at collection, counts
    # for nothing).
    assert raw.opaque == {
        "tests/test_o.py::test_child": NO_RECORD,
        "tests/test_o.py::test_fork": "it starts a child process",
        "tests/test_o.py::test_thread": "it starts a thread",
    }
    assert raw.reads == {
        "tests/test_o.py::test_source": ("reg.py",),
        "tests/test_o.py::test_open": ("reg.py",),
    }


def test_a_child_a_wider_fixture_starts_makes_every_test_opaque(tmp_path: Path) -> None:
    # A Python child too: its record would be no test's.
    conftest = (
        "import subprocess, sys\nimport pytest\n\n\n@pytest.fixture(scope='session')\n"
        "def server():\n    return subprocess.run([sys.executable, '-c', 'pass']).returncode\n"
    )
    tests = "def test_uses(server):\n    assert server == 0\n\n\ndef test_plain():\n    pass\n"
    raw = record_of(tmp_path, {"tests/conftest.py": conftest, "tests/test_s.py": tests})
    why = "it starts a child process (outside the tests)"
    assert raw.opaque == {"tests/test_s.py::test_uses": why, "tests/test_s.py::test_plain": why}


#: Children a test starts: only those that may run the workspace's code
#: (or read its files) make it opaque.
CHILDREN = (
    "import os, subprocess, sys\n\n\n"
    "def test_pager():\n"  # click's echo_via_pager with PAGER=cat
    "    pager = subprocess.Popen('cat', shell=True, stdin=subprocess.PIPE,\n"
    "                             stdout=subprocess.DEVNULL)\n"
    "    pager.communicate(b'text')\n"
    "    assert os.system('cat </dev/null') == 0\n\n\n"
    "def test_editor(tmp_path):\n"  # click's test_fast_edit
    "    file = tmp_path / 'edit.txt'\n    file.write_text('a\\n')\n"
    '    subprocess.run(f"sed -i~ \'s/$/Test/\' \\"{file}\\"", shell=True, check=True)\n'
    "    assert file.read_text() == 'aTest\\n'\n\n\n"
    # A Python interpreter itself: judged by its own record (test_python_children.py).
    "def test_python():\n    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n\n\n"
    "def test_shell_python():\n"
    "    subprocess.run('python3 -c pass 2>/dev/null || true', shell=True, check=True)\n\n\n"
    "def test_in_the_workspace():\n"  # reads the workspace's files unnamed
    "    subprocess.run(['ls'], check=True, stdout=subprocess.DEVNULL)\n\n\n"
    # review23 F1: the shell's script comes from standard input
    "def test_shell_stdin():\n"
    "    subprocess.run(['sh'], input='true', text=True, check=True)\n\n\n"
    # review23 F2: make's recipe, git's hook run what the test wrote
    "def test_make(tmp_path):\n"
    "    (tmp_path / 'Makefile').write_text('check:\\n\\ttrue\\n')\n"
    "    subprocess.run(['make', '-s', 'check'], cwd=tmp_path, check=True)\n\n\n"
    "def test_git_hook(tmp_path):\n"
    "    subprocess.run(['git', 'init', '-q', str(tmp_path)], check=True)\n"
    "    hook = tmp_path / '.git' / 'hooks' / 'pre-commit'\n"
    "    hook.write_text('#!/bin/sh\\ntrue\\n')\n    hook.chmod(0o755)\n"
    "    subprocess.run(['git', '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q',\n"
    "                    '--allow-empty', '-m', 'x'], cwd=tmp_path, check=True)\n"
)


def test_a_pager_or_an_editor_child_leaves_a_test_judged_by_its_record(tmp_path: Path) -> None:
    """click 8.1.7: its 15 ``echo_via_pager`` tests (``cat`` as the pager)
    and ``test_fast_edit`` (``sed -i``) were opaque, run at every verdict
    selecting their files, though neither child can run Python. A shell
    reading standard input, ``make`` and ``git`` (a hook) run what the
    test wrote: opaque wherever they start (review23 F1, F2)."""
    raw = record_of(tmp_path, {"tests/test_c.py": CHILDREN})
    why = "it starts a child process"
    assert raw.opaque == {
        "tests/test_c.py::test_shell_python": why,
        "tests/test_c.py::test_in_the_workspace": why,
        "tests/test_c.py::test_shell_stdin": why,
        "tests/test_c.py::test_make": why,
        "tests/test_c.py::test_git_hook": why,
    }


def test_untraced_tests_are_not_recorded_but_what_they_share_is(tmp_path: Path) -> None:
    # The registry late.py fills at import, imported by an untraced test,
    # serves a traced one: what that import ran is shared all the same;
    # a session fixture first set up in an untraced test is traced too.
    conftest = (
        "import pytest\nimport reg\n\n\ndef _fill():\n    reg.KINDS['fixture'] = 0\n\n\n"
        "@pytest.fixture(scope='session')\ndef filled():\n    _fill()\n    return reg.KINDS\n"
    )
    tests = "def test_uses(filled):\n    assert 'fixture' in filled\n"
    files = {**FILES, "tests/conftest.py": conftest, "tests/test_s.py": tests}
    late, reads = "tests/test_r.py::test_imports_late", "tests/test_r.py::test_reads_registry"
    untraced = (
        late,
        "tests/test_o.py::test_child",
        "tests/test_o.py::test_source",
        "tests/test_o.py::test_fork",
        "tests/test_s.py::test_uses",
    )
    raw = record_of(tmp_path, files, untraced)
    assert sorted(raw.tests) == [
        "tests/test_o.py::test_open",
        "tests/test_o.py::test_thread",
        reads,
    ]
    # Every test is still known, the untraced ones too.
    assert raw.collected["tests/test_r.py"] == (late, reads)
    assert raw.collected["tests/test_s.py"] == ("tests/test_s.py::test_uses",)
    assert ("reg.py", 4) in raw.shared  # late.py's import ran register
    assert ("tests/conftest.py", 5) in raw.shared  # the fixture's helper
    assert raw.tests[reads] == {("tests/test_r.py", 6)}
    # What an untraced test does is in its earlier record, not this one:
    # its child process makes no other test opaque.
    assert raw.opaque == {"tests/test_o.py::test_thread": "it starts a thread"}
    assert raw.reads == {"tests/test_o.py::test_open": ("reg.py",)}


def test_a_child_a_wider_fixture_starts_in_an_untraced_test_makes_every_test_opaque(
    tmp_path: Path,
) -> None:
    conftest = (
        "import subprocess, sys\nimport pytest\n\n\n@pytest.fixture(scope='session')\n"
        "def server():\n    return subprocess.run([sys.executable, '-c', 'pass']).returncode\n"
    )
    tests = "def test_uses(server):\n    assert server == 0\n\n\ndef test_plain():\n    pass\n"
    files = {"tests/conftest.py": conftest, "tests/test_s.py": tests}
    raw = record_of(tmp_path, files, ("tests/test_s.py::test_uses",))
    why = "it starts a child process (outside the tests)"
    assert raw.opaque == {"tests/test_s.py::test_plain": why}


WORK = (
    "from concurrent.futures import ThreadPoolExecutor\n\nPOOL = []\n\n\n"
    "def noop():\n    return 0\n\n\ndef job():\n    return 1\n\n\n"
    "def submit(fn):\n    if not POOL:\n        POOL.append(ThreadPoolExecutor(1))\n"
    "    return POOL[0].submit(fn).result()\n"
)


def test_a_thread_an_untraced_test_starts_is_traced_for_a_later_test(tmp_path: Path) -> None:
    # The executor is made on first use, in the untraced test_1: the job
    # test_2 runs in its thread is still test_2's.
    files = {
        "pkg/__init__.py": "",
        "pkg/work.py": WORK,
        "tests/test_a.py": "from pkg import work\n\n\ndef test_1():\n    assert work.submit(work.noop) == 0\n",
        "tests/test_b.py": "from pkg import work\n\n\ndef test_2():\n    assert work.submit(work.job) == 1\n",
    }
    raw = record_of(tmp_path, files, ("tests/test_a.py::test_1",))
    assert sorted(raw.tests) == ["tests/test_b.py::test_2"]
    assert ("pkg/work.py", 10) in raw.tests["tests/test_b.py::test_2"]


def test_a_wider_fixture_torn_down_in_an_untraced_test_is_shared(tmp_path: Path) -> None:
    # Torn down at an untraced test's end, set up in a traced one (res) or
    # in an untraced one (other): the helper its teardown calls is still
    # seen (shared, as its setup).
    conftest = (
        "import pytest\n\n\ndef _close():\n    return 0\n\n\ndef _end():\n    return 0\n\n\n"
        "@pytest.fixture(scope='module')\ndef res():\n    yield 1\n    _close()\n\n\n"
        "@pytest.fixture(scope='module')\ndef other():\n    yield 1\n    _end()\n"
    )
    tests = "def test_1(res):\n    assert res\n\n\ndef test_2(res):\n    assert res\n"
    files = {
        "tests/conftest.py": conftest,
        "tests/test_m.py": tests,
        "tests/test_n.py": "def test_3(other):\n    assert other\n",
    }
    raw = record_of(tmp_path, files, ("tests/test_m.py::test_2", "tests/test_n.py::test_3"))
    assert sorted(raw.tests) == ["tests/test_m.py::test_1"]
    assert {("tests/conftest.py", 4), ("tests/conftest.py", 8)} <= raw.shared
    assert ("tests/conftest.py", 4) not in raw.tests["tests/test_m.py::test_1"]


LIB = "def make():\n    return 1\n\n\ndef other():\n    return 2\n"
IMPORTS = {
    "lib.py": LIB,
    # Its import (pytest's collection of it) runs make: its tests need it.
    "tests/test_a.py": "import lib\n\nVALUE = lib.make()\n\n\ndef test_a():\n    assert VALUE\n",
    "tests/test_b.py": "import lib\n\n\ndef test_b():\n    assert lib.other() == 2\n",
    # A conftest.py's import is every test's.
    "tests/conftest.py": "import lib\n\nlib.other()\n",
}


def _choose(tmp_path: Path, files: dict[str, str], new_lib: str) -> CoverageChoice:
    raw = record_of(tmp_path, files)
    index = CoverageIndex()
    index.add(raw, files.get)
    test_files = sorted(f for f in files if f.startswith("tests/test_"))
    return index.choose({"lib.py": (LIB, new_lib)}, test_files, files.get)


def test_what_a_test_files_import_ran_in_another_module_is_every_tests(
    tmp_path: Path,
) -> None:
    # The recorder keeps a test file's import apart; the index counts what
    # it ran in another module as shared: a cache it fills or ids it makes
    # serve the other files' tests (review14a: lib's make changed ran only
    # test_a's tests; tests/testgate/test_import_state.py).
    raw = record_of(tmp_path / "a", IMPORTS)
    assert raw.imports["tests/test_a.py"] == {("lib.py", 1)}
    assert raw.import_lines["tests/test_a.py"] == {("lib.py", 1): frozenset({1, 2})}
    assert ("lib.py", 1) not in raw.shared
    assert ("lib.py", 5) in raw.shared  # the conftest.py's
    assert raw.shared_lines[("lib.py", 5)] == frozenset({5, 6})
    for folder, new_lib, name in (("b", "return 1", "make"), ("c", "return 2", "other")):
        choice = _choose(tmp_path / folder, IMPORTS, LIB.replace(new_lib, "return 3"))
        assert choice.undecided == {
            "lib.py": f"lib.py: {name} ran outside the tests (at import, or in a fixture "
            "of a wider scope)"
        }


def test_a_test_file_another_module_imports_shares_its_import(tmp_path: Path) -> None:
    # test_c uses what test_a's import made: make's change may reach it.
    files = {
        **IMPORTS,
        "tests/test_c.py": "from test_a import VALUE\n\n\ndef test_c():\n    assert VALUE\n",
    }
    raw = record_of(tmp_path / "a", files)
    assert "tests/test_a.py" in raw.imports  # the plugin keeps it apart; the index does not
    choice = _choose(tmp_path / "b", files, LIB.replace("return 1", "return 3"))
    assert "lib.py" in choice.undecided
    assert "make ran outside the tests" in choice.undecided["lib.py"]


def test_a_module_collected_for_its_doctests_shares_its_import(tmp_path: Path) -> None:
    # pytest imports dmod.py for its doctest first; the tests use what its
    # import made (it is the project's module, not a test file's own).
    files = {
        "lib.py": LIB,
        "dmod.py": 'import lib\n\nVALUE = lib.make()\n\n\ndef f():\n    """\n    >>> VALUE\n    1\n    """\n',
        "tests/test_d.py": "import dmod\n\n\ndef test_d():\n    assert dmod.VALUE == 1\n",
    }
    raw = record_of(tmp_path, files, args=("--doctest-modules", "dmod.py", "tests"))
    assert "dmod.py::dmod.f" in raw.collected["dmod.py"]
    assert "dmod.py" not in raw.imports
    assert ("lib.py", 1) in raw.shared


def test_a_generator_resumed_in_another_test_records_the_line_it_resumes_on(
    tmp_path: Path,
) -> None:
    """review32 (LOW): test_b resumes, mid-line, a generator test_a started;
    CPython 3.11 gives no line event for the rest of that line, so test_b's
    record missed line 5 and a change there left it out."""
    files = {
        "mod.py": "OUT = []\n\n\ndef g():\n    OUT.append((yield) + 1)\n    yield 'done'\n",
        "tests/test_g.py": (
            "import mod\n\nGEN = mod.g()\n\n\n"
            "def test_a():\n    next(GEN)\n\n\n"
            "def test_b():\n    assert GEN.send(1) == 'done'\n    assert mod.OUT == [2]\n"
        ),
    }
    raw = record_of(tmp_path, files)
    assert 5 in raw.test_lines["tests/test_g.py::test_b"][("mod.py", 4)]


def test_a_hot_function_or_loop_is_traced_by_line_no_more_and_says_so(tmp_path: Path) -> None:
    """more-itertools: a seed made ``sieve`` resume a generator millions of
    times; traced by line at every resume, the run took 40 s where the call
    tracer alone took 19 s (untraced 3 s), past the gate's time limit. Past
    20,000 calls a function, past 100,000 lines a frame, is traced by line
    no more, and its line sets say they are partial (:data:`PARTIAL`); so
    is a function one test calls more than 200 times (attrs's hypothesis
    tests: its whole suite recorded took 26 s, against 20 s with the call
    tracer alone and 10 s untraced)."""
    files = {
        "mod.py": (
            "def one(x):\n    return x + 1\n\n\n"
            "def loop(n):\n    total = 0\n    for i in range(n):\n        total += i\n"
            "    return total\n"
        ),
        "tests/test_hot.py": (
            "import mod\n\n\n"
            "def test_calls():\n    assert sum(mod.one(i) for i in range(25000))\n\n\n"
            "def test_loop():\n    assert mod.loop(60000)\n\n\n"
            "def test_cold():\n    assert mod.loop(3) == 3\n"
        ),
    }
    raw = record_of(tmp_path, files)
    assert PARTIAL in raw.test_lines["tests/test_hot.py::test_calls"][("mod.py", 1)]
    assert PARTIAL in raw.test_lines["tests/test_hot.py::test_loop"][("mod.py", 5)]
    # A cold test's lines of the loop: all known (a frame of its own,
    # called once there).
    assert raw.test_lines["tests/test_hot.py::test_cold"][("mod.py", 5)] == frozenset(
        {5, 6, 7, 8, 9}
    )
