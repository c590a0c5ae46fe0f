"""Selection by coverage over a real warm pytest: a later run's verdict
runs only the tests that ran the changed function, in the test's process
or in a Python child it started (the child records what it ran), and
blocks on the bug there."""

from __future__ import annotations

from pathlib import Path

from rein.process.kept import KeptProcessLauncher
from rein.testgate.recorder import read_coverage
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, gate_for, project, verdict

#: Every test names ``run``: the names reach them all; only one runs ``_b``.
MOD = (
    "def _a(x):\n    return x + 1\n\n\n"
    "def _b(x):\n    return x * 2\n\n\n"
    "def _c(x):\n    return -x\n\n\n"
    "_KINDS = {'a': _a, 'b': _b, 'c': _c}\n\n\n"
    "def run(kind, x):\n    return _KINDS[kind](x)\n"
)
TESTS = (
    "import subprocess\nimport sys\n\nfrom mod import run\n\n\n"
    "def test_a():\n    assert run('a', 1) == 2\n\n\n"
    "def test_b():\n    assert run('b', 2) == 4\n\n\n"
    "def test_c():\n    assert run('c', 3) == -3\n\n\n"
    # Runs _b in a Python child: the child's record says so.
    "def test_child():\n    code = \"from mod import run; assert run('b', 2) == 4\"\n"
    "    subprocess.run([sys.executable, '-c', code], check=True)\n\n\n"
    # Runs _c in a Python child: its record leaves it out of _b's change.
    "def test_child_c():\n    code = \"from mod import run; assert run('c', 3) == -3\"\n"
    "    subprocess.run([sys.executable, '-c', code], check=True)\n\n\n"
    # A pager (click's echo_via_pager): no Python in it, its record says all.
    "def test_pager():\n    text = str(run('a', 1)).encode()\n"
    "    shown = subprocess.run('cat', shell=True, input=text, capture_output=True)\n"
    "    assert shown.stdout == b'2'\n"
)


async def test_a_later_verdict_runs_the_tests_that_ran_the_change_and_blocks(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj", {"mod.py": MOD, "tests/test_mod.py": TESTS})
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher())
    try:
        # A first run (a harmless change): no record yet, the names decide.
        harmless = MOD.replace("x + 1", "1 + x")
        await changed(gate, workspace, "mod.py", harmless)
        assert await gate.warm_ready(60)
        first = await verdict(gate, workspace, "mod.py")
        tree = gate.runs.trees["now"]
        gate.on_validated(2)
        # The next run seeds a bug in the function test_b alone runs.
        await changed(gate, workspace, "mod.py", harmless.replace("x * 2", "x * 3"))
        seeded = await verdict(gate, workspace, "mod.py")
        warm = set(gate.warm_runs)
        recorded = set(gate.timings)
        # The shadow tree (and the bytecode its runs wrote) outlives the run.
        kept = gate.runs.trees["now"] is tree and tree.root.is_dir()
    finally:
        await gate.close()

    assert (first.blockers, first.unverified) == ([], None)
    assert kept
    assert "not by coverage: no coverage record yet" in first.detail
    assert first.detail.startswith("6 of 6 tests passed")
    # test_b ran _b in the process; test_child ran it in a Python child,
    # whose record says so: it runs, and blocks too. test_child_c's child
    # never ran _b; test_pager's child (a pager) runs no Python: their
    # records, which never ran _b, leave them out.
    assert [b.message.split(" failed")[0] for b in seeded.blockers] == [
        "tests/test_mod.py::test_b",
        "tests/test_mod.py::test_child",
    ]
    assert "selected by coverage: 2 tests ran a changed function (mod.py:_b)" in seeded.detail
    assert "always:" not in seeded.detail
    assert "by imports: 0 tests" in seeded.detail
    assert seeded.detail.startswith("0 of 2 tests passed"), seeded.detail
    assert "first" in warm
    # A run chosen by coverage alone records nothing (the tracer's cost).
    assert "first_pytest" in recorded and "first_record" not in recorded


