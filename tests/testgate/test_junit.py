"""JUnit reports read into results: pytest's, and another runner's."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.testgate.junit import parse_junit, workspace_frames
from rein.testgate.shadow import Shadow

PYTEST_REPORT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_a.TestK" name="test_x" file="tests/test_a.py" line="2">
<failure message="assert (1 + 1) == 3">Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/_pytest/python.py", line 187, in pytest_pyfunc_call
    result = testfunction(**testargs)
  File "/tmp/shadow/proj/tests/test_a.py", line 5, in test_x
    assert add(1, 1) == 3
  File "/tmp/shadow/proj/src/calc.py", line 2, in add
    return a + b
AssertionError: assert (1 + 1) == 3</failure>
<system-out>----- Captured Out -----
hello out
</system-out></testcase>
<testcase classname="tests.test_a" name="test_p[a.b-1]" file="tests/test_a.py" line="6"/>
<testcase classname="tests.test_a" name="test_s" file="tests/test_a.py" line="9">
<skipped message="nope"/></testcase>
<testcase classname="" name="tests.test_b" file="tests/test_b.py">
<error message="collection failure">tests/test_b.py:1: in &lt;module&gt;
    import nonexistent_mod
E   ModuleNotFoundError: No module named 'nonexistent_mod'</error></testcase>
</testsuite></testsuites>"""

JEST_REPORT = """<testsuites name="jest tests"><testsuite name="sum">
<testcase classname="sum adds" name="sum adds 1 + 2" time="0.002">
<failure>Error: expect(received).toBe(expected)</failure></testcase>
<testcase classname="sum adds" name="sum adds 0" time="0.001"/>
</testsuite></testsuites>"""


def test_pytest_cases_get_rerunnable_node_ids_outcomes_and_output() -> None:
    results = parse_junit(PYTEST_REPORT)
    assert [(r.node_id, r.outcome) for r in results] == [
        ("tests/test_a.py::TestK::test_x", "failed"),
        ("tests/test_a.py::test_p[a.b-1]", "passed"),
        ("tests/test_a.py::test_s", "skipped"),
        ("tests/test_b.py", "error"),
    ]
    failed = results[0]
    assert failed.message == "assert (1 + 1) == 3"
    assert failed.output == "hello out"
    assert failed.line == 3  # the report's line is 0-based
    assert [r.collection_error for r in results] == [False, False, False, True]


def test_only_the_workspace_frames_are_kept_in_either_traceback_style() -> None:
    shadow = Shadow(root=Path("/tmp/shadow/proj"), source=Path("/home/me/proj"))
    failed, *_, collection = parse_junit(PYTEST_REPORT)
    frames = workspace_frames(failed.text, shadow.relative)
    assert [(f.path, f.line, f.function, f.code) for f in frames] == [
        ("tests/test_a.py", 5, "test_x", "assert add(1, 1) == 3"),
        ("src/calc.py", 2, "add", "return a + b"),
    ]
    frames = workspace_frames(collection.text, shadow.relative)
    assert [(f.path, f.line, f.code) for f in frames] == [
        ("tests/test_b.py", 1, "import nonexistent_mod")
    ]


def test_another_runners_report_is_read_with_its_own_names() -> None:
    results = parse_junit(JEST_REPORT)
    assert [(r.node_id, r.outcome) for r in results] == [
        ("sum adds::sum adds 1 + 2", "failed"),
        ("sum adds::sum adds 0", "passed"),
    ]


def test_what_is_not_a_report_says_so() -> None:
    with pytest.raises(ValueError, match="not XML"):
        parse_junit("collected 3 items")
    with pytest.raises(ValueError, match="<html>"):
        parse_junit("<html/>")
