"""The first run's own re-run of a failing test: its fixtures set up and
torn down again as pytest would, a setup error not re-run, both outcomes
in the report; the baseline's run fed the failing tests as they come
(real pytest)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from rein.process.runner import SubprocessRunner
from rein.testgate.baseline_feed import Feed
from rein.testgate.runner import REPORT, RunnerSpec, run_tests
from rein.testgate.shadow import build_shadow
from tests.testgate.projects import project

TESTS = """import os

import pytest


def log(line):
    with open(os.environ["FIXTURE_LOG"], "a") as out:
        out.write(line + "\\n")


@pytest.fixture(scope="module")
def wide():
    log("wide up")
    yield
    log("wide down")


@pytest.fixture
def narrow():
    log("narrow up")
    yield
    log("narrow down")


def test_fails(wide, narrow):
    log("fails")
    assert False, "always"


def test_next(wide):
    log("next")


@pytest.fixture
def broken():
    log("broken up")
    raise RuntimeError("cannot set up")


def test_setup_error(broken):
    log("never")
"""


async def test_a_failing_test_runs_again_with_its_fixtures_set_up_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "fixtures.log"
    monkeypatch.setenv("FIXTURE_LOG", str(log))
    shadow = build_shadow(project(tmp_path / "proj", {"tests/test_f.py": TESTS}), {})
    try:
        run = await run_tests(
            SubprocessRunner(str(shadow.root)),
            RunnerSpec(python=sys.executable),
            shadow,
            ["tests/test_f.py"],
            60,
            again=True,
        )
        rows = [json.loads(line) for line in shadow.own(REPORT).read_text().splitlines()]
    finally:
        shadow.remove()

    # The function-scoped fixture torn down and set up again around the
    # second call; the module's stays up (the next test needs it); the
    # failed setup is not run again.
    assert log.read_text().splitlines() == [
        "wide up",
        "narrow up",
        "fails",
        "narrow down",
        "narrow up",
        "fails",
        "narrow down",
        "next",
        "broken up",
        "wide down",
    ]
    # The run's results are the first calls' (pytest's own reports).
    assert [(r.node_id.split("::")[1], r.outcome) for r in run.results] == [
        ("test_fails", "failed"),
        ("test_next", "passed"),
        ("test_setup_error", "error"),
    ]
    failed = [(r["nodeid"].split("::")[1], r["when"], r["again"]) for r in rows if r.get("again")]
    assert failed == [("test_fails", "call", True)]
    again = [r for r in rows if r["kind"] == "again"]
    assert again == [
        {
            "kind": "again",
            "nodeid": "tests/test_f.py::test_fails",
            "outcome": "failed",
            "same": True,
        }
    ]


FED = """import os


def log(line):
    with open(os.environ["FIXTURE_LOG"], "a") as out:
        out.write(line + "\\n")


def test_one():
    log("one")


def test_two():
    log("two")
    with open(os.environ["FED_FIFO"], "w") as fifo:
        fifo.write("ran")
    assert False


class TestThree:
    def test_in(self):
        log("three")
"""


async def test_a_feeds_run_runs_the_tests_named_as_they_come_until_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "fed.log"
    log.touch()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # test_two says it ran there
    monkeypatch.setenv("FIXTURE_LOG", str(log))
    monkeypatch.setenv("FED_FIFO", str(fifo))
    shadow = build_shadow(project(tmp_path / "proj", {"tests/test_fed.py": FED}), {})
    feed = Feed()
    feed.give(["tests/test_fed.py::test_two"])  # before its pytest starts
    try:
        run = asyncio.ensure_future(
            run_tests(
                SubprocessRunner(str(shadow.root)),
                RunnerSpec(python=sys.executable),
                shadow,
                ["tests/test_fed.py"],
                60,
                feed=feed,
            )
        )
        with anyio.fail_after(30):
            said = await anyio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True)
        assert said == "ran"
        # Still running: it waits for the feed.
        await asyncio.sleep(0)
        assert not run.done()
        feed.give(["tests/test_fed.py::TestThree", "tests/test_fed.py::test_missing"])
        feed.end()
        with anyio.fail_after(30):
            done = await run
    finally:
        shadow.remove()

    # Only the tests named ran, in the order named (a class: its tests).
    assert log.read_text().splitlines() == ["two", "three"]
    assert [(r.node_id.split("::", 1)[1], r.outcome) for r in done.results] == [
        ("test_two", "failed"),
        ("TestThree::test_in", "passed"),
    ]
    assert done.unverified is None
