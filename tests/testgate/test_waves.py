"""A blocked verdict's failing tests are run again and in the baseline
while its first run goes on (real pytest, cold and warm)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.process.kept import KeptProcessLauncher
from rein.testgate.waves import Progress, read_lines
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, gate_for, project, verdict

#: VALUE is 1 before the run, 2 after it.
MOD = "VALUE = 1\n"


def _tests(marks: Path) -> str:
    """test_a and test_c fail with the change; test_a leaves a mark of
    each run (its tree's VALUE: 1 in the baseline, 2 in the re-run, and
    when it started and ended: it takes half a second);
    test_b, which runs between them, passes once test_a ran again and in
    the baseline, and waits up to 20 s for that. test_0 takes a second:
    the run looks long enough for a wave when test_a fails."""
    return (
        "import time\nfrom pathlib import Path\n\nimport mod\n\n"
        f"MARKS = Path({str(marks)!r})\n\n\n"
        "def test_0():\n"
        "    assert mod.VALUE\n"
        "    time.sleep(1)\n\n\n"
        "def test_a():\n"
        "    started = time.monotonic_ns()\n"
        "    time.sleep(0.5)\n"
        "    (MARKS / f'a{mod.VALUE}-{started}-{time.monotonic_ns()}').touch()\n"
        "    assert mod.VALUE == 1\n\n\n"
        "def test_b():\n"
        "    assert mod.VALUE in (1, 2)\n"
        "    deadline = time.monotonic() + 20\n"
        "    def seen():\n"
        "        names = [p.name for p in MARKS.iterdir()]\n"
        "        return sum(n.startswith('a2-') for n in names) >= 2 and any(\n"
        "            n.startswith('a1-') for n in names\n"
        "        )\n"
        "    while not seen() and time.monotonic() < deadline:\n"
        "        time.sleep(0.02)\n"
        "    assert seen()\n\n\n"
        "def test_c():\n"
        "    assert mod.VALUE == 1\n"
    )


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
async def test_the_failing_tests_are_judged_while_the_first_run_goes_on(
    tmp_path: Path, warm: bool
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    root = project(tmp_path / "proj", {"mod.py": MOD, "tests/test_m.py": _tests(marks)})
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher() if warm else None)
    try:
        await changed(gate, workspace, "mod.py", "VALUE = 2\n")
        assert await gate.warm_ready(60) == warm  # the machine may be slow
        outcome = await verdict(gate, workspace, "mod.py")
    finally:
        await gate.close()

    # test_b passed in the first run: test_a ran again and in the baseline
    # while it waited (without the waves, it failed, and passed on its own
    # re-run: "flaky").
    assert "flaky" not in outcome.detail, outcome.detail
    assert outcome.detail.startswith("2 of 4 tests passed"), outcome.detail
    # test_c failed after the first wave started: a second wave judged it.
    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_m.py::test_a",
        "tests/test_m.py::test_c",
    ]
    assert gate.timings["waves"] == 2
    # Beside the first run, the re-run and then the baseline: one process
    # at a time, not two (2 cores: the first run's and one more).
    spans = {}
    for mark in marks.iterdir():
        value, started, ended = mark.name.split("-")
        spans.setdefault(value, []).append((int(started), int(ended)))
    rerun = sorted(spans["a2"])[1]  # the first run's came first
    (baseline,) = spans["a1"]
    assert rerun[1] <= baseline[0] or baseline[1] <= rerun[0], (rerun, baseline)


def test_the_failures_and_the_progress_are_read_from_whole_lines_of_the_report() -> None:
    lines = [
        b'{"kind": "start"}',
        b'{"kind": "collected", "count": 4, "at": 12.5}',
        b'{"kind": "test", "nodeid": "t.py::a", "when": "call", "outcome": "passed"}',
        b'{"kind": "test", "nodeid": "t.py::a", "when": "teardown", "outcome": "passed"}',
        b'{"kind": "test", "nodeid": "t.py::b", "when": "setup", "outcome": "failed"}',
        b'{"kind": "collect", "nodeid": "u.py", "outcome": "failed"}',
        b'{"kind": "test", "nodeid": "t.py::c", "when": "call", "outc',
    ]
    progress = Progress()

    assert read_lines(lines, progress) == ["t.py::b", "u.py"]
    assert (progress.total, progress.collected_at, progress.done) == (4, 12.5, 1)
    assert progress.failing == ["t.py::b", "u.py"]


async def test_a_short_first_run_leaves_its_failures_to_one_wave_after_it(
    tmp_path: Path,
) -> None:
    # test_b takes longer than the run looked to have left when test_a
    # failed: a wave started then would still run when test_c fails.
    tests = (
        "import time\n\nimport mod\n\n\n"
        "def test_a():\n    assert mod.VALUE == 1\n\n\n"
        "def test_b():\n    assert mod.VALUE\n    time.sleep(0.5)\n\n\n"
        "def test_c():\n    assert mod.VALUE == 1\n"
    )
    root = project(tmp_path / "proj", {"mod.py": MOD, "tests/test_m.py": tests})
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate = gate_for(root)
    try:
        await changed(gate, workspace, "mod.py", "VALUE = 2\n")
        outcome = await verdict(gate, workspace, "mod.py")
    finally:
        await gate.close()

    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_m.py::test_a",
        "tests/test_m.py::test_c",
    ]
    assert gate.timings["waves"] == 1
