"""The suite's own shape: every end-to-end test is marked ``e2e`` and runs
after every other test, whatever order the paths are given in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: A plugin for the collecting pytest: once every other hook has marked and
#: ordered the items, it prints each one's id and whether ``-m e2e`` would
#: select it (a marker the module set or the conftest added).
_PLUGIN = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    for item in session.items:
        marked = item.get_closest_marker("e2e") is not None
        print("SHAPE", "e2e" if marked else "unit", item.nodeid)
"""


def _without_autoload_off(env: os._Environ[str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}


def _collect(tmp: Path, *paths: str) -> list[tuple[str, bool]]:
    """The collected tests in run order, each with whether it is marked
    ``e2e``: one collection-only pass of a real pytest over ``paths``."""
    (tmp / "rein_suite_shape.py").write_text(_PLUGIN, encoding="utf-8")
    pythonpath = os.pathsep.join(p for p in (str(tmp), os.environ.get("PYTHONPATH")) if p)
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    out = subprocess.run(
        [*command, "-p", "rein_suite_shape", *paths],
        cwd=REPO,
        # This suite's own plugins (pytest-asyncio's mode, pytest-lsp) are
        # what the collecting pytest must load (tests/conftest.py turns
        # their autoload off for the servers' children).
        env={**_without_autoload_off(os.environ), "PYTHONPATH": pythonpath},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    shaped = [line.split(" ", 2) for line in out.stdout.splitlines() if line.startswith("SHAPE ")]
    return [(nodeid, mark == "e2e") for _, mark, nodeid in shaped]


#: Tests that start real servers, subprocesses or analyzers.
REAL = (
    "tests/e2e/",
    "tests/lsp/test_server.py",
    "tests/lsp/test_prompt.py",
    "tests/lsp/test_sessions.py",
    "tests/lsp/test_preview.py",
    "tests/lsp/test_plan_act_over_http.py",
)


def test_e2e_tests_are_marked_and_run_last(tmp_path: Path) -> None:
    # The paths in the "wrong" order: e2e and lsp before the unit tests.
    collected = _collect(tmp_path, "tests/e2e", "tests/lsp", "tests/store")
    order = [nodeid for nodeid, _ in collected]
    marked = {nodeid for nodeid, e2e in collected if e2e}
    real = [t for t in order if t.startswith(REAL)]
    assert real and len(real) < len(order)
    assert set(real) <= marked
    # Every marked test runs after every unmarked one.
    first = min(order.index(t) for t in marked)
    assert all(t in marked for t in order[first:])
    assert not any(t in marked for t in order[:first])
