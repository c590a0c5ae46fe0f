"""A real ``rein run`` (replay model) whose edit breaks a test: the tests
gate blocks with exactly that test, the repair fixes it, the run passes;
the same when a command (``sed -i``) makes the edit and the repair."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.forkserver import REIN

SCRIPT = """
turns:
  - tool_calls:
      - name: edit_file
        arguments: {path: mod.py, old_string: "xs[:n]", new_string: "xs[: n + 1]"}
  - text: done
  - expect: {last_message_contains: "tests/test_mod.py::test_first_two failed"}
    tool_calls:
      - name: edit_file
        arguments: {path: mod.py, old_string: "xs[: n + 1]", new_string: "xs[0:n]"}
  - text: fixed the slice
"""

TESTS = """from mod import first_n


def test_first_two():
    assert first_n([1, 2, 3], 2) == [1, 2]


def test_already_broken():
    assert first_n([1], 1) == [2]
"""


#: The same change and repair, made by commands.
SED_SCRIPT = r"""
turns:
  - tool_calls:
      - name: run_command
        arguments: {command: "sed -i 's/xs\\[:n\\]/xs[: n + 1]/' mod.py"}
  - text: done
  - expect: {last_message_contains: "tests/test_mod.py::test_first_two failed"}
    tool_calls:
      - name: run_command
        arguments: {command: "sed -i 's/xs\\[: n + 1\\]/xs[0:n]/' mod.py"}
  - text: fixed the slice
"""


def _run(tmp_path: Path, script: str, config: str, exit_code: int = 0) -> tuple[Path, list[dict]]:
    """``rein run`` over a small project with ``script`` (exiting with
    ``exit_code``): the tests gate's results."""
    ws = tmp_path / "ws"
    (ws / "tests").mkdir(parents=True)
    (ws / "mod.py").write_text("def first_n(xs, n):\n    return xs[:n]\n")
    (ws / "tests" / "test_mod.py").write_text(TESTS)
    (tmp_path / "s.yaml").write_text(script)
    (tmp_path / "rein.yaml").write_text(config)
    args = [
        "run", "slice it", "-w", str(ws), "--provider", "replay",
        "--script", str(tmp_path / "s.yaml"), "--config", str(tmp_path / "rein.yaml"),
        "--storage", str(tmp_path / "store"), "--yes", "--json",
    ]  # fmt: skip
    out = subprocess.run(
        [*REIN, *args],
        capture_output=True,
        text=True,
        timeout=300,
        # The tiny project's pytest without this suite's plugins (seconds each).
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    assert out.returncode == exit_code, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    return ws, [e for e in events if e.get("type") == "gate_result" and e["gate"] == "tests"]


def test_rein_run_is_blocked_by_the_test_it_broke_and_passes_after_the_repair(
    tmp_path: Path,
) -> None:
    ws, results = _run(tmp_path, SCRIPT, "gates: {analyzer: {enabled: false}}\n")
    assert [r["status"] for r in results] == ["blocked", "passed"]
    assert [b["message"] for b in results[0]["blockers"]] == [
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]"
    ]
    # The test that was failing before the run is named, never blocking
    # (the repair is not the text before the run: its tests run).
    assert "tests/test_mod.py::test_already_broken" in results[1]["detail"]
    # Both verdicts were judged while the model took its turn: the inputs
    # the verdict read (the texts, the generation) were the judgement's.
    assert all("judged ahead" in r["detail"] for r in results), results
    assert (ws / "mod.py").read_text() == "def first_n(xs, n):\n    return xs[0:n]\n"


def test_a_command_s_change_is_judged_against_the_text_before_the_command(
    tmp_path: Path,
) -> None:
    """Before, the earlier text of a file a command changed was not known:
    the broken test, failing in the baseline too, left the verdict
    "unverified" and the run completed with the bug."""
    config = "gates: {analyzer: {enabled: false}}\napproval: {command: allow}\n"
    ws, results = _run(tmp_path, SED_SCRIPT, config)
    assert [r["status"] for r in results] == ["blocked", "passed"]
    assert [b["message"] for b in results[0]["blockers"]] == [
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]"
    ]
    assert "tests/test_mod.py::test_already_broken" in results[0]["detail"]
    # sed's own temporary files changed nothing: the test file importing
    # mod.py was selected, not the whole suite.
    assert all("1 of 1 test files selected" in r["detail"] for r in results), results
    assert (ws / "mod.py").read_text() == "def first_n(xs, n):\n    return xs[0:n]\n"


#: One change, then done: no repair to come.
ONE_CHANGE = """
turns:
  - tool_calls:
      - name: edit_file
        arguments: {path: mod.py, old_string: "xs[:n]", new_string: "xs[0:n]"}
  - text: done
"""


def test_a_run_whose_tests_could_not_run_exits_5_and_says_why(tmp_path: Path) -> None:
    """Old (trial31): the gate's line said only "judged ahead, while the
    model took its turn", why was in run_end alone, and ``rein run``
    exited 0: CI could not tell it from a pass."""
    config = (
        "gates: {analyzer: {enabled: false}, tests: {command: 'rein-no-such-runner {junit}'}}\n"
    )
    _ws, results = _run(tmp_path, ONE_CHANGE, config, exit_code=5)
    [result] = results
    assert result["status"] == "unverified"
    assert "rein-no-such-runner" in result["detail"], result["detail"]
