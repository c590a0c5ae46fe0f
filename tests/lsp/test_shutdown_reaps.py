"""``shutdown`` closes the sessions' gates before it is answered: the
tests gate's warm pytest (a kept process) is reaped and its transport
closed on the server's loop, not left to die with the server after
``exit`` (or, in a host whose loop ends, to be reported as an unclosed
transport)."""

from __future__ import annotations

import json
from pathlib import Path

from rein.config import load_config
from rein.lsp import create_server
from rein.providers.replay import ReplayModel
from rein.testgate.gate import TestGate

TESTS = "from mod import f\n\n\ndef test_f():\n    assert f() == 1\n"


class _Sink:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


async def test_shutdown_reaps_the_sessions_warm_pytest(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "mod.py").write_text("def f():\n    return 1\n")
    (root / "tests" / "test_mod.py").write_text(TESTS)
    server = create_server()
    server.protocol.set_writer(_Sink())
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    server.protocol.handle_frame(json.dumps(initialize).encode())
    server.config = load_config({"storagePath": str(tmp_path / "storage")}, "test")
    server.model_factory = lambda _config: ReplayModel([])
    session = server.new_session(mode="agent", title="t")
    assert session.gates is not None
    [gate] = [g for g in session.gates.gates if isinstance(g, TestGate)]
    assert await gate.warm_ready(60)
    assert gate._warm is not None and gate._warm._process is not None
    process = gate._warm._process
    assert process.returncode is None

    await server.shutdown_sessions()

    assert process.returncode is not None
    assert process._transport.is_closing()  # type: ignore[attr-defined]
