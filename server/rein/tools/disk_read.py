"""The one reader for every workspace read from disk.

A workspace may hold a FIFO, a device, a socket or a huge file, put there by
a hostile checkout or by a command the person approved (``mkfifo``). A plain
``open().read()`` of a FIFO waits for a writer forever, and of ``/dev/zero``
fills the memory. Every read of a workspace file therefore goes through
:func:`read_regular`, which:

* looks at the path before opening it and refuses what is not a regular
  file (opening a device can itself have effects);
* opens it with ``O_NONBLOCK`` (a FIFO swapped in after the look does not
  block the open) and, where asked, ``O_NOFOLLOW``;
* ``fstat``\\ s what it opened and accepts a regular file only;
* reads at most ``limit`` bytes (a file over it is refused, or only sniffed).

It is synchronous and never blocks on a special file; async callers run it
in a worker thread (:func:`read_text_async`), never on the event loop.

Text is decoded as UTF-8 without newline translation (a CRLF file keeps its
``\\r\\n``); a byte order mark is taken off the text and reported in
:attr:`DiskText.bom`, as an editor does, so that writers can put it back.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

import anyio

from rein.harness.errors import ToolError

__all__ = [
    "BOM",
    "MAX_TEXT_BYTES",
    "DiskBytes",
    "DiskText",
    "decode_text",
    "encode_text",
    "read_regular",
    "read_text",
    "read_text_async",
    "too_large_message",
]

#: The most a workspace text read takes: read_file's limit. A larger file is
#: refused with a message naming the limit (search it, or use a command).
MAX_TEXT_BYTES = 2 * 1024 * 1024
BOM = "\ufeff"
_BOM_BYTES = BOM.encode("utf-8")
_CHUNK = 1024 * 1024
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _format_size(size: int) -> str:
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB" if size >= 1024 else f"{size} B"
    return f"{size / (1024 * 1024):.1f} MB"


def too_large_message(rel: str, size: int, limit: int) -> str:
    return (
        f"{rel} is {_format_size(size)}, too large to read or edit (the limit is "
        f"{_format_size(limit)}). Search it with grep, or look at parts of it with a "
        "command such as `head`, `tail` or `sed -n '100,200p'`."
    )


def _refuse_special(rel: str, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, f"{rel} is a directory")
    if not stat.S_ISREG(mode):
        raise ToolError(
            f"{rel} is {_kind(mode)}, not a regular file; it was not read. Only regular "
            "files are read or edited."
        )


@dataclass(frozen=True, slots=True)
class DiskBytes:
    """What :func:`read_regular` opened and read."""

    #: All of the file, or its first ``sniff`` bytes when it is over the limit.
    data: bytes
    size: int
    links: int
    #: ``(st_dev, st_ino)`` of the file opened.
    identity: tuple[int, int]
    #: The kernel's path of the descriptor (Linux /proc), when known.
    opened: str | None


def read_regular(
    path: str | os.PathLike[str],
    rel: str,
    *,
    limit: int = MAX_TEXT_BYTES,
    follow: bool = True,
    sniff: int = 0,
) -> DiskBytes:
    """Read the regular file ``path`` (``rel`` names it in messages).

    Raises FileNotFoundError / IsADirectoryError (callers word them), a
    ToolError for a FIFO, device or socket, and for a file over ``limit``
    unless ``sniff`` > 0 (then its first ``sniff`` bytes are returned with
    its size). ``follow=False`` refuses a final symlink (ELOOP)."""
    st = os.stat(path) if follow else os.lstat(path)
    if not follow and stat.S_ISLNK(st.st_mode):
        raise OSError(errno.ELOOP, "is a symlink", str(path))
    _refuse_special(rel, st.st_mode)
    if st.st_size > limit and not sniff:
        raise ToolError(too_large_message(rel, st.st_size, limit))
    flags = _FLAGS | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        _refuse_special(rel, st.st_mode)
        if st.st_size > limit and not sniff:
            raise ToolError(too_large_message(rel, st.st_size, limit))
        left = limit + 1 if st.st_size <= limit else min(limit + 1, sniff)
        chunks: list[bytes] = []
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit and not sniff:
            # It grew past the limit while it was read.
            raise ToolError(too_large_message(rel, len(data), limit))
        try:
            opened: str | None = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            opened = None
        return DiskBytes(data, st.st_size, st.st_nlink, (st.st_dev, st.st_ino), opened)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class DiskText:
    """A text file as read from disk: its text (line ends as they are, no
    byte order mark) and whether it had a byte order mark."""

    text: str
    bom: bool = False


def decode_text(rel: str, data: bytes) -> DiskText:
    """``data`` as text; a ToolError for binary or non-UTF-8 content."""
    if b"\x00" in data:
        raise ToolError(f"{rel} is a binary file; it cannot be read as text")
    bom = data.startswith(_BOM_BYTES)
    try:
        text = data[len(_BOM_BYTES) if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{rel} is not valid UTF-8 text (byte {exc.start}); it may be binary or use "
            "another encoding"
        ) from None
    return DiskText(text, bom)


def encode_text(text: str, *, bom: bool) -> bytes:
    """The bytes of ``text``, with a byte order mark when ``bom`` (and the
    text does not carry one already)."""
    data = text.encode("utf-8")
    return _BOM_BYTES + data if bom and not text.startswith(BOM) else data


def read_text(path: str | os.PathLike[str], rel: str, *, limit: int = MAX_TEXT_BYTES) -> DiskText:
    """The text of the regular file ``path``, with ToolErrors worded for
    the model (missing, a directory, special, too large, binary)."""
    try:
        raw = read_regular(path, rel, limit=limit)
    except FileNotFoundError:
        raise ToolError(f"File not found: {rel}") from None
    except IsADirectoryError:
        raise ToolError(f"{rel} is a directory, not a file") from None
    except OSError as exc:
        raise ToolError(f"Cannot read {rel}: {exc.strerror or exc}") from exc
    return decode_text(rel, raw.data)


async def read_text_async(
    path: str | os.PathLike[str], rel: str, *, limit: int = MAX_TEXT_BYTES
) -> DiskText:
    """:func:`read_text` in a worker thread (it never blocks on a special
    file, so the thread always ends)."""
    return await anyio.to_thread.run_sync(lambda: read_text(path, rel, limit=limit))
