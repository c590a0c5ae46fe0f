"""Reading LSP frames (``Content-Length`` header, blank line, body) from a
byte stream that may be hostile or broken.

pygls's own reader matches one exact header spelling, trusts any length
(``Content-Length: 1099511627776`` allocates a terabyte) and, after a
header it does not understand, silently waits for the next one it does.
:class:`FrameReader` instead:

- accepts the header name in any case (header names are case-insensitive)
  and ignores other headers (``Content-Type``);
- refuses a length over ``max_bytes`` without reading the body into memory;
- reports every malformed header (not a number, negative, missing, a line
  that does not end with CRLF, a line longer than ``MAX_HEADER_LINE``) as a
  :class:`FrameError`, once per defect;
- then resynchronises: it discards bytes, holding at most one chunk, until
  the next ``Content-Length:`` and reads the frame that starts there.

A body that turns out not to be JSON (a length too small or too big) is the
caller's to report; it then calls :meth:`FrameReader.recover` so the next
frame is found even when it starts inside that body.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_BYTES", "MAX_HEADER_LINE", "FrameError", "FrameReader"]

#: The largest message body accepted unless configured otherwise (64 MiB).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: The longest header line accepted (bytes, with its CRLF).
MAX_HEADER_LINE = 8192

_TOKEN = b"content-length:"
_HEADER_NAME = re.compile(rb"[A-Za-z0-9!#$%&'*+.^_`|~-]+")
_DIGITS = re.compile(rb"[0-9]+")
#: More digits than this is over any sane maximum (and int() has limits).
_MAX_DIGITS = 18


@dataclass(frozen=True)
class FrameError:
    """A frame that could not be read; ``message`` says why (bounded)."""

    message: str


def _shown(value: bytes, limit: int = 40) -> str:
    text = value[:limit].decode("ascii", "replace")
    return repr(text + ("…" if len(value) > limit else ""))


class FrameReader:
    """Frames from ``read`` (an awaitable returning the next chunk of bytes,
    ``b""`` at the end of the stream)."""

    def __init__(
        self,
        read: Callable[[], Awaitable[bytes]],
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        self._read = read
        self.max_bytes = max_bytes
        self._buf = bytearray()
        self._eof = False
        self._resync = False

    async def next(self) -> bytes | FrameError | None:
        """The next body, a :class:`FrameError`, or None at the end."""
        if self._resync:
            if not await self._seek_token():
                return None
            self._resync = False
        length: int | None = None
        while True:
            end = await self._line_end()
            if end is None:
                return None
            if end < 0:
                return self._fail(f"a header line longer than {MAX_HEADER_LINE} bytes")
            line = bytes(self._buf[: end + 1])
            if not line.endswith(b"\r\n"):
                return self._fail(f"header line {_shown(line)} does not end with CRLF")
            content = line[:-2]
            if not content:
                del self._buf[: end + 1]
                if length is None:
                    self._resync = True
                    return FrameError("a message without a Content-Length header")
                return await self._body(length)
            name, sep, value = content.partition(b":")
            # A Content-Length after other bytes on the line: junk glued to
            # the next frame's header (a body that was shorter than said).
            if not sep or not _HEADER_NAME.fullmatch(name) or content.lower().find(_TOKEN) > 0:
                return self._fail(f"malformed header line {_shown(line)}")
            if name.lower() == b"content-length":
                value = value.strip()
                if not _DIGITS.fullmatch(value):
                    return self._fail(f"invalid Content-Length {_shown(value)}")
                if len(value) > _MAX_DIGITS or int(value) > self.max_bytes:
                    return self._fail(
                        f"Content-Length {_shown(value)} is over the maximum of "
                        f"{self.max_bytes} bytes"
                    )
                length = int(value)
            del self._buf[: end + 1]

    def recover(self, body: bytes) -> None:
        """``body`` was framed but is no message: the next frame may start
        inside it (the length was too big); find it there or further on."""
        at = body.lower().find(_TOKEN)
        if at >= 0:
            self._buf[:0] = body[at:]
        self._resync = True

    # ----------------------------------------------------------------- bytes

    def _fail(self, message: str) -> FrameError:
        """A bad header line: skip its first byte (so its own
        ``Content-Length`` is not found again) and look for the next one."""
        del self._buf[:1]
        self._resync = True
        return FrameError(message)

    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await self._read()
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    async def _line_end(self) -> int | None:
        """Index of the next ``\\n`` in the buffer; -1 for a line over the
        limit; None at the end of the stream."""
        start = 0
        while True:
            at = self._buf.find(b"\n", start)
            if at >= 0:
                return at if at < MAX_HEADER_LINE else -1
            if len(self._buf) >= MAX_HEADER_LINE:
                return -1
            start = len(self._buf)
            if not await self._fill():
                return None

    async def _body(self, length: int) -> bytes | None:
        while len(self._buf) < length:
            if not await self._fill():
                return None
        body = bytes(self._buf[:length])
        del self._buf[:length]
        return body

    async def _seek_token(self) -> bool:
        """Discard bytes up to the next ``Content-Length:`` (any case),
        holding at most one chunk; False at the end of the stream."""
        keep = len(_TOKEN) - 1
        while True:
            at = self._buf.lower().find(_TOKEN)
            if at >= 0:
                del self._buf[:at]
                return True
            if len(self._buf) > keep:
                del self._buf[: len(self._buf) - keep]
            if not await self._fill():
                return False
