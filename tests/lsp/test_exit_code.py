"""``rein serve``'s exit code, as the LSP specifies: 0 when ``exit`` comes
after ``shutdown``, 1 when it comes without one (the client crashed or cut
the server off); the real server over stdio, nothing left in its log but
the usual lines (no traceback of a write to the closed output). A
``shutdown`` counts once received, as the specification words it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import IO, Any

import pytest

from tests.forkserver import REIN

BOUND_S = 30.0


def _send(stdin: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdin.flush()


def _read(stdout: IO[bytes]) -> dict[str, Any]:
    length = 0
    while True:
        line = stdout.readline()
        assert line, "the server closed its output"
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(stdout.read(length))
    return message


def _answer(stdout: IO[bytes], request_id: int) -> dict[str, Any]:
    """The response to ``request_id`` (notifications before it skipped)."""
    while True:
        message = _read(stdout)
        if message.get("id") == request_id and "method" not in message:
            return message


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("shutdown", "answered", "code"),
    [(True, True, 0), (True, False, 0), (False, False, 1)],
    ids=["after-shutdown", "right-after-shutdown-is-asked", "without-shutdown"],
)
def test_exit_ends_the_server_with_the_code_the_lsp_specifies(
    tmp_path: Path, shutdown: bool, answered: bool, code: int
) -> None:
    """``answered``: the client waits for the answer to ``shutdown`` before
    ``exit``; else it sends ``exit`` at once (the shutdown still running:
    received, so 0)."""
    server = subprocess.Popen(
        [*REIN, "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        _send(
            server.stdin,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": tmp_path.as_uri(),
                    "capabilities": {},
                },
            },
        )
        assert "result" in _answer(server.stdout, 1)
        _send(server.stdin, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        if shutdown:
            _send(server.stdin, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
            if answered:
                assert _answer(server.stdout, 2).get("result") is None
        _send(server.stdin, {"jsonrpc": "2.0", "method": "exit"})
        _, stderr = server.communicate(timeout=BOUND_S)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.returncode == code, stderr.decode(errors="replace")[-2000:]
    assert "Traceback" not in stderr.decode(errors="replace")
