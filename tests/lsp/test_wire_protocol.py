"""ReinProtocol as a unit: frames in, the bytes it writes out (no process)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from lsprotocol import types as lsp

from rein.lsp import create_server
from rein.lsp._protocol import public_error
from rein.lsp.channel import ClientChannel
from rein.lsp.client_timeout import ClientTimeout
from rein.lsp.server import ReinServer


class Capture:
    def __init__(self) -> None:
        self.data = b""
        #: Set at each write, once a test made it (an async handler's answer).
        self.written: asyncio.Event | None = None

    def write(self, data: bytes) -> None:
        self.data += data
        if self.written is not None:
            self.written.set()

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        out = []
        rest = self.data
        while rest:
            head, _, rest = rest.partition(b"\r\n\r\n")
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            out.append(json.loads(rest[:length]))
            rest = rest[length:]
        return out


def _server() -> tuple[ReinServer, Capture]:
    """A server initialized as a client's (before that, requests are
    refused), with what it writes from then on."""
    server = create_server()
    capture = Capture()
    server.protocol.set_writer(capture)
    params = {"processId": None, "rootUri": None, "capabilities": {}}
    server.protocol.handle_frame(_request(0, "initialize", params))
    assert [m["id"] for m in capture.messages()] == [0]
    capture.data = b""
    return server, capture


def _request(msg_id: Any, method: str, params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


def test_an_internal_error_reaches_the_client_without_traceback_or_path() -> None:
    server, capture = _server()

    @server.feature("test/boom")
    def boom(ls: ReinServer, params: Any) -> None:
        raise FileNotFoundError("/home/someone/secret/project/file.py")

    server.protocol.handle_frame(_request(7, "test/boom", {}))
    [answer] = capture.messages()
    assert answer["id"] == 7
    assert answer["error"] == {
        "code": -32603,
        "message": "internal error (FileNotFoundError); the details are in the server log",
    }


def test_public_error_drops_traceback_data_and_bounds_the_message() -> None:
    error = lsp.ResponseError(code=-32602, message="m" * 5000, data={"traceback": ["File x"]})
    shown = public_error(error)
    assert shown.data is None
    assert len(shown.message) < 1100


def test_an_unknown_command_name_is_quoted_bounded() -> None:
    server, capture = _server()
    name = "n" * 10_000_000
    server.protocol.handle_frame(
        _request(1, "workspace/executeCommand", {"command": name, "arguments": []})
    )
    [answer] = capture.messages()
    assert answer["error"]["code"] == -32602
    assert "command: no command 'nnnn" in answer["error"]["message"]
    assert len(answer["error"]["message"]) < 300


@pytest.mark.parametrize(
    "params, named",
    [
        pytest.param({}, "command", id="no-command"),
        pytest.param(None, "params", id="null"),
        pytest.param([], "params", id="array"),
        pytest.param("rein.fix", "params", id="string"),
        pytest.param({"command": "rein.abort", "arguments": 5}, "arguments", id="arguments-5"),
        pytest.param({"command": "rein.abort", "arguments": "ab"}, "arguments", id="arguments-str"),
        pytest.param(
            {"command": "rein.abort", "arguments": True}, "arguments", id="arguments-bool"
        ),
    ],
)
def test_execute_command_with_bad_params_is_answered_naming_the_field(
    params: Any, named: str
) -> None:
    server, capture = _server()
    server.protocol.handle_frame(_request("x", "workspace/executeCommand", params))
    [answer] = capture.messages()
    assert answer["id"] == "x"
    assert answer["error"]["code"] == -32602
    assert named in answer["error"]["message"]


def test_code_action_without_params_names_the_missing_fields() -> None:
    server, capture = _server()
    server.protocol.handle_frame(_request(2, "textDocument/codeAction", {}))
    [answer] = capture.messages()
    assert answer["error"]["code"] == -32602
    assert "params.textDocument" in answer["error"]["message"]


async def test_a_nested_object_with_a_jsonrpc_key_is_just_data() -> None:
    server, capture = _server()
    capture.written = asyncio.Event()
    params = {"sessionId": {"jsonrpc": "2.0", "id": 1, "method": "rein/abort"}}
    server.protocol.handle_frame(_request(3, "rein/abort", params))
    # rein/abort is async (a stored session is looked up): answered by its task.
    await asyncio.wait_for(capture.written.wait(), 10)
    [answer] = capture.messages()
    assert answer["error"]["code"] == -32602
    assert "sessionId" in answer["error"]["message"]


async def test_a_late_answer_to_a_request_given_up_on_is_dropped_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Rein gives up on a request (its bound passed, its run was
    cancelled): the client is told ($/cancelRequest), and its late answer
    finds the request still pending, so it is dropped with nothing logged
    above debug (had the pending future been cancelled, pygls's set_result
    on it would raise, logged as a failed response with its traceback)."""
    server, capture = _server()
    channel = ClientChannel(server, bound=lambda method: 0.0)
    with pytest.raises(ClientTimeout):
        await channel.request("rein/diagnostics", {"uris": None})
    asked, cancel = capture.messages()
    assert asked["method"] == "rein/diagnostics"
    assert cancel == {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": asked["id"]}}
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        server.protocol.handle_frame(
            json.dumps({"jsonrpc": "2.0", "id": asked["id"], "result": {"items": []}}).encode()
        )
    assert [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG] == []
    assert len(capture.messages()) == 2  # nothing sent back
    assert asked["id"] not in server.protocol._request_futures


def test_a_request_after_shutdown_is_answered() -> None:
    server, capture = _server()
    server.protocol._shutdown = True
    server.protocol.handle_frame(_request(9, "rein/sessions", {}))
    [answer] = capture.messages()
    assert answer == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32600, "message": "the server is shutting down"},
    }


