"""The first run over the cores (:mod:`rein.testgate.cores`): the selected
tests shared among forks of the kept pytest process give the verdict a
single fork gives (a blocker, a pre-existing failure, a flaky test), in
the gates' real sandbox; a test that passed only after its neighbour in
one process is not made a blocker by the split; an abort ends every fork;
one share's early end is never a pass (real pytest)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from rein.harness.config import TestsGateConfig
from rein.harness.gating.gate_types import GateOutcome
from rein.process.kept import KeptProcessLauncher
from rein.process.runner import SubprocessRunner
from rein.sandboxing.others import OtherCommandsSandbox
from rein.sandboxing.probe import sandbox_status
from rein.sandboxing.settings import SandboxSettings
from rein.testgate import cores
from rein.testgate.cores import Cores, Share
from rein.testgate.gate import TestGate
from rein.testgate.recorder import RawCoverage
from rein.testgate.runner import RunnerSpec, run_tests
from rein.testgate.shadow import build_shadow
from rein.testgate.warm import WarmPytest
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, process_ended, project, verdict

#: VALUE is 1 before the run, 2 after it.
MOD = "VALUE = 1\n"
#: Each test file's first test logs the file and its process.
WHERE = (
    "import os\nfrom pathlib import Path\n\nimport mod\n\n\n"
    "def test_where():\n"
    "    with open(os.environ['WHERE_LOG'], 'a') as log:\n"
    "        log.write(f'{__name__} {mod.VALUE} {os.getpid()}\\n')\n\n\n"
)
TESTS = {
    "tests/test_a.py": WHERE + "def test_blocker():\n    assert mod.VALUE == 1\n",
    "tests/test_b.py": WHERE + "def test_pre():\n    assert not mod.VALUE, 'before the run too'\n",
    "tests/test_c.py": WHERE
    + (
        "def test_flaky():\n"
        "    count = Path(os.environ['FLAKY_COUNT'])\n"
        "    n = int(count.read_text()) + 1 if count.exists() else 1\n"
        "    count.write_text(str(n))\n"
        "    assert n > 1 and mod.VALUE, 'first call'\n"
    ),
    "tests/test_d.py": WHERE + "def test_ok():\n    assert mod.VALUE in (1, 2)\n",
}


def _first_run_processes(log: Path) -> set[str]:
    """The processes the first run's ``test_where`` ran in (VALUE 2; each
    passes, so runs once after the change)."""
    rows = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    return {pid for _, value, pid in rows if value == "2"}


async def _verdict(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
    before: str = MOD,
    after: str = "VALUE = 2\n",
) -> tuple[GateOutcome, set[str], dict[str, float]]:
    """The gate's verdict on ``before`` → ``after`` (VALUE 1 → 2) in the
    gates' real sandbox, warm."""
    monkeypatch.setenv("WHERE_LOG", str(root / "where.log"))
    monkeypatch.setenv("FLAKY_COUNT", str(root / "flaky.count"))
    sandbox = OtherCommandsSandbox(str(root), SandboxSettings, "gates")
    gate = TestGate(
        root,
        SubprocessRunner(str(root), sandbox=sandbox),
        TestsGateConfig.model_validate({"workers": workers}),
        python=sys.executable,
        launcher=KeptProcessLauncher(str(root), sandbox),
        sandboxed=lambda: True,
    )
    workspace = FakeWorkspace({"mod.py": before}, root=str(root))
    try:
        await changed(gate, workspace, "mod.py", after)
        assert await gate.warm_ready(60)
        outcome = await verdict(gate, workspace, "mod.py")
    finally:
        await gate.close()
    return outcome, _first_run_processes(root / "where.log"), dict(gate.timings)