async def test_a_recording_run_traces_only_the_tests_no_record_has(tmp_path: Path) -> None:
    other = "def o():\n    return 1\n"
    files = {
        "mod.py": MOD,
        "other.py": other,
        # test_old's file reaches other.py (the first run records it), the
        # new file does not (the second run has no record of its tests).
        "tests/test_old.py": (
            "from mod import run\nfrom other import o\n\n\n"
            "def test_b():\n    assert run('b', o() + 1) == 4\n\n\n"
            "def test_o():\n    assert o() == 1\n"
        ),
        "tests/test_new.py": "from mod import run\n\n\ndef test_nb():\n    assert run('b', 1) == 2\n",
    }
    root = project(tmp_path / "proj", files)
    workspace = FakeWorkspace({"mod.py": MOD, "other.py": other}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher())
    try:
        await changed(gate, workspace, "other.py", other.replace("1", "0 + 1"))
        assert await gate.warm_ready(60)
        first = await verdict(gate, workspace, "other.py")
        gate.on_validated(2)
        (root / "other.py").write_text(other.replace("1", "0 + 1"))  # saved
        # _b: test_old::test_b by its record, test_new's tests by the names.
        await changed(gate, workspace, "mod.py", MOD.replace("x * 2", "x * 3"))
        second = await verdict(gate, workspace, "mod.py")
        tree = gate.runs.trees["now"].root  # the gate's own files are named after it
        record = read_coverage(tree.parent / f"{tree.name}.coverage.json")
        workspace.buffers["mod.py"] = (MOD, 3)  # the repair
        gate.on_validated(2)
        # test_old's tests as the first record lists them, test_nb's record
        # the second's: coverage decides both, and nothing records.
        await changed(gate, workspace, "mod.py", MOD.replace("x * 2", "x * 4"))
        third = await verdict(gate, workspace, "mod.py")
        third_phases = dict(gate.timings)
    finally:
        await gate.close()

    assert "not by coverage: no coverage record yet" in first.detail
    assert sorted(b.message.split(" failed")[0] for b in second.blockers) == [
        "tests/test_new.py::test_nb",
        "tests/test_old.py::test_b",
    ]
    assert "selected by coverage: 1 tests" in second.detail
    assert "by imports: 1 tests" in second.detail
    assert second.detail.startswith("0 of 2 tests passed"), second.detail
    # Only the test with no record ran under the tracer, and only the file
    # no record listed the tests of was collected whole (the new record
    # lists its tests; test_old.py's are the first record's).
    assert record is not None
    assert set(record.tests) == {"tests/test_new.py::test_nb"}
    assert record.collected == {"tests/test_new.py": ("tests/test_new.py::test_nb",)}
    assert sorted(b.message.split(" failed")[0] for b in third.blockers) == [
        "tests/test_new.py::test_nb",
        "tests/test_old.py::test_b",
    ]
    assert "selected by coverage: 2 tests ran a changed function (mod.py:_b)" in third.detail
    assert "by imports: 0 tests" in third.detail, third.detail
    assert "first_record" not in third_phases


async def test_a_record_superseded_while_a_seed_was_in_is_used_again_once_it_is_undone(
    tmp_path: Path,
) -> None:
    # click: a seed in Path.__init__ (run at a test file's import) voided
    # the record, and that verdict's run recorded every test again with the
    # seed in; once the repair undid it, that newer record was void, and the
    # older one, good again, had been dropped: six later verdicts by imports.
    mod = (
        "class Path:\n    def __init__(self, exists=False):\n        self.exists = exists\n\n\n"
        "def f(x):\n    return x + 1\n\n\n"
        "def g(x):\n    return x * 2\n"
    )
    tests = (
        "from mod import Path, f, g\n\nP = Path()\n\n\n"
        "def test_p():\n    assert P.exists is False\n\n\n"
        "def test_f():\n    assert f(1) == 2 and isinstance(P, Path)\n\n\n"
        "def test_g():\n    assert g(2) == 4 and isinstance(P, Path)\n"
    )
    root = project(tmp_path / "proj", {"mod.py": mod, "tests/test_mod.py": tests})
    workspace = FakeWorkspace({"mod.py": mod}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher())
    details: list[str] = []
    try:
        for seeded in (
            mod + "# a note\n",  # no code: the first record, of every test
            mod.replace("self.exists = exists", "self.exists = not exists"),  # outside the tests
            mod.replace("x * 2", "x * 3"),
        ):
            await changed(gate, workspace, "mod.py", seeded)
            assert await gate.warm_ready(60)
            outcome = await verdict(gate, workspace, "mod.py")
            details.append(outcome.detail)
            workspace.buffers["mod.py"] = (mod, 3)  # the repair
            assert (await verdict(gate, workspace, "mod.py")).blockers == []
            gate.on_validated(2)
    finally:
        await gate.close()

    assert "not by coverage: no coverage record yet" in details[0]
    assert "Path.__init__ ran outside the tests" in details[1]
    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_mod.py::test_g"
    ]
    assert "selected by coverage: 1 tests ran a changed function (mod.py:g)" in details[2]
    assert "by imports: 0 tests" in details[2], details[2]
