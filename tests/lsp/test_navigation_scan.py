"""The folder's walk for its navigation servers (``rein serve`` with a
client without navigation of its own) runs on a thread: the server answers
other requests meanwhile, and the folder gets the navigator an inline scan
gives (tests/session/test_assembly.py builds its sessions inline)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from rein.disk.lazy_navigator import LazyPoolNavigator
from rein.lsp import create_server, folder_navigation
from rein.lsp.server import ReinServer


class _Answers:
    """The server's output: the answers by request id, awaited (bounded)."""

    def __init__(self) -> None:
        self.by_id: dict[Any, dict[str, Any]] = {}
        self._changed = asyncio.Event()

    def write(self, data: bytes) -> None:
        body = json.loads(data.split(b"\r\n\r\n", 1)[1])
        if "id" in body and "method" not in body:
            self.by_id[body["id"]] = body
            self._changed.set()

    def close(self) -> None:
        pass

    async def answer(self, request_id: int) -> dict[str, Any]:
        async with asyncio.timeout(30):
            while request_id not in self.by_id:
                self._changed.clear()
                await self._changed.wait()
        return self.by_id[request_id]


def _frame(server: ReinServer, **message: Any) -> None:
    server.protocol.handle_frame(json.dumps({"jsonrpc": "2.0", **message}).encode())


def _server(root: Path, out: _Answers) -> ReinServer:
    server = create_server()
    server.protocol.set_writer(out)
    options = {"rein": {"storagePath": str(root.parent / "store")}}
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
    _frame(server, id=1, method="initialize", params={**params, "initializationOptions": options})
    return server


def _kind(server: ReinServer) -> tuple[str, list[str]] | None:
    navigator = server.folder.navigator
    if navigator is None:
        return None
    assert isinstance(navigator, LazyPoolNavigator)
    return type(navigator).__name__, [spec.name for spec in navigator.specs]


async def test_the_server_answers_while_the_folder_is_scanned_and_builds_what_inline_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    entered, release = threading.Event(), threading.Event()
    scanned_on: list[threading.Thread] = []
    scan = folder_navigation.workspace_specs

    def held_scan(*args: Any, **kwargs: Any) -> Any:
        """The walk of a large folder, held until the test lets it go on."""
        scanned_on.append(threading.current_thread())
        entered.set()
        assert release.wait(30), "the test never let the scan go on"
        return scan(*args, **kwargs)

    monkeypatch.setattr(folder_navigation, "workspace_specs", held_scan)
    out = _Answers()
    server = _server(root, out)
    _frame(server, method="initialized", params={})
    assert await asyncio.to_thread(entered.wait, 30)
    assert scanned_on == [scanned_on[0]] and scanned_on[0] is not threading.main_thread()

    # While the walk is held: a request that needs the folder waits for it,
    # another is answered.
    _frame(server, id=2, method="rein/sessions", params={})
    _frame(server, id=3, method="rein/serverState", params={})
    assert (await out.answer(3))["result"]["sessionsInMemory"] == []
    assert 2 not in out.by_id
    release.set()
    assert (await out.answer(2))["result"] == {"sessions": []}
    assert len(scanned_on) == 1  # the initialized scan, shared by the request

    scanned = _kind(server)
    inline = _server(root, _Answers())  # built on first use, without awaiting a scan
    try:
        assert _kind(inline) == scanned
        assert len(scanned_on) == 2
    finally:
        await inline.folder.close()
        await server.folder.close()