async def test_a_first_run_shared_by_two_forks_judges_as_one_fork_in_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sandbox_status().works:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox_status().why_not}")
    assert len(os.sched_getaffinity(0)) >= 2, "the test machines have two cores"
    monkeypatch.setattr(cores, "SPLIT_FROM_S", 0.001)  # four tiny files are worth it here
    judged = {}
    for workers in (1, 2):
        root = project(tmp_path / f"w{workers}", {"mod.py": MOD, **TESTS})
        judged[workers] = await _verdict(root, monkeypatch, workers)

    (single, single_pids, single_timings), (split, split_pids, split_timings) = (
        judged[1],
        judged[2],
    )
    assert len(single_pids) == 1 and "first_shares" not in single_timings
    assert len(split_pids) == 2 and split_timings["first_shares"] == 2
    assert (
        [b.message for b in split.blockers]
        == [b.message for b in single.blockers]
        == ["tests/test_a.py::test_blocker failed: assert 2 == 1"]
    )
    assert split.unverified is None and single.unverified is None
    assert split.detail == single.detail
    assert "failing before the run too (not blocking): tests/test_b.py::test_pre" in split.detail
    assert "flaky, passed on a re-run (not blocking): tests/test_c.py::test_flaky" in split.detail


#: test_b passes only after test_a in one process (a module's state).
NEIGHBOURS = {
    "state.py": "READY = False\n",
    "tests/test_a.py": (
        "import mod\nimport state\n\n\ndef test_sets():\n    state.READY = bool(mod.VALUE)\n"
    ),
    "tests/test_b.py": (
        "import mod\nimport state\n\n\n"
        "def test_needs_its_neighbour():\n    assert state.READY and mod.VALUE\n"
    ),
    "tests/test_c.py": "import mod\n\n\ndef test_blocker():\n    assert mod.VALUE == 1\n",
}


async def test_a_test_that_needed_its_neighbours_process_is_not_made_a_blocker_by_the_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One fork runs test_a's file before test_b's: test_b passes. Split
    by file (a and c, then b: equal times), test_b fails alone; its fresh re-run and its baseline run
    alone fail too: pre-existing (as one fork running it alone would
    find), never the run's."""
    monkeypatch.setattr(cores, "SPLIT_FROM_S", 0.001)
    root = project(tmp_path / "proj", {"mod.py": MOD, **NEIGHBOURS})
    outcome, _, timings = await _verdict(root, monkeypatch, 2)

    assert timings["first_shares"] == 2
    assert [b.message for b in outcome.blockers] == [
        "tests/test_c.py::test_blocker failed: assert 2 == 1"
    ]
    assert (
        "failing before the run too (not blocking): tests/test_b.py::test_needs_its_neighbour"
        in outcome.detail
    )


