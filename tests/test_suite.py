"""The suite's own shape: every end-to-end test is marked ``e2e`` and runs
after every other test, whatever order the paths are given in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _collect(*args: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if "::" in line]


#: Tests that start real servers, subprocesses or analyzers.
REAL = (
    "tests/e2e/",
    "tests/lsp/test_server.py",
    "tests/lsp/test_prompt.py",
    "tests/lsp/test_sessions.py",
    "tests/lsp/test_preview.py",
    "tests/lsp/test_plan_act_over_http.py",
)


def test_e2e_tests_are_marked_and_run_last() -> None:
    # The paths in the "wrong" order: e2e and lsp before the unit tests.
    paths = ("tests/e2e", "tests/lsp", "tests/store")
    order = _collect(*paths)
    marked = set(_collect("-m", "e2e", *paths))
    real = [t for t in order if t.startswith(REAL)]
    assert real and len(real) < len(order)
    assert set(real) <= marked
    # Every marked test runs after every unmarked one.
    first = min(order.index(t) for t in marked)
    assert all(t in marked for t in order[first:])
    assert not any(t in marked for t in order[:first])
