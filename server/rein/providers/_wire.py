"""Wire dumps: every raw request (with headers) and response (raw SSE lines)
appended to a JSONL file, secrets redacted. Off unless ``wireDump`` is set.

The redaction is the core's (:mod:`rein.harness.conversation.wire`), shared with the
Agent's ``model_request`` events."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Any

import httpx

from rein.harness.conversation.wire import (
    MIN_SECRET,
    REDACTED,
    header_secrets,
    redact_headers,
    scrub,
)

__all__ = ["REDACTED", "TapStream", "WireDump", "redact_headers"]


class TapStream(httpx.AsyncByteStream):
    """Passes a response body through and keeps a copy of every chunk."""

    def __init__(self, inner: httpx.AsyncByteStream, sink: list[bytes]) -> None:
        self._inner = inner
        self._sink = sink

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._sink.append(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class WireDump:
    """Appends one JSON object per line to ``path``. Every string in
    ``secrets`` is replaced by ``[redacted]`` wherever it appears."""

    def __init__(self, path: str | Path, secrets: Iterable[str | None] = ()) -> None:
        self.path = Path(path)
        self._secrets = {s for s in secrets if s and len(s) >= MIN_SECRET}

    def _learn_secrets(self, headers: Iterable[tuple[str, str]]) -> None:
        """Whatever a secret header carries is scrubbed everywhere from now on."""
        self._secrets.update(header_secrets(headers))

    def write(self, record: Mapping[str, Any]) -> None:
        line = scrub(
            json.dumps({"ts": round(time.time(), 6), **record}, default=str), self._secrets
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def request(self, request: httpx.Request, payload: Any, *, provider: str, attempt: int) -> None:
        self._learn_secrets(request.headers.items())
        self.write(
            {
                "kind": "request",
                "provider": provider,
                "attempt": attempt,
                "method": request.method,
                "url": str(request.url),
                "headers": redact_headers(request.headers.items()),
                "body": payload,
            }
        )

    def response(
        self,
        response: httpx.Response | None,
        chunks: list[bytes],
        *,
        provider: str,
        attempt: int,
        error: BaseException | None,
    ) -> None:
        text = b"".join(chunks).decode("utf-8", errors="replace")
        self.write(
            {
                "kind": "response",
                "provider": provider,
                "attempt": attempt,
                "status": response.status_code if response is not None else None,
                "headers": redact_headers(response.headers.items()) if response is not None else {},
                "lines": text.splitlines(),
                "error": f"{type(error).__name__}: {error}" if error is not None else None,
            }
        )
