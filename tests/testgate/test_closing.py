"""A session closed (discarded, evicted, its host ending) closes its gates:
the tests gate's warm pytest stops and its folder goes, and so do its
kept shadow trees."""

from __future__ import annotations

from pathlib import Path

import anyio

from rein.harness import Agent
from rein.harness.gating.gates import GatePipeline
from rein.process.kept import KeptProcessLauncher
from rein.providers.replay import ReplayModel
from rein.session.session import Session, gates_closed
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import BAD, GOOD, changed, gate_for, project, verdict


async def test_a_closed_session_stops_its_tests_gates_warm_pytest(tmp_path: Path) -> None:
    tests = "from mod import first_n\n\n\ndef test_x():\n    assert first_n([1], 1) == [1]\n"
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": tests})
    gate = gate_for(root, launcher=KeptProcessLauncher())
    session = Session(id="ses_test", agent=Agent(ReplayModel([])), gates=GatePipeline([gate]))
    try:
        assert await gate.warm_ready(60)
        client = gate._warm.client() if gate._warm is not None else None
        assert client is not None and await anyio.Path(client.socket).exists()
        workspace = FakeWorkspace({"mod.py": GOOD}, root=str(root))
        await changed(gate, workspace, "mod.py", BAD)
        await verdict(gate, workspace, "mod.py")
        # The shadow trees the verdict made are kept for the next verdicts.
        trees = [anyio.Path(tree.root.parent) for tree in gate.runs.trees.values()]
        assert trees and all([await tree.is_dir() for tree in trees])
        session.close()
        await gates_closed()
        socket, folder = anyio.Path(client.socket), anyio.Path(client.script).parent
        stopped = not await socket.exists() and not await folder.exists()
        left = [tree for tree in trees if await tree.exists()]
    finally:
        await gate.close()
    assert stopped
    assert left == []
