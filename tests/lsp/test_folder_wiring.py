"""The editor's folder as a FolderHost wires it: a person's first edit
makes the folder (documents, diagnostics) but no session manager; the
editor's diagnostics hear every change and the coordinator hears what Rein
is about to send."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rein.harness.ports import Mutation
from rein.lsp import create_server
from rein.lsp.server import ReinServer


class _Sink:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def _notify(server: ReinServer, method: str, params: dict[str, Any]) -> None:
    frame = {"jsonrpc": "2.0", "method": method, "params": params}
    server.protocol.handle_frame(json.dumps(frame).encode())


def _initialized(root: Path) -> ReinServer:
    server = create_server()
    server.protocol.set_writer(_Sink())
    frame = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
    }
    server.protocol.handle_frame(json.dumps(frame).encode())
    return server


def test_a_persons_first_edit_builds_no_session_manager(tmp_path: Path) -> None:
    server = _initialized(tmp_path)
    uri = (tmp_path / "a.py").as_uri()
    _notify(
        server,
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}},
    )
    _notify(
        server,
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": "x = 2\n"}],
        },
    )
    folder = server._folder
    assert folder is not None
    assert not folder.has_manager
    assert server.state()["sessionsInMemory"] == []
    assert not folder.has_manager


def test_the_editors_parts_are_wired_by_the_folder(tmp_path: Path) -> None:
    server = _initialized(tmp_path)
    workspace, coordinator = server.adapters()
    source = server._editor_diagnostics
    assert source is not None and server.folder.source is source
    server.mutations.record(Mutation(7, ("a.py",), "person"))
    assert coordinator.generation == 7
    assert "a.py" in source._watched  # owed until the editor says it analysed it
    assert workspace._sending == [coordinator.expect]
