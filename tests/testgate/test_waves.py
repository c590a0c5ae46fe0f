"""A blocked verdict's failing tests: run again in the first run's own
process, in a fresh shadow only when that does not confirm them, and in
the baseline while the first run goes on (real pytest, cold and warm).
Each call of a test appends a line to a log (its tree's VALUE, its
process, when it started and ended): what ran where is counted there."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rein.harness.gating.gate_types import GateOutcome
from rein.process.kept import KeptProcessLauncher
from rein.testgate.waves import Heard, Waves, read_lines
from tests.fakes.wave_runs import EndlessRuns
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, gate_for, project, verdict

#: VALUE is 1 before the run, 2 after it.
MOD = "VALUE = 1\n"
#: The tests' head: ``call(name)`` logs a call of the test ``name``.
HEAD = (
    "import os\nimport time\nfrom pathlib import Path\n\nimport mod\n\n"
    "CALLS = Path({calls!r})\n\n\n"
    "def call(name, sleep=0.0):\n"
    "    started = time.monotonic_ns()\n"
    "    time.sleep(sleep)\n"
    "    with CALLS.open('a') as log:\n"
    "        log.write(f'{{name}} {{mod.VALUE}} {{os.getpid()}} {{started}} "
    "{{time.monotonic_ns()}}\\n')\n\n\n"
)


def _calls(log: Path) -> list[tuple[str, int, int, int, int]]:
    """(test, VALUE, pid, started, ended) of each call, in order."""
    rows = [line.split() for line in log.read_text().splitlines()]
    return [(name, int(v), int(pid), int(s), int(e)) for name, v, pid, s, e in rows]


async def _judged(
    tmp_path: Path, tests: str, *, warm: bool = False
) -> tuple[GateOutcome, Path, dict[str, float]]:
    """The verdict on VALUE 1 → 2 with ``tests`` (HEAD first), the calls'
    log and the gate's timings."""
    calls = tmp_path / "calls.log"
    calls.touch()
    root = project(
        tmp_path / "proj",
        {"mod.py": MOD, "tests/test_m.py": HEAD.format(calls=str(calls)) + tests},
    )
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher() if warm else None)
    try:
        await changed(gate, workspace, "mod.py", "VALUE = 2\n")
        assert await gate.warm_ready(60) == warm  # the machine may be slow
        outcome = await verdict(gate, workspace, "mod.py")
    finally:
        await gate.close()
    return outcome, calls, dict(gate.timings)


async def test_a_test_failing_again_the_same_way_in_its_process_runs_in_no_fresh_shadow(
    tmp_path: Path,
) -> None:
    tests = "def test_two():\n    call('two')\n    assert mod.VALUE == 1\n"
    outcome, calls, timings = await _judged(tmp_path, tests)

    assert [b.message for b in outcome.blockers] == [
        "tests/test_m.py::test_two failed: assert 2 == 1"
    ]
    # Twice in the first run's process, once in the baseline's: no other
    # pytest process ran it (without the in-process re-run: a third, the
    # fresh re-run's, VALUE 2).
    (first, _, pid, _, _), again, baseline = _calls(calls)
    assert again[:3] == ("two", 2, pid)
    assert baseline[:2] == ("two", 1) and baseline[2] != pid
    assert (timings["waves"], timings["confirmed"]) == (1, 1)
    assert "rerun_pytest" not in timings


async def test_a_test_passing_on_its_second_call_is_flaky_after_a_fresh_rerun(
    tmp_path: Path,
) -> None:
    # A file-backed counter: the first call fails, the others pass.
    count = tmp_path / "count"
    tests = (
        f"COUNT = Path({str(count)!r})\n\n\n"
        "def test_flaky():\n"
        "    call('flaky')\n"
        "    n = int(COUNT.read_text()) + 1 if COUNT.exists() else 1\n"
        "    COUNT.write_text(str(n))\n"
        "    assert n > 1, 'first call'\n"
    )
    outcome, calls, timings = await _judged(tmp_path, tests)

    assert outcome.blockers == []
    assert "flaky, passed on a re-run (not blocking): tests/test_m.py::test_flaky" in (
        outcome.detail
    )
    # It passed in the first run's process, and flaky is still what a
    # fresh re-run says: a third call, in another process, VALUE 2 (the
    # baseline's is VALUE 1).
    ran = _calls(calls)
    first_pid = ran[0][2]
    assert [(v, pid == first_pid) for _, v, pid, _, _ in ran if v == 2] == [
        (2, True),
        (2, True),
        (2, False),
    ]
    assert int(count.read_text()) == 4  # and once in the baseline
    assert timings["confirmed"] == 0