def test_a_failing_notification_is_shown_once_without_details() -> None:
    server, capture = _server()

    @server.feature("test/note")
    def note(ls: ReinServer, params: Any) -> None:
        raise RuntimeError("/private/path/leaked.py")

    for _ in range(2):
        server.protocol.handle_frame(
            json.dumps({"jsonrpc": "2.0", "method": "test/note", "params": {}}).encode()
        )
    shown = [m for m in capture.messages() if m.get("method") == "window/showMessage"]
    assert [m["params"]["message"] for m in shown] == [
        "Rein: an internal error occurred; the details are in the server log"
    ]


def test_an_answer_that_does_not_fit_fails_the_waiting_request() -> None:
    """A workspace/applyEdit answer of the wrong shape: the server's
    request fails (with the reason) instead of waiting for ever."""
    server, capture = _server()
    future = server.protocol.send_request(
        lsp.WORKSPACE_APPLY_EDIT, lsp.ApplyWorkspaceEditParams(edit=lsp.WorkspaceEdit())
    )
    [sent] = capture.messages()
    server.protocol.handle_frame(
        json.dumps({"jsonrpc": "2.0", "id": sent["id"], "result": {"failureReason": 5}}).encode()
    )
    assert future.done()
    with pytest.raises(Exception, match="does not fit"):
        future.result()


def test_an_error_rein_raises_on_purpose_keeps_its_message_redacted() -> None:
    from rein.harness.errors import ConfigError

    server, capture = _server()
    key = "sk-" + "a" * 40

    @server.feature("test/config")
    def config(ls: ReinServer, params: Any) -> None:
        raise ConfigError(f"tools.toolkits: 'x:Kit': cannot import ({key})")

    server.protocol.handle_frame(_request(4, "test/config", {}))
    [answer] = capture.messages()
    assert answer["error"]["code"] == -32603
    assert answer["error"]["message"].startswith("tools.toolkits: 'x:Kit': cannot import (")
    assert key not in json.dumps(answer)
    assert "data" not in answer["error"]
