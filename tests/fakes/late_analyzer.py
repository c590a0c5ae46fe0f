"""A stand-in analyzer language server (run as a script) that answers
``initialize`` only once a file exists: ``python late_analyzer.py SIGNAL``.

It speaks just enough JSON-RPC over stdio for the analyzer pool: it
answers ``initialize`` (serverInfo ``late 1.0``) after ``SIGNAL`` appears,
publishes no diagnostics for every opened or changed document (with its
version), answers ``shutdown`` and leaves on ``exit``. It writes its pid to
``SIGNAL`` with the suffix ``.pid`` first. Tests use it to show
what happens while an analyzer is still starting."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def _read() -> dict[str, Any] | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))


def _send(message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main(signal: Path) -> None:
    signal.with_suffix(".pid").write_text(str(os.getpid()))
    while (message := _read()) is not None:
        method = message.get("method")
        if method == "initialize":
            deadline = time.monotonic() + 60
            while not signal.exists() and time.monotonic() < deadline:
                time.sleep(0.02)  # the stand-in's own wait, not a test's
            result = {
                "capabilities": {"textDocumentSync": 1},
                "serverInfo": {"name": "late", "version": "1.0"},
            }
            _send({"id": message["id"], "result": result})
        elif method in ("textDocument/didOpen", "textDocument/didChange"):
            document = message["params"]["textDocument"]
            params = {"uri": document["uri"], "version": document.get("version"), "diagnostics": []}
            _send({"method": "textDocument/publishDiagnostics", "params": params})
        elif method == "shutdown":
            _send({"id": message["id"], "result": None})
        elif method == "exit":
            return
        elif "id" in message and method is not None:
            _send({"id": message["id"], "result": None})


if __name__ == "__main__":
    main(Path(sys.argv[1]))