async def test_a_test_file_collected_only_for_its_import_is_in_a_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test of test_b uses a changed name, but its file imports ``old``,
    which the change removes: the narrowing collects the file for its
    import, and a share must too (it was in none: the split run passed)."""
    monkeypatch.setattr(cores, "SPLIT_FROM_S", 0.001)
    before = "VALUE = 1\n\n\ndef old():\n    return 1\n"
    tests = {
        "tests/test_a.py": "import mod\n\n\ndef test_ok():\n    assert mod.VALUE in (1, 2)\n",
        "tests/test_b.py": "from mod import old\n\n\ndef test_unrelated():\n    assert True\n",
        "tests/test_c.py": "import mod\n\n\ndef test_ok2():\n    assert mod.VALUE\n",
    }
    root = project(tmp_path / "proj", {"mod.py": before, **tests})
    outcome, _, timings = await _verdict(root, monkeypatch, 2, before)

    assert timings["first_shares"] == 2
    assert [b.message for b in outcome.blockers] == [
        "tests/test_b.py cannot be collected (importing it or making its tests failed)"
    ]


HANGS = (
    "import os\nimport time\n\n\n"
    "def test_hangs():\n"
    "    with open(os.environ['HANGING_' + __name__[-1].upper()], 'w') as out:\n"
    "        out.write(str(os.getpid()))\n"
    "    time.sleep(97)\n"
)


async def test_an_abort_ends_every_share_and_one_shares_early_end_is_not_a_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both shares' pytest processes end before ``run_tests`` returns from
    an abort; a share whose test called ``os._exit(0)`` makes the run
    unverified though the other share's failure gives the run exit code 1;
    a file cut across shares that fails to import is one collection error."""
    files = {
        "mod.py": MOD,
        "tests/test_x.py": HANGS,
        "tests/test_y.py": HANGS,
        "tests/test_exit.py": "import os\n\n\ndef test_exits():\n    os._exit(0)\n",
        "tests/test_fail.py": "def test_fails():\n    assert False\n",
        "tests/test_broken.py": "from mod import gone\n\n\ndef test_1():\n    pass\n\n\n"
        "def test_2():\n    pass\n",
    }
    root = project(tmp_path / "proj", files)
    fifos = {}
    for name in ("X", "Y"):
        fifos[name] = tmp_path / f"hanging_{name}.pid"
        os.mkfifo(fifos[name])
        monkeypatch.setenv(f"HANGING_{name}", str(fifos[name]))
    shadow = build_shadow(root, {})
    warm = WarmPytest(sys.executable, KeptProcessLauncher())
    warm.start()
    runner, spec = SubprocessRunner(str(root)), RunnerSpec(python=sys.executable)
    hanging = [Share(("tests/test_x.py",), None), Share(("tests/test_y.py",), None)]
    early = [Share(("tests/test_exit.py",), None), Share(("tests/test_fail.py",), None)]
    pids: list[int] = []
    try:
        assert await warm.wait_ready(60)
        client = warm.client()
        assert client is not None and client.watch is not None
        targets = ["tests/test_x.py", "tests/test_y.py"]
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(
                lambda: run_tests(runner, spec, shadow, targets, 60, warm=client, shares=hanging)
            )
            with anyio.fail_after(60):
                for fifo in fifos.values():
                    text = await anyio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True)
                    pids.append(int(text))
            tasks.cancel_scope.cancel()  # an abort: run_tests is cancelled
        ended = [process_ended(pid) for pid in pids]
        targets = ["tests/test_exit.py", "tests/test_fail.py"]
        exited = await run_tests(runner, spec, shadow, targets, 60, warm=client, shares=early)
        broken = "tests/test_broken.py"
        named = [f"{broken}::test_1", f"{broken}::test_2"]
        cut = [Share((broken,), (name,)) for name in named]
        run = await run_tests(
            runner, spec, shadow, [broken], 60, warm=client, only=named, shares=cut
        )
    finally:
        await warm.close()
        shadow.remove()

    assert len(set(pids)) == 2 and ended == [True, True]
    assert exited.shares == 2 and exited.exit_code == 1  # the other share's failure
    assert (exited.unverified or "").startswith("pytest ended before its session finished")
    # A file cut across the shares that fails to import: one error, not one a share.
    assert run.shares == 2
    assert [(r.node_id, r.collection_error) for r in run.results] == [(broken, True)]


def test_shares_are_balanced_by_recorded_times_and_keep_the_runs_order() -> None:
    """A file goes whole to one share unless it alone is more than a
    share's part; each share runs its tests in the run's order; too
    little time, or one worker, is one fork."""
    split = Cores(2)
    split.learn({f"t/test_big.py::test_{i}": 0.1 for i in range(4)})
    split.learn({"t/test_s.py::test_a": 0.05, "t/test_s.py::test_b": 0.05})
    only = [*(f"t/test_big.py::test_{i}" for i in range(4)), "t/test_s.py::test_a"]
    only.append("t/test_s.py::test_b")
    shares = split.plan(["t/test_big.py", "t/test_s.py"], only)
    assert shares is not None and len(shares) == 2
    assert sorted(name for share in shares for name in share.only or ()) == sorted(only)
    loads = []
    for share in shares:
        assert list(share.only or ()) == [n for n in only if n in (share.only or ())]
        loads.append(sum(split.durations[n] for n in share.only or ()))
    # Balanced within the heaviest part (a test of the big file, 0.1 s).
    assert sorted(loads) == pytest.approx([0.2, 0.3])
    # The big file collected whole for its record is never cut.
    kept = split.plan(["t/test_big.py", "t/test_s.py"], only, whole=["t/test_big.py"])
    assert kept is not None
    assert [s.targets for s in kept] == [("t/test_big.py",), ("t/test_s.py",)]
    assert split.plan(["t/test_s.py"], ["t/test_s.py::test_a"]) is None  # 0.05 s
    assert Cores(1).plan(["t/test_big.py", "t/test_s.py"], only) is None


