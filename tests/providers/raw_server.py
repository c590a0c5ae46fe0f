"""A real HTTP server on a free 127.0.0.1 port that answers each request
with whatever a test's handler writes on the socket: a provider's stream
that misbehaves in ways the scenario mock server (``rein mock-server``)
does not offer (keep-alives forever, an endless line, a redirect, a reset)."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

__all__ = ["SSE_HEAD", "RawServer", "reset", "sse"]

#: A streamed 200 response's head (the body runs until the connection closes).
SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
    b"cache-control: no-cache\r\nconnection: close\r\n\r\n"
)

Handler = Callable[[str, asyncio.StreamWriter], Awaitable[None]]


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE event (``data`` as JSON unless it is a string)."""
    text = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "").encode() + f"data: {text}\n\n".encode()


def reset(writer: asyncio.StreamWriter) -> None:
    """Drop the connection with a TCP reset (SO_LINGER 0)."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class RawServer:
    """``async with RawServer(handler) as server``: ``server.url``, and
    ``server.paths`` and ``server.heads``, the path and the head (request
    line and headers, as sent) of every request it read."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self.paths: list[str] = []
        self.heads: list[str] = []
        self.url = ""
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()  # a handler that keeps a stream open forever
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            path = lines[0].split(" ")[1]
            length = next(
                (
                    int(v)
                    for k, _, v in (x.partition(":") for x in lines[1:])
                    if k.lower() == "content-length"
                ),
                0,
            )
            await reader.readexactly(length)
            self.paths.append(path)
            self.heads.append(head.decode())
            await self._handler(path, writer)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # stopped by __aexit__: the server's own task, nothing awaits it
        finally:
            writer.close()
            self._tasks.discard(task)
