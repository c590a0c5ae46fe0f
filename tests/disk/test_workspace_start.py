"""A server that analyses the workspace by itself (a ``diagnostic_mode_setting``,
basedpyright's workspace mode) is shown no file at start: pyright checks
the open files first, so with every file open a change's files and
importers waited behind unrelated ones. The run-start snapshot then
cannot wait for every opened file's publish: the server is not idle until
it has published at all (its workspace analysis begun). A tiny language
server (a real process over stdio) that analyses its "workspace" only
once a file is opened stands in for it."""

from __future__ import annotations

import sys
from pathlib import Path

from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.analyzers import AnalyzerPool
from rein.harness.ports import Mutation
from tests.fakes.stdio_framing import FRAMING

#: Publishes nothing until a file is opened; then, as a workspace analysis,
#: an error in b.x (never opened) and none in the opened file.
WORKSPACE = (
    FRAMING
    + """\
root = None
for message in messages():
    method = message.get("method")
    if method == "initialize":
        root = message["params"]["rootUri"]
        send({"id": message["id"], "result": {"capabilities": {}}})
    elif method == "textDocument/didOpen":
        opened = message["params"]["textDocument"]
        diagnostic = {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
            "message": "workspace error",
            "severity": 1,
        }
        send({"method": "textDocument/publishDiagnostics",
              "params": {"uri": root + "/b.x", "diagnostics": [diagnostic]}})
        send({"method": "textDocument/publishDiagnostics",
              "params": {"uri": opened["uri"], "version": opened["version"], "diagnostics": []}})
    elif method == "shutdown":
        send({"id": message["id"], "result": None})
    elif method == "exit":
        break
"""
)


async def test_a_whole_workspace_server_is_not_idle_before_it_published(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.x").write_text("a\n")
    (ws / "b.x").write_text("b\n")
    script = tmp_path / "workspace.py"
    script.write_text(WORKSPACE)
    spec = AnalyzerSpec(
        "whole",
        (sys.executable, str(script)),
        frozenset({".x"}),
        pull=False,
        versioned_publish=True,
        diagnostic_mode_setting="analysis.diagnosticMode",
    )
    async with AnalyzerPool(ws, [spec], quiet_ms=50) as pool:
        [server] = pool.analyzers
        # Shown nothing at start, and not idle: its analysis has not begun
        # (nothing is owed, no progress is open).
        assert server.versions == {}
        assert not await pool.wait_idle(0.5)
        # A change opens its file; the server's analysis publishes b.x too.
        pool.on_mutation(Mutation(1, ("a.x",), "agent"))
        assert list(server.versions) == ["a.x"]
        assert await pool.wait_idle(10)
        snap = await pool.snapshot()
    assert [(d.path, d.message) for d in snap.diagnostics] == [("b.x", "workspace error")]
    assert not snap.stale
