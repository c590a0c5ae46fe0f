"""An unchanged file's text as the tests gate's per-test readers want it,
read from the disk again only when its stamp (modification time, size)
changed: the narrowing (:mod:`rein.testgate.narrow`) and the coverage
index's caller (:mod:`rein.testgate.picking`) each keep one, decoding the
bytes their own way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

__all__ = ["DiskTexts", "utf8_text"]

T = TypeVar("T")


class DiskTexts(Generic[T]):
    """Path (relative to ``root``) -> ``decode`` of its bytes, kept with the
    stamp it was read at; None when it cannot be read (or ``decode``
    raises ``UnicodeDecodeError``)."""

    def __init__(self, root: Path, decode: Callable[[bytes], T]) -> None:
        self.root = root
        self._decode = decode
        self._kept: dict[str, tuple[tuple[int, int], T | None]] = {}

    def get(self, path: str) -> T | None:
        file = self.root / path
        try:
            info = file.stat()
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size)
        kept = self._kept.get(path)
        if kept is None or kept[0] != stamp:
            try:
                text: T | None = self._decode(file.read_bytes())
            except (OSError, UnicodeDecodeError):
                text = None
            kept = self._kept[path] = (stamp, text)
        return kept[1]


def utf8_text(data: bytes) -> str:
    """``data`` as ``Path.read_text(encoding="utf-8")`` reads it (universal
    newlines); raises ``UnicodeDecodeError``."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
