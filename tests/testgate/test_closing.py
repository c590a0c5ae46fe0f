"""A session closed (discarded, evicted, its host ending) closes its gates:
the tests gate's warm pytest stops and its folder goes."""

from __future__ import annotations

from pathlib import Path

import anyio

from rein.harness import Agent
from rein.harness.gating.gates import GatePipeline
from rein.process.kept import KeptProcessLauncher
from rein.providers.replay import ReplayModel
from rein.session.session import Session, gates_closed
from tests.testgate.projects import GOOD, gate_for, project


async def test_a_closed_session_stops_its_tests_gates_warm_pytest(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": "def test_x(): pass\n"})
    gate = gate_for(root, launcher=KeptProcessLauncher())
    session = Session(id="ses_test", agent=Agent(ReplayModel([])), gates=GatePipeline([gate]))
    try:
        assert await gate.warm_ready(60)
        client = gate._warm.client() if gate._warm is not None else None
        assert client is not None and await anyio.Path(client.socket).exists()
        session.close()
        await gates_closed()
        socket, folder = anyio.Path(client.socket), anyio.Path(client.script).parent
        stopped = not await socket.exists() and not await folder.exists()
    finally:
        await gate.close()
    assert stopped
