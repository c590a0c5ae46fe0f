from __future__ import annotations

import pytest


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
