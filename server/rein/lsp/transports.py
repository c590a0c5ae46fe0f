"""Serving one client over stdio (the editor's) or TCP (debugging) with
Rein's frame reader (:func:`rein.lsp._protocol.serve_frames`) instead of
pygls's; each returns when the client leaves or the server shuts down."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from rein.lsp._protocol import ReinProtocol, serve_frames

__all__ = ["serve_stdio", "serve_tcp"]

log = logging.getLogger(__name__)


def serve_stdio(
    server: LanguageServer,
    protocol: ReinProtocol,
    max_bytes: int,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    """Serve over stdin/stdout (or the given streams); reads run on the
    server's thread pool. The process's exit code: an ``exit`` notification
    before ``shutdown`` is 1, as the LSP specifies; else 0."""
    source = stdin or sys.stdin.buffer
    read_some = getattr(source, "read1", None) or source.read
    server._stop_event = threading.Event()
    protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

    async def read() -> bytes:
        loop = asyncio.get_running_loop()
        chunk: bytes = await loop.run_in_executor(server.thread_pool, read_some, 65536)
        return chunk

    try:
        asyncio.run(serve_frames(read, protocol, server._stop_event, max_bytes))
    except BrokenPipeError:
        log.error("the client is gone; shutting down")
    except KeyboardInterrupt:
        pass
    except SystemExit:
        # ``exit``: 0 when a ``shutdown`` request was received before it
        # (even one whose handler still ran: pygls counts it only once
        # done), else 1, as the LSP specifies; the process exits with it
        # once the server is shut down.
        return 0 if protocol.shutdown_received else 1
    finally:
        server.shutdown()
    return 0


def serve_tcp(
    server: LanguageServer, protocol: ReinProtocol, max_bytes: int, host: str, port: int
) -> None:
    """Serve one client at a time on ``host:port``."""
    server._stop_event = stop = threading.Event()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        protocol.set_writer(writer)

        async def read() -> bytes:
            return await reader.read(65536)

        await serve_frames(read, protocol, stop, max_bytes)
        server.shutdown()

    async def main() -> None:
        listening = await asyncio.start_server(connection, host, port)
        server._server = listening  # closed by shutdown(): the client left
        log.info("listening on %s:%s", host, port)
        async with listening:
            await listening.serve_forever()

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        log.debug("the TCP server was cancelled")
