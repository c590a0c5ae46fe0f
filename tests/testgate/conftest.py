from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.testgate.projects import MADE


@pytest.fixture(autouse=True)
def _bare_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny projects' pytest runs without the plugins of the
    interpreter running this suite (seconds each otherwise); the gate passes
    the environment on to its children, and the selection reads the
    options given there: a developer's own ``PYTEST_ADDOPTS`` (say
    ``--doctest-modules``) is not the tiny projects' (a test that needs it
    sets it)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


@pytest.fixture(autouse=True)
async def _gates_closed() -> AsyncIterator[None]:
    """Every gate the test made (``projects.gate_for``) is closed at its
    end, before its event loop: what a gate still runs (a refresh, a warm
    pytest) ends with its test. Left to the loop's close, a task cancelled
    there while it started a process never ended (Python 3.11's asyncio),
    and a worker of this suite hung in the teardown (2026-12-07)."""
    MADE.clear()
    yield
    while MADE:
        await MADE.pop().close()
