"""The tests gate over real pytest runs on tiny projects made here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import (
    BAD,
    GOOD,
    changed,
    gate_for,
    project,
    snapshot,
    verdict,
    verdict_on,
)

TESTS = """from mod import first_n


def test_first_two():
    assert first_n([1, 2, 3], 2) == [1, 2]


def test_empty():
    assert first_n([], 3) == []


def test_already_broken():
    assert first_n([1], 1) == [2], "broken before the run"
"""


async def test_the_test_the_run_broke_blocks_and_the_broken_one_does_not(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": TESTS})
    before = snapshot(root)
    outcome = await verdict_on(root, "mod.py", BAD)

    assert [b.message for b in outcome.blockers] == [
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]"
    ]
    blocker = outcome.blockers[0]
    assert (blocker.path, blocker.line) == ("tests/test_mod.py", 4)
    assert blocker.context is not None
    assert "tests/test_mod.py:5 in test_first_two" in blocker.context
    assert "mod.py:2 in first_n" not in blocker.context  # the assert failed, not first_n
    assert "site-packages" not in blocker.context
    assert "tests/test_mod.py::test_already_broken" in outcome.detail
    assert "failing before the run too" in outcome.detail
    # The person's files were never written: the tests saw the buffer.
    assert snapshot(root) == before


async def test_a_change_undone_runs_no_test_and_a_comment_is_not_undone(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": TESTS})
    workspace = FakeWorkspace({"mod.py": GOOD}, root=str(root))
    gate = gate_for(root)
    await changed(gate, workspace, "mod.py", BAD)
    assert (await verdict(gate, workspace, "mod.py")).blockers

    workspace.buffers["mod.py"] = (GOOD, 3)  # the repair undoes the change
    undone = await verdict(gate, workspace, "mod.py")
    assert (undone.blockers, undone.unverified) == ([], None)
    assert "changes are undone" in undone.detail
    assert not any(name.endswith("_pytest") for name in gate.timings)  # no pytest ran

    workspace.buffers["mod.py"] = (GOOD + "# a note\n", 4)  # not the text before the run
    commented = await verdict(gate, workspace, "mod.py")
    assert "undone" not in commented.detail
    assert "first_pytest" in gate.timings


async def test_a_test_that_passes_on_its_rerun_is_flaky_not_blocking(tmp_path: Path) -> None:
    marker = tmp_path / "ran-once"
    flaky = (
        "from pathlib import Path\nfrom mod import first_n\n\n\ndef test_flaky():\n"
        f"    marker = Path({str(marker)!r})\n"
        "    if not marker.exists():\n        marker.touch()\n        assert False, 'first time'\n"
        "    assert first_n([1], 1) == [1]\n"
    )
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_flaky.py": flaky})
    outcome = await verdict_on(root, "mod.py", GOOD + "\n")

    assert outcome.blockers == []
    assert outcome.unverified is None
    assert "flaky, passed on a re-run (not blocking): tests/test_flaky.py::test_flaky" in (
        outcome.detail
    )


async def test_a_runner_that_cannot_start_is_unverified(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": TESTS})
    outcome = await verdict_on(root, "mod.py", BAD, python=str(tmp_path / "no-python"))

    assert outcome.blockers == []
    assert outcome.unverified is not None
    assert "wrote no report" in outcome.unverified


async def test_tests_past_the_time_limit_are_unverified(tmp_path: Path) -> None:
    slow = "import time\n\nfrom mod import first_n\n\n\ndef test_slow():\n    time.sleep(60)\n"
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_slow.py": slow})
    outcome = await verdict_on(root, "mod.py", BAD, timeoutMs=1_000)

    # Then "; still running then: tests/test_slow.py::test_slow" when pytest
    # reached the test within the second (test_real_setups.py).
    assert outcome.unverified is not None
    assert outcome.unverified.startswith(
        "the tests did not finish within 1 s (gates.tests.timeoutMs)"
    )


async def test_an_aborted_verdict_ends_the_tests_process_group(tmp_path: Path) -> None:
    started = tmp_path / "pid"
    slow = (
        "import os, time\nfrom pathlib import Path\n\nfrom mod import first_n\n\n\n"
        "def test_slow():\n"
        f"    Path({str(started)!r}).write_text(str(os.getpid()))\n    time.sleep(60)\n"
    )
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_slow.py": slow})
    workspace = FakeWorkspace({"mod.py": GOOD}, root=str(root))
    gate = gate_for(root)
    await changed(gate, workspace, "mod.py", BAD)

    os.mkfifo(started)  # the test writes its pid into it once it runs

    async with anyio.create_task_group() as tg:
        tg.start_soon(verdict, gate, workspace, "mod.py")
        with anyio.fail_after(60):
            pid = int(await anyio.to_thread.run_sync(started.read_text, abandon_on_cancel=True))
        tg.cancel_scope.cancel()  # the run is aborted

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        pass
    else:
        raise AssertionError(f"pytest ({pid}) still runs after the abort")


async def test_a_collection_error_blocks_in_a_test_file_the_run_changed(tmp_path: Path) -> None:
    """One in another file that fails before the run too is pre-existing,
    and the other tests still ran."""
    # It imports the changed function: collected with the per-test selection too.
    broken = "from mod import first_n, gone\n\n\ndef test_gone():\n    assert gone()\n"
    root = project(
        tmp_path / "proj",
        {"mod.py": GOOD, "tests/test_mod.py": TESTS, "tests/test_other.py": broken},
    )
    workspace = FakeWorkspace({"mod.py": GOOD, "tests/test_other.py": broken}, root=str(root))
    gate = gate_for(root)
    await changed(gate, workspace, "mod.py", BAD)

    outcome = await verdict(gate, workspace, "mod.py")

    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_mod.py::test_first_two"
    ]
    assert "failing before the run too (not blocking): " in outcome.detail
    assert "tests/test_other.py" in outcome.detail

    await changed(gate, workspace, "tests/test_other.py", broken.replace("gone", "went"))
    outcome = await verdict(gate, workspace, "mod.py", "tests/test_other.py")

    assert [(b.message, b.path, b.line) for b in outcome.blockers] == [
        (
            "tests/test_other.py cannot be collected (importing it or making its tests failed)",
            "tests/test_other.py",
            0,
        ),
        (
            "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]",
            "tests/test_mod.py",
            4,
        ),
    ]


async def test_another_runner_is_judged_by_its_junit_report(tmp_path: Path) -> None:
    """A custom command writing a JUnit report: its failure that passes
    before the run blocks, the re-run and the baseline run the command."""
    writer = tmp_path / "runner.py"
    writer.write_text(
        "import sys\nfrom pathlib import Path\n"
        "ok = Path('value.txt').read_text().strip() == 'good'\n"
        "case = '<testcase classname=\"suite\" name=\"value\">' + ('' if ok else "
        "'<failure message=\"value is bad\">boom</failure>') + '</testcase>'\n"
        "Path(sys.argv[1]).write_text('<testsuites><testsuite>' + case + "
        "'</testsuite></testsuites>')\n"
        "sys.exit(0 if ok else 1)\n"
    )
    root = project(tmp_path / "proj", {"value.txt": "good\n"})
    outcome = await verdict_on(
        root, "value.txt", "bad\n", command=f"{sys.executable} {writer} {{junit}}"
    )

    assert [b.message for b in outcome.blockers] == ["suite::value failed: value is bad"]
    assert os.listdir(root) == ["value.txt"]


async def test_earlier_texts_are_kept_with_a_stored_session_until_validated(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj", {"mod.py": GOOD})
    workspace = FakeWorkspace({"mod.py": GOOD}, root=str(root))
    gate = gate_for(root)
    await changed(gate, workspace, "mod.py", BAD)
    await gate.before_change(["mod.py", "new.py"], workspace)  # a rename's (old, new)
    await changed(gate, workspace, "mod.py", BAD + "# again\n")  # the first text stays

    resumed = gate_for(root)
    resumed.import_state(gate.export_state())

    assert resumed.prior == {"mod.py": GOOD, "new.py": None}
    resumed.on_validated(3)
    assert resumed.export_state() == {}


async def test_a_whole_suite_run_records_nothing_after_two_records_decided_nothing(
    tmp_path: Path,
) -> None:
    """A changed ``conftest.py``: no selection, the whole suite runs, and
    after two such runs recorded while coverage decided nothing, it is not
    recorded (the tracer about doubles a run)."""
    conftest = "import pytest\n"
    tests = "from mod import first_n\n\n\ndef test_two():\n    assert first_n([1, 2], 1) == [1]\n"
    root = project(
        tmp_path / "proj",
        {"mod.py": GOOD, "tests/conftest.py": conftest, "tests/test_mod.py": tests},
    )
    workspace = FakeWorkspace({"tests/conftest.py": conftest}, root=str(root))
    gate = gate_for(root)
    assert gate._picker.records_whole_suite() and gate._picker.records_whole_suite()
    try:
        await changed(gate, workspace, "tests/conftest.py", conftest + "\nLIMIT = 2\n")
        outcome = await verdict(gate, workspace, "tests/conftest.py")
    finally:
        await gate.close()

    assert (outcome.blockers, outcome.unverified) == ([], None)
    assert "whole suite" in outcome.detail, outcome.detail
    assert "first_pytest" in gate.timings and "first_record" not in gate.timings


async def test_whole_files_after_a_selection_that_collected_nothing_keep_the_suites_budget(
    tmp_path: Path,
) -> None:
    """The change's tests, by name, are in a class pytest does not collect:
    the run falls back to the test files whole, here the whole suite,
    recorded only within the whole suite's budget."""
    tests = (
        "from mod import first_n\n\n\nclass TestFirst:\n    def __init__(self):\n"
        "        pass\n\n    def test_two(self):\n        assert first_n([1, 2], 1) == [1]\n"
    )
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": tests})
    workspace = FakeWorkspace({"mod.py": GOOD}, root=str(root))
    gate = gate_for(root)
    assert gate._picker.records_whole_suite() and gate._picker.records_whole_suite()
    try:
        await changed(gate, workspace, "mod.py", BAD)
        outcome = await verdict(gate, workspace, "mod.py")
    finally:
        await gate.close()

    assert "no tests were collected" in outcome.detail, outcome.detail
    # The narrowed run (not the whole suite) recorded; the whole files did not.
    assert "first_record" in gate.timings and "first_files_pytest" in gate.timings
    assert "first_files_record" not in gate.timings


async def test_a_change_only_to_tool_caches_runs_no_test(tmp_path: Path) -> None:
    # A command's pytest wrote .pytest_cache and pytest-benchmark's
    # .benchmarks: no test the gate runs can read them.
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": TESTS})
    project(root, {".benchmarks/Linux/0001_run.json": "{}", ".pytest_cache/v/lastfailed": "{}"})
    gate = gate_for(root)
    workspace = FakeWorkspace({}, root=str(root))
    outcome = await verdict(
        gate, workspace, ".benchmarks/Linux/0001_run.json", ".pytest_cache/v/lastfailed"
    )
    assert outcome.detail == "nothing changed" and not outcome.blockers
    assert gate.timings == {}  # no shadow, no pytest