async def test_a_test_its_first_call_left_something_for_fails_otherwise_and_runs_afresh(
    tmp_path: Path,
) -> None:
    # The first call leaves a file in the shadow that makes the second one
    # fail another way: only a fresh shadow says whether the test is broken.
    tests = (
        "def test_left():\n"
        "    call('left')\n"
        "    left = Path('left-behind')\n"
        "    if left.exists():\n"
        "        raise RuntimeError('left behind by the first call')\n"
        "    left.touch()\n"
        "    assert mod.VALUE == 1\n"
    )
    outcome, calls, timings = await _judged(tmp_path, tests)

    assert [b.message for b in outcome.blockers] == [
        "tests/test_m.py::test_left failed: assert 2 == 1"
    ]
    assert "flaky" not in outcome.detail
    ran = _calls(calls)
    first_pid = ran[0][2]
    after = sorted((v, pid == first_pid) for _, v, pid, _, _ in ran)
    # The first run's two calls, the fresh re-run's (VALUE 2), the baseline's.
    assert after == [(1, False), (2, False), (2, True), (2, True)]
    assert "rerun_pytest" in timings and timings["confirmed"] == 0


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
async def test_the_failing_tests_are_judged_while_the_first_run_goes_on(
    tmp_path: Path, warm: bool
) -> None:
    # test_a fails the same way twice; test_s fails once (a file-backed
    # counter) and passes on its second call; test_b, which runs after
    # them, waits up to 20 s for test_a's baseline run and test_s's fresh
    # re-run: it passes only if they ran while the first run went on.
    count = tmp_path / "count"
    tests = (
        f"COUNT = Path({str(count)!r})\n\n\n"
        "def test_a():\n    call('a', 0.3)\n    assert mod.VALUE == 1\n\n\n"
        "def test_s():\n"
        "    assert mod.VALUE\n"
        "    call('s', 0.3)\n"
        "    n = int(COUNT.read_text()) + 1 if COUNT.exists() else 1\n"
        "    COUNT.write_text(str(n))\n"
        "    assert n > 1, 'first call'\n\n\n"
        "def test_b():\n"
        "    assert mod.VALUE in (1, 2)\n"
        "    deadline = time.monotonic() + 20\n"
        "    def seen():\n"
        "        rows = [line.split() for line in CALLS.read_text().splitlines()]\n"
        "        return ['a', '1'] in [r[:2] for r in rows] and any(\n"
        "            r[:2] == ['s', '2'] and r[2] != str(os.getpid()) for r in rows\n"
        "        )\n"
        "    while not seen() and time.monotonic() < deadline:\n"
        "        time.sleep(0.02)\n"
        "    assert seen()\n\n\n"
        "def test_c():\n    call('c')\n    assert mod.VALUE == 1\n"
    )
    outcome, calls, timings = await _judged(tmp_path, tests, warm=warm)

    # test_b passed: what it waited for ran while the first run went on.
    assert outcome.detail.startswith("1 of 4 tests passed"), outcome.detail
    assert "flaky, passed on a re-run (not blocking): tests/test_m.py::test_s" in (outcome.detail)
    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_m.py::test_a",
        "tests/test_m.py::test_c",
    ]
    ran = _calls(calls)
    first_pid = ran[0][2]
    # test_a and test_c were confirmed in the first run's process: no fresh
    # re-run of theirs; test_s had one.
    elsewhere = [(name, v) for name, v, pid, _, _ in ran if pid != first_pid]
    assert sorted(elsewhere) == [("a", 1), ("c", 1), ("s", 1), ("s", 2)]
    assert timings["confirmed"] == 2
    # One baseline process, started with the first run, ran the three as
    # they failed (test_c after test_b's wait: the first run went on).
    baseline = {pid for _, v, pid, _, _ in ran if v == 1}
    assert len(baseline) == 1
    assert timings["waves"] == 2  # the baseline's run and test_s's fresh re-run


