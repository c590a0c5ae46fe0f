"""A Python child a recorded test starts records what it ran
(:mod:`rein.testgate.child_tracer`): its test is judged by both records,
not run at every verdict (click's ``test_light_imports``); a child that
leaves no record, or escapes its own tracer, leaves its test opaque."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rein.testgate.coverage_index import CoverageIndex
from rein.testgate.recorder import PARTIAL, write_plugin
from tests.testgate.test_recorder import NO_RECORD, record_of

LIB = (
    "def used(n):\n"  # 1
    "    if n > 1:\n"
    "        return n * 2\n"
    "    return n\n"  # 4
    "\n\n"
    "def unused():\n"  # 7
    "    return 0\n"
    "\n\n"
    "def spawns():\n"  # 11
    "    import subprocess, sys\n"
    "    subprocess.run([sys.executable, '-c', 'import lib; lib.unused()'], check=True)\n"
)
#: A __del__ that runs the workspace's code at the child's shutdown.
LATE = "from lib import used\n\n\nclass Late:\n    def __del__(self):\n        used(2)\n"

#: The test file imports nothing of lib: only its children run it.
KIDS = (
    "import subprocess, sys\n\n\n"
    "def test_child():\n"
    "    subprocess.run([sys.executable, '-c', 'import lib; lib.used(2)'], check=True)\n\n\n"
    # click's test_light_imports: the script on standard input.
    "def test_stdin():\n"
    "    subprocess.run([sys.executable, '-'], input=b'import lib; lib.used(1)', check=True)\n\n\n"
    "def test_grandchild():\n"
    "    subprocess.run([sys.executable, '-c', 'import lib; lib.spawns()'], check=True)\n\n\n"
    "def test_reads():\n"
    "    subprocess.run([sys.executable, '-c', 'open(\"lib.py\").read()'], check=True)\n\n\n"
    # Threads of the child, threading's and _thread's: traced.
    "def test_threads():\n"
    "    script = ('import threading, lib\\nt = threading.Thread(target=lib.used, args=(2,))\\n'\n"
    "              't.start()\\nt.join()\\n')\n"
    "    subprocess.run([sys.executable, '-c', script], check=True)\n\n\n"
    "def test_bare_thread():\n"
    "    script = ('import _thread, lib\\ndone = _thread.allocate_lock()\\ndone.acquire()\\n'\n"
    "              'def run():\\n    lib.used(1)\\n    done.release()\\n'\n"
    "              '_thread.start_new_thread(run, ())\\ndone.acquire()\\n')\n"
    "    subprocess.run([sys.executable, '-c', script], check=True)\n\n\n"
    # The workspace's module through a link, from another folder.
    "def test_link(tmp_path):\n"
    "    import os\n"
    "    os.symlink(os.path.abspath('lib.py'), tmp_path / 'lib.py')\n"
    "    subprocess.run([sys.executable, '-c', 'import lib; lib.used(2)'], cwd=tmp_path,\n"
    "                   check=True)\n\n\n"
    # Called past the bound: its lines not all known.
    "def test_hot():\n"
    "    script = 'import lib\\nfor i in range(300): lib.used(i)'\n"
    "    subprocess.run([sys.executable, '-c', script], check=True)\n"
)


def test_a_python_childs_record_is_its_tests(tmp_path: Path) -> None:
    raw = record_of(tmp_path, {"lib.py": LIB, "tests/test_k.py": KIDS})
    child, stdin, grand, reads, threads, bare, link, hot = (
        f"tests/test_k.py::test_{n}"
        for n in ("child", "stdin", "grandchild", "reads", "threads", "bare_thread", "link", "hot")
    )
    assert raw.opaque == {}
    # What the child ran is the test's, by line; the test file's own
    # function too. The parent never imported lib: the child did.
    assert raw.tests[child] == {("tests/test_k.py", 4), ("lib.py", 1)}
    assert raw.test_lines[child][("lib.py", 1)] == frozenset({1, 2, 3})
    assert raw.test_lines[stdin][("lib.py", 1)] == frozenset({1, 2, 4})
    assert "lib.py" in raw.files
    # A child's Python child: its record joins too.
    assert {("lib.py", 11), ("lib.py", 7)} <= raw.tests[grand]
    assert ("lib.py", 1) not in raw.tests[grand]
    # A child reading the workspace's source (its script is the test's code).
    assert raw.reads == {reads: ("lib.py",)}
    # A thread of the child's, started either way; lib.py through a link.
    assert raw.test_lines[threads][("lib.py", 1)] == frozenset({1, 2, 3})
    assert raw.test_lines[bare][("lib.py", 1)] == frozenset({1, 2, 4})
    assert raw.test_lines[link][("lib.py", 1)] == frozenset({1, 2, 3})
    # Past 200 calls, the lines of a function are not all known.
    assert PARTIAL in raw.test_lines[hot][("lib.py", 1)]


def test_a_childs_function_changed_selects_its_test_and_no_other(tmp_path: Path) -> None:
    files = {"lib.py": LIB, "tests/test_k.py": KIDS}
    raw = record_of(tmp_path, files)
    index = CoverageIndex()
    index.add(raw, files.get)
    tests = ["tests/test_k.py"]

    def chosen(new_lib: str) -> set[str]:
        choice = index.choose({"lib.py": (LIB, new_lib)}, tests, files.get)
        assert choice.undecided == {}
        return set(choice.selected["tests/test_k.py"])

    # test_reads read lib.py's text: any change of it selects it.
    reads = "tests/test_k.py::test_reads"
    # used(2) ran line 3, used(1) line 4; test_hot's lines are not all known.
    two = {f"tests/test_k.py::test_{n}" for n in ("child", "threads", "link", "hot")}
    one = {f"tests/test_k.py::test_{n}" for n in ("stdin", "bare_thread", "hot")}
    assert chosen(LIB.replace("n * 2", "n * 3")) == {*two, reads}
    assert chosen(LIB.replace("return n\n", "return -n\n")) == {*one, reads}
    # unused ran in the grandchild only.
    assert chosen(LIB.replace("return 0", "return 9")) == {
        "tests/test_k.py::test_grandchild",
        reads,
    }


#: Children whose record is missing or says they escaped.
ESCAPES = (
    "import os, subprocess, sys\n\n"
    "RUNNING = []\n\n\n"
    "def test_isolated():\n"  # -I: no PYTHONPATH, so no tracer
    "    subprocess.run([sys.executable, '-I', '-c', 'pass'], check=True)\n\n\n"
    "def test_bare_environment():\n"
    "    subprocess.run([sys.executable, '-c', 'pass'], env={'PATH': os.environ['PATH']},\n"
    "                   check=True)\n\n\n"
    "def test_killed():\n"
    "    subprocess.run([sys.executable, '-c', 'import os; os._exit(0)'], check=True)\n\n\n"
    "def test_leaves_it_running():\n"  # waits on its standard input
    "    RUNNING.append(subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdin.read()'],\n"
    "                                    stdin=subprocess.PIPE))\n\n\n"
    "def test_ends_it():\n"  # the record written now is not this test's
    "    RUNNING[0].communicate(b'')\n\n\n"
    "def test_shell():\n"  # the child's own child, not Python
    "    subprocess.run([sys.executable, '-c', 'import os; os.system(\"ls >/dev/null\")'],\n"
    "                   check=True)\n\n\n"
    "def test_fork():\n"
    "    script = 'import os\\npid = os.fork()\\nif pid == 0: os._exit(0)\\nos.waitpid(pid, 0)'\n"
    "    subprocess.run([sys.executable, '-c', script], check=True)\n\n\n"
    "def test_replaced():\n"  # a tracer of its own (a debugger, coverage)
    "    subprocess.run([sys.executable, '-c', 'import sys; sys.settrace(None)'], check=True)\n\n\n"
    "def test_swapped_back():\n"  # set back before the end: still not known
    "    script = 'import sys\\nt = sys.gettrace()\\nsys.settrace(None)\\nsys.settrace(t)'\n"
    "    subprocess.run([sys.executable, '-c', script], check=True)\n\n\n"
    "def test_exec():\n"  # the first image's record is never written
    '    script = \'import os, sys\\nos.execv(sys.executable, [sys.executable, "-c", "pass"])\'\n'
    "    subprocess.run([sys.executable, '-c', script], check=True)\n\n\n"
    "def test_exec_unseen():\n"  # past the hook (posix's own): the next image tells
    '    script = \'import posix, sys\\nposix.execv(sys.executable, [sys.executable, "-c", "pass"])\'\n'
    "    subprocess.run([sys.executable, '-c', script], check=True)\n\n\n"
    "def test_at_shutdown():\n"  # a __del__ runs the workspace's code after the record
    "    subprocess.run([sys.executable, '-c', 'import late; kept = late.Late()'], check=True)\n\n\n"
    # A record with the child's pid (the child, -I, writes none): older
    # than its start, or another parent's, is another process's.
    "def _plant(started, parent):\n"
    "    import json, time\n"
    "    child = subprocess.Popen([sys.executable, '-I', '-c', 'pass'])\n"
    "    child.wait()\n"
    "    record = {'started': time.monotonic() + started, 'parent': parent or os.getpid(),\n"
    "              'rows': [], 'files': [], 'reads': [], 'opaque': None, 'children': []}\n"
    "    folder = os.environ['REIN_TESTS_CHILDREN']\n"
    "    with open(os.path.join(folder, '%d.json' % child.pid), 'w') as out:\n"
    "        json.dump(record, out)\n\n\n"
    "def test_stale_record():\n    _plant(-3600, 0)\n\n\n"
    "def test_other_parents_record():\n    _plant(0, 1)\n\n\n"
    "def test_its_record():\n    _plant(0, 0)\n"
)


def test_a_child_that_leaves_no_record_or_escapes_leaves_its_test_opaque(
    tmp_path: Path,
) -> None:
    raw = record_of(tmp_path, {"lib.py": LIB, "late.py": LATE, "tests/test_e.py": ESCAPES})
    child = "it starts a child process"
    replaced = "its Python child's tracer was replaced"
    execs = "it execs another program"
    # test_its_record (the same record as the two before, its own) is not.
    assert raw.opaque == {
        "tests/test_e.py::test_isolated": NO_RECORD,
        "tests/test_e.py::test_bare_environment": NO_RECORD,
        "tests/test_e.py::test_killed": NO_RECORD,
        "tests/test_e.py::test_leaves_it_running": NO_RECORD,
        "tests/test_e.py::test_shell": child,
        "tests/test_e.py::test_fork": child,
        "tests/test_e.py::test_replaced": replaced,
        "tests/test_e.py::test_swapped_back": replaced,
        "tests/test_e.py::test_exec": execs,
        "tests/test_e.py::test_exec_unseen": execs,
        "tests/test_e.py::test_at_shutdown": NO_RECORD,
        "tests/test_e.py::test_stale_record": NO_RECORD,
        "tests/test_e.py::test_other_parents_record": NO_RECORD,
    }


def test_the_sitecustomize_it_hides_still_runs(tmp_path: Path) -> None:
    """The tracer is a ``sitecustomize`` on ``PYTHONPATH``: the system's
    or a project's, later on the path, runs after it, recording or not."""
    tests = (
        "import subprocess, sys\n\n\n"
        "def test_mark():\n"
        "    done = subprocess.run([sys.executable, '-c',\n"
        "                           'import sitecustomize; print(sitecustomize.MARK)'],\n"
        "                          capture_output=True, text=True, check=True)\n"
        "    assert done.stdout == 'the project\\n'\n"
    )
    raw = record_of(
        tmp_path, {"sitecustomize.py": "MARK = 'the project'\n", "tests/test_m.py": tests}
    )
    assert raw.opaque == {}  # recorded: the child's tracer ran, then the project's
    project = tmp_path / "proj"
    plugins = tmp_path / "bare"
    plugins.mkdir()
    write_plugin(plugins)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": f"{plugins}:{project}"}
    done = subprocess.run(
        [sys.executable, "-c", "import sitecustomize; print(sitecustomize.MARK)"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert done.stdout == "the project\n"
