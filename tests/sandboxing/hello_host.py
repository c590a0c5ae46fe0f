"""A host on the loopback that answers every GET with one line: what the
sandbox's proxy tests reach (or are refused)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: What the host answers.
HELLO = b"hello from the host\n"


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(HELLO)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def hello_host() -> Iterator[int]:
    """The host's port while it serves (in a thread), shut down after."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
