"""Messages before ``initialize``, as the LSP spec says: a notification is
dropped (``exit`` excepted), a request refused with ServerNotInitialized
(-32002); the server goes on, answers ``initialize`` as usual and shows no
internal error (its handlers, which need the workspace ``initialize`` sets
up, do not run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rein.fuzz import fuzz_workspace
from rein.lsp import create_server

BOUND_S = 15.0


@pytest.mark.e2e
def test_the_real_server_drops_early_notifications_and_refuses_early_requests(
    tmp_path: Path,
) -> None:
    client = fuzz_workspace(tmp_path)
    uri = (client.root / "app.py").as_uri()
    # Queued before start(): written to the server before its initialize.
    client.notify("rein/diagnosticsChanged", {"uris": [uri]})
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "x = 1\n"}]},
    )
    early = client.request("rein/sessions", {})
    client.start(timeout_s=BOUND_S)  # raises unless initialize is answered
    try:
        refused = client.wait(early, BOUND_S)
        assert refused is not None
        assert refused["error"] == {
            "code": -32002,
            "message": "rein/sessions: the server is not initialized (initialize first)",
        }
        answer = client.wait(client.request("rein/sessions", {}), BOUND_S)
        assert answer is not None and answer["result"]["sessions"] == []
        # What the server shows or logs of those messages came before its
        # answer to initialize, so it has arrived.
        assert not [m for m in client.messages_shown if "internal error" in m]
        log = client.log()
        assert [line for line in log.splitlines() if " ERROR " in line or "Traceback" in line] == []
        for method in ("rein/diagnosticsChanged", "textDocument/didChange"):
            assert f"dropped a notification ({method!r}) that came before initialize" in log
    finally:
        client.close()


def test_exit_before_initialize_still_ends_the_server() -> None:
    server = create_server()
    exit_ = {"jsonrpc": "2.0", "method": "exit"}
    with pytest.raises(SystemExit) as ended:
        server.protocol.handle_frame(json.dumps(exit_).encode())
    assert ended.value.code == 1  # no shutdown came first
