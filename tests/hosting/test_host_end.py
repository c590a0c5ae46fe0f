"""A host's end (``rein run``'s, a benchmark's) closes its sessions' gates
and waits for them on its own event loop: the tests gate's warm pytest is
reaped, its transport closed, before the host's ``async with`` returns.
Before, the close was a task nobody awaited: the loop ended first (it
cancelled the task), and the process's transport, unclosed, was reported
as an unraisable exception in whatever test collected it later."""

from __future__ import annotations

from pathlib import Path

from rein.config import ReinConfig
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from rein.testgate.gate import TestGate

TESTS = "from mod import f\n\n\ndef test_f():\n    assert f() == 1\n"


async def test_the_hosts_end_reaps_its_sessions_warm_pytest(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text("def f():\n    return 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(TESTS)
    host = HeadlessSession(tmp_path, ReplayModel([]), ReinConfig(), analyzers=(), watch=False)
    async with host:
        gates = host.session.gates
        assert gates is not None
        [gate] = [g for g in gates.gates if isinstance(g, TestGate)]
        assert await gate.warm_ready(60)
        warm = gate._warm
        assert warm is not None and warm._process is not None
        process = warm._process
        assert process.returncode is None
    assert process.returncode is not None
    assert process._transport.is_closing()  # type: ignore[attr-defined]