def test_the_learned_times_are_summed_as_a_scan_of_every_time_would() -> None:
    """A plan's weights come from sums made once per learn; each is what
    the scan of every learned time it replaced gives (file, class prefix,
    parametrized base, nested classes, ``::`` inside params, unknowns)."""
    durations = {
        "tests/test_a.py::test_one": 0.5,
        "tests/test_a.py::test_p[1]": 0.25,
        "tests/test_a.py::test_p[2::x]": 0.125,
        "tests/test_a.py::Outer::Inner::test_deep": 2.0,
        "tests/test_a.py::Outer::test_mid": 1.0,
        "tests/test_b.py::C::test_c[a]": 4.0,
        "tests/test_b.py::C::test_c[b]": 8.0,
        "tests/test_z.py::test_zero": 0.0,
    }
    planner = Cores(2)
    planner.learn(dict(list(durations.items())[:3]))
    assert planner._file_weight("tests/test_a.py", None) == 0.875
    planner.learn(durations)  # new times are seen: the sums are made again

    def scanned(name: str) -> float:
        if name in durations:
            return durations[name]
        if "::" in name:
            inner = [t for n, t in durations.items() if n.startswith(name + "::")]
            if inner:
                return sum(inner)
        params = [t for n, t in durations.items() if n.split("[")[0] == name]
        return sum(params) if params else cores.UNKNOWN_TEST_S

    names = [
        *durations,
        "tests/test_a.py::Outer",
        "tests/test_a.py::Outer::Inner",
        "tests/test_a.py::test_p",
        "tests/test_b.py::C",
        "tests/test_b.py::C::test_c",
        "tests/test_z.py::test_zero",
        "tests/test_a.py::missing",
        "tests/test_a.py",
    ]
    for name in names:
        assert planner._weight(name) == scanned(name), name
    for file in ("tests/test_a.py", "tests/test_b.py", "tests/test_z.py", "tests/test_none.py"):
        known = [t for n, t in durations.items() if n.split("::")[0] == file]
        assert planner._file_weight(file, None) == (sum(known) if known else cores.UNKNOWN_FILE_S)


def test_the_shares_records_are_merged_with_the_lines_each_ran() -> None:
    one, two = RawCoverage(), RawCoverage()
    one.tests = {"t.py::a": frozenset({("m.py", 1)})}
    one.test_lines = {"t.py::a": {("m.py", 1): frozenset({2})}}
    one.shared_lines = {("m.py", 5): frozenset({6})}
    one.import_lines = {"t.py": {("m.py", 1): frozenset({2})}}
    two.tests = {"u.py::b": frozenset({("m.py", 1)})}
    two.test_lines = {"u.py::b": {("m.py", 1): frozenset({3})}}
    two.shared_lines = {("m.py", 5): frozenset({7}), ("m.py", 9): frozenset({10})}
    two.import_lines = {"t.py": {("m.py", 1): frozenset({4})}}
    merged = cores.merged_coverage([one, two])

    assert merged is not None
    assert merged.test_lines == {
        "t.py::a": {("m.py", 1): frozenset({2})},
        "u.py::b": {("m.py", 1): frozenset({3})},
    }
    # What ran outside the tests, or at a file's import, in either share.
    assert merged.shared_lines == {("m.py", 5): frozenset({6, 7}), ("m.py", 9): frozenset({10})}
    assert merged.import_lines == {"t.py": {("m.py", 1): frozenset({2, 4})}}