def test_what_the_report_says_of_failing_tests_is_read_from_whole_lines() -> None:
    lines = [
        b'{"kind": "start"}',
        b'{"kind": "collected", "count": 4, "at": 12.5}',
        b'{"kind": "test", "nodeid": "t.py::a", "when": "call", "outcome": "passed"}',
        b'{"kind": "test", "nodeid": "t.py::b", "when": "setup", "outcome": "failed"}',
        b'{"kind": "collect", "nodeid": "u.py", "outcome": "failed"}',
        b'{"kind": "test", "nodeid": "t.py::d", "when": "call", "outcome": "failed", '
        b'"again": true}',
        b'{"kind": "again", "nodeid": "t.py::d", "outcome": "failed", "same": true}',
        b'{"kind": "again", "nodeid": "t.py::e", "outcome": "passed", "same": false}',
        b'{"kind": "finish", "exitstatus": 1}',
        b'{"kind": "test", "nodeid": "t.py::c", "when": "call", "outc',
    ]

    assert read_lines(lines) == [
        Heard("t.py::b", "failed"),
        Heard("u.py", "failed"),
        Heard("t.py::d", "retrying"),
        Heard("t.py::d", "confirmed"),
        Heard("t.py::e", "suspect"),
        Heard("", "finished"),
    ]


@pytest.mark.parametrize("warm", [False, True])
async def test_a_small_first_run_over_two_files_has_one_baseline_run_beside_it(
    tmp_path: Path, warm: bool
) -> None:
    """Old: the baseline's run started beside a first run of one test file
    only; over two, each file's failing test had a baseline run of its own
    (toolz: 0.11-0.12 s after the first run, on verdicts of 0.22 s)."""
    calls = tmp_path / "calls.log"
    calls.touch()
    head = HEAD.format(calls=str(calls))
    root = project(
        tmp_path / "proj",
        {
            "mod.py": MOD,
            "tests/test_a.py": head + "def test_a():\n    call('a')\n    assert mod.VALUE == 1\n",
            "tests/test_b.py": head + "def test_b():\n    call('b')\n    assert mod.VALUE == 1\n",
        },
    )
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher() if warm else None)
    try:
        await changed(gate, workspace, "mod.py", "VALUE = 2\n")
        assert await gate.warm_ready(60) == warm
        outcome = await verdict(gate, workspace, "mod.py")
        timings = dict(gate.timings)
    finally:
        await gate.close()

    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_a.py::test_a",
        "tests/test_b.py::test_b",
    ], outcome.detail
    baseline = {pid for _, v, pid, _, _ in _calls(calls) if v == 1}
    assert len(baseline) == 1, _calls(calls)
    assert timings["waves"] == 1


async def test_no_run_starts_once_the_waves_are_cancelled() -> None:
    """A cancelled run's end started the next waiting one, which no one
    awaited: a pytest process that went on after its verdict, and, at an
    event loop's close, a task Python 3.11's asyncio never ended (it was
    cancelled while it started its process: a worker of this suite hung
    in the loop's teardown, 2026-12-07)."""
    runs = EndlessRuns()
    waves = Waves(runs, {}, {}, deadline=asyncio.get_running_loop().time() + 60)
    # The first run's report, while it goes on: two failing tests of two
    # files; one run at a time beside it, so the others wait.
    waves.heard([Heard("tests/test_a.py::test_a", "failed")])
    waves.heard([Heard("tests/test_b.py::test_b", "failed")])
    await asyncio.sleep(0)
    started = list(runs.started)
    assert started == [("before", ("tests/test_a.py::test_a",))]
    await waves.cancel()
    for _ in range(3):
        await asyncio.sleep(0)  # any run a callback started has begun
    assert runs.started == started
    assert runs.cancelled == len(started)
