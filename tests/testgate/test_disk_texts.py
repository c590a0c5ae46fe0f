"""One stamp-keyed cache of disk texts serves the narrowing (bytes when a
file does not decode plainly) and the coverage index's caller (UTF-8
only, universal newlines), each decoding as it did (review20b D1)."""

from __future__ import annotations

import os
from pathlib import Path

from rein.testgate.disk_texts import DiskTexts, utf8_text
from rein.testgate.parses import as_text


def test_a_text_is_read_again_only_when_its_stamp_changed(tmp_path: Path) -> None:
    file = tmp_path / "mod.py"
    file.write_text("X = 1\n")
    reads: list[bytes] = []

    def decode(data: bytes) -> str:
        reads.append(data)
        return data.decode()

    texts = DiskTexts(tmp_path, decode)
    assert texts.get("mod.py") == texts.get("mod.py") == "X = 1\n"
    assert len(reads) == 1
    stamp = file.stat().st_mtime_ns
    file.write_text("X = 22\n")
    os.utime(file, ns=(stamp + 1_000_000, stamp + 1_000_000))
    assert texts.get("mod.py") == "X = 22\n"
    assert texts.get("gone.py") is None


def test_each_reader_keeps_its_own_decoding(tmp_path: Path) -> None:
    cookie = b"# -*- coding: latin-1 -*-\nNAME = '\xe9'\n"
    (tmp_path / "latin.py").write_bytes(cookie)
    (tmp_path / "crlf.py").write_bytes(b"X = 1\r\nY = 2\r\n")
    narrowing, picking = DiskTexts(tmp_path, as_text), DiskTexts(tmp_path, utf8_text)
    assert narrowing.get("latin.py") == cookie  # parsed as bytes, by its cookie
    assert picking.get("latin.py") is None  # not UTF-8: no text
    assert picking.get("crlf.py") == (tmp_path / "crlf.py").read_text(encoding="utf-8")
    assert narrowing.get("crlf.py") == "X = 1\r\nY = 2\r\n"
