"""The mock server's HTTP/1.1: read one request, write one reply.

Just enough of the protocol for API clients, curl and tests: a
Content-Length or chunked request body, ``Expect: 100-continue``, and
replies that end with the connection (``Connection: close``).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

__all__ = ["HttpRequest", "Reply", "head", "json_reply", "read_request", "send"]

MAX_HEAD = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024


@dataclass(slots=True)
class HttpRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass(slots=True)
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(status: int, value: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(value).encode(), headers=headers or {})


def head(status: int, content_type: str, headers: dict[str, str], length: int | None) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", f"Content-Type: {content_type}"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines += ["Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1")


async def send(writer: asyncio.StreamWriter, reply: Reply) -> None:
    writer.write(head(reply.status, reply.content_type, reply.headers, len(reply.body)))
    writer.write(reply.body)
    await writer.drain()


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> HttpRequest | None:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None  # connected and left without a request
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise ValueError(f"bad request line: {lines[0][:100]!r}")
    method, path, _version = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            body += await reader.readexactly(size + 2)
            del body[-2:]
            if len(body) > _MAX_BODY:
                raise ValueError("request body too large")
        return HttpRequest(method, path, headers, bytes(body))
    length = int(headers.get("content-length") or 0)
    if length > _MAX_BODY:
        raise ValueError("request body too large")
    return HttpRequest(method, path, headers, await reader.readexactly(length))
