"""A blocked verdict's fresh re-run and its baseline run: side by side
when ``gates.tests.workers`` is 2 or more, one after the other when it is
1 (real pytest, tiny projects). The judgement is the same either way; an
abort kills both runs' processes (and, warm, what their tests left outside
their process groups).

``test_t``'s fixture fails when VALUE is 2 (the run's): a setup error is
never re-run in the first run's own process, so it has a fresh re-run
(VALUE 2) and a baseline run (VALUE 1). Each call logs its start and end
(the run's VALUE, its process, monotonic ns): the order of the two real
pytest processes is read there, never from timings."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from rein.harness.gating.gate_types import GateOutcome
from rein.process.kept import KeptProcessLauncher
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, gate_for, process_ended, project, verdict

MOD = "VALUE = 1\n"
#: ``log(what)`` appends "what VALUE pid ns"; ``wait_for(what, value, n,
#: bound)``: until the log has ``n`` lines "what VALUE", at most ``bound`` s
#: (both scripts' text; each formats it with its ``log`` path).
LOGGING = (
    "def log(what):\n"
    "    with LOG.open('a') as out:\n"
    "        out.write(f'{{what}} {{mod.VALUE}} {{os.getpid()}} {{time.monotonic_ns()}}\\n')\n\n\n"
    "def lines(what, value):\n"
    "    rows = [line.split() for line in LOG.read_text().splitlines()]\n"
    "    return [r for r in rows if r[:2] == [what, str(value)]]\n\n\n"
    "def wait_for(what, value, n, bound):\n"
    "    deadline = time.monotonic() + bound\n"
    "    while len(lines(what, value)) < n and time.monotonic() < deadline:\n"
    "        time.sleep(0.01)\n\n\n"
)

HEAD = (
    "import os\nimport subprocess\nimport sys\nimport time\nfrom pathlib import Path\n\n"
    "import pytest\n\nimport mod\n\nLOG = Path({log!r})\n\n\n" + LOGGING
)
#: The re-run waits for the baseline's start, the baseline for the
#: re-run's: side by side, each sees the other at once; one after the
#: other, the baseline (first) waits out WAIT_S and the re-run sees it.
PAIRED = (
    "WAIT_S = {wait_s}\n\n\n"
    "@pytest.fixture\n"
    "def checked():\n"
    "    first = not lines('start', 2)\n"
    "    log('start')\n"
    "    if mod.VALUE == 2 and not first:\n"
    "        wait_for('start', 1, 1, WAIT_S)\n"
    "    elif mod.VALUE == 1:\n"
    "        wait_for('start', 2, 2, WAIT_S)\n"
    "    log('end')\n"
    "    assert mod.VALUE == 1, 'set up for VALUE 1 only'\n\n\n"
    "def test_t(checked):\n    pass\n"
)
#: The re-run and the baseline run hang (each with a child in a session of
#: its own, logged by its pid) until killed; the first run does not.
HANGS = (
    "CHILD = {child}\n\n\n"
    "@pytest.fixture\n"
    "def checked():\n"
    "    first = not lines('start', 2)\n"
    "    log('start')\n"
    "    if mod.VALUE == 2 and first:\n"
    "        raise AssertionError('set up for VALUE 1 only')\n"
    "    if CHILD:\n"
    "        child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],\n"
    "                                 start_new_session=True)\n"
    "        log(f'child-{{child.pid}}')\n"
    "    time.sleep(60)\n\n\n"
    "def test_t(checked):\n    pass\n"
)
#: Three judgements: a blocker (its setup fails now), a test failing before
#: the run too, and a flaky one (its first call fails, a file-backed count).
JUDGED = (
    "COUNT = Path({count!r})\n\n\n"
    "@pytest.fixture\n"
    "def checked():\n"
    "    assert mod.VALUE == 1, 'set up for VALUE 1 only'\n\n\n"
    "def test_blocks(checked):\n    pass\n\n\n"
    "def test_pre():\n    assert mod.VALUE == 3\n\n\n"
    "def test_flaky():\n"
    "    assert mod.VALUE\n"
    "    n = int(COUNT.read_text()) + 1 if COUNT.exists() else 1\n"
    "    COUNT.write_text(str(n))\n"
    "    assert n > 1, 'first call'\n"
)


def _gate_over(tmp_path: Path, tests: str, *, workers: int, warm: bool = False) -> tuple:
    root = project(tmp_path / "proj", {"mod.py": MOD, "tests/test_m.py": tests})
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher() if warm else None, workers=workers)
    return gate, workspace


async def _judged(tmp_path: Path, tests: str, *, workers: int) -> GateOutcome:
    gate, workspace = _gate_over(tmp_path, tests, workers=workers)
    try:
        await changed(gate, workspace, "mod.py", "VALUE = 2\n")
        return await verdict(gate, workspace, "mod.py")
    finally:
        await gate.close()


def _rows(log: Path) -> list[list[str]]:
    return [line.split() for line in log.read_text().splitlines()]


def _span(rows: list[list[str]], value: str, pid: str) -> tuple[int, int]:
    """(start, end) of the call in process ``pid``."""
    at = {r[0]: int(r[3]) for r in rows if r[1] == value and r[2] == pid}
    return at["start"], at["end"]


@pytest.mark.parametrize("workers", [1, 2], ids=["one-worker", "two-workers"])
async def test_the_rerun_and_the_baseline_run_side_by_side_only_with_two_workers(
    tmp_path: Path, workers: int
) -> None:
    log = tmp_path / "calls.log"
    log.touch()
    # Side by side nothing waits out its bound; one after the other, the
    # baseline waits 2 s for a re-run that starts after it.
    wait_s = 60 if workers == 2 else 2
    tests = HEAD.format(log=str(log)) + PAIRED.format(wait_s=wait_s)
    outcome = await _judged(tmp_path, tests, workers=workers)

    assert [b.message.split(" failed")[0] for b in outcome.blockers] == ["tests/test_m.py::test_t"]
    rows = _rows(log)
    now = [r[2] for r in rows if r[:2] == ["start", "2"]]
    assert len(now) == 2  # the first run's, the fresh re-run's
    first, rerun = now
    (baseline,) = [r[2] for r in rows if r[:2] == ["start", "1"]]
    assert len({first, rerun, baseline}) == 3  # three pytest processes
    rerun_start, rerun_end = _span(rows, "2", rerun)
    baseline_start, baseline_end = _span(rows, "1", baseline)
    if workers == 2:
        # Each started before the other ended.
        assert rerun_start < baseline_end and baseline_start < rerun_end
    else:
        # The baseline's run first, the re-run after its end.
        assert baseline_end < rerun_start


@pytest.mark.parametrize("workers", [1, 2], ids=["one-worker", "two-workers"])
async def test_flaky_pre_existing_and_blocking_are_judged_alike_with_one_or_two_workers(
    tmp_path: Path, workers: int
) -> None:
    tests = HEAD.format(log=str(tmp_path / "calls.log")) + JUDGED.format(
        count=str(tmp_path / "count")
    )
    outcome = await _judged(tmp_path, tests, workers=workers)

    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_m.py::test_blocks"
    ]
    assert outcome.unverified is None
    assert "flaky, passed on a re-run (not blocking): tests/test_m.py::test_flaky" in (
        outcome.detail
    )
    assert "failing before the run too (not blocking): tests/test_m.py::test_pre" in (
        outcome.detail
    )


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
async def test_an_abort_kills_the_rerun_and_the_baseline_run_side_by_side(
    tmp_path: Path, warm: bool
) -> None:
    log = tmp_path / "calls.log"
    log.touch()
    # Warm, each test leaves a child in a session of its own: the kept
    # process's handler, the run's subreaper, ends it with the run.
    tests = HEAD.format(log=str(log)) + HANGS.format(child=warm)
    gate, workspace = _gate_over(tmp_path, tests, workers=2, warm=warm)
    try:
        await changed(gate, workspace, "mod.py", "VALUE = 2\n")
        assert await gate.warm_ready(60) == warm
        task = asyncio.ensure_future(verdict(gate, workspace, "mod.py"))
        # Both hanging runs started (and, warm, their children).
        hung = 4 if warm else 2
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not task.done():
            rows = _rows(log)
            if (
                len([r for r in rows if r[0] == "start"])
                + sum(r[0].startswith("child-") for r in rows)
                >= 1 + hung
            ):
                break
            await asyncio.sleep(0.02)
        assert not task.done(), task.result()
        rows = _rows(log)
        pids = [r[2] for r in rows if r[0] == "start"][1:]
        pids += [r[0].removeprefix("child-") for r in rows if r[0].startswith("child-")]
        assert len(pids) == hung, rows
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Ended by the time the verdict's cancellation returns (warm: the
        # kept process's handler killed and reaped them first).
        assert [p for p in pids if not process_ended(int(p))] == []
    finally:
        await gate.close()


#: A custom runner (``gates.tests.command``): its one test fails when
#: VALUE is 2, each run logged as PAIRED's calls are, waiting as they do.
RUNNER = (
    "import os\nimport sys\nimport time\nfrom pathlib import Path\n\n"
    "sys.path.insert(0, os.getcwd())\nimport mod  # noqa: E402\n\n"
    "LOG = Path({log!r})\n\n\n" + LOGGING + "first = not lines('start', 2)\n"
    "log('start')\n"
    "if mod.VALUE == 2 and not first:\n"
    "    wait_for('start', 1, 1, {wait_s})\n"
    "elif mod.VALUE == 1:\n"
    "    wait_for('start', 2, 2, {wait_s})\n"
    "log('end')\n"
    "failure = '<failure message=\"VALUE 2\"/>' if mod.VALUE == 2 else ''\n"
    "Path('report.xml').write_text(\n"
    '    f\'<testsuites><testsuite><testcase classname="c" name="t">{{failure}}\'\n'
    "    '</testcase></testsuite></testsuites>'\n"
    ")\n"
)


@pytest.mark.parametrize("workers", [1, 2], ids=["one-worker", "two-workers"])
async def test_a_custom_runners_rerun_and_baseline_run_side_by_side_only_with_two_workers(
    tmp_path: Path, workers: int
) -> None:
    log = tmp_path / "calls.log"
    log.touch()
    runner = RUNNER.format(log=str(log), wait_s=60 if workers == 2 else 2)
    root = project(tmp_path / "proj", {"mod.py": MOD, "run.py": runner})
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate = gate_for(
        root, workers=workers, command=f"{sys.executable} run.py", junitPath="report.xml"
    )
    try:
        await changed(gate, workspace, "mod.py", "VALUE = 2\n")
        outcome = await verdict(gate, workspace, "mod.py")
    finally:
        await gate.close()

    assert len(outcome.blockers) == 1 and outcome.unverified is None, outcome
    rows = _rows(log)
    first, rerun = [r[2] for r in rows if r[:2] == ["start", "2"]]
    (baseline,) = [r[2] for r in rows if r[:2] == ["start", "1"]]
    rerun_start, rerun_end = _span(rows, "2", rerun)
    baseline_start, baseline_end = _span(rows, "1", baseline)
    if workers == 2:
        assert rerun_start < baseline_end and baseline_start < rerun_end
    else:
        # The re-run first, the baseline's run after its end.
        assert rerun_end < baseline_start
