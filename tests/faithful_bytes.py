"""The byte cases every host's edit must keep (issue 30 item 7): a CRLF
file, a file with a byte order mark, and a mixed-ending file edited in its
LF part and in its CRLF part. ``old`` and ``new`` are what a model sends
(LF line ends, no BOM); ``after`` is the file's bytes after the edit: every
byte outside the change as it was. Used by the rein run, rein serve and ACP
suites, so the three hosts are held to one table."""

from __future__ import annotations

from typing import cast

import pytest

FIELDS = ("before", "old", "new", "after")

FAITHFUL_BYTES = [
    pytest.param(
        b"a = 1\r\nb = 2\r\nc = 3\r\n",
        "b = 2\nc = 3",
        "b = 20\nc = 30",
        b"a = 1\r\nb = 20\r\nc = 30\r\n",
        id="crlf",
    ),
    pytest.param(
        b"\xef\xbb\xbfa = 1\nb = 2\n",
        "a = 1",
        "a = 10",
        b"\xef\xbb\xbfa = 10\nb = 2\n",
        id="bom",
    ),
    pytest.param(
        b"a = 1\r\nb = 2\r\nc = 3\nd = 4\n",
        "c = 3\nd = 4",
        "c = 30\nd = 40\ne = 5",
        b"a = 1\r\nb = 2\r\nc = 30\nd = 40\ne = 5\n",
        id="mixed-lf-part",
    ),
    pytest.param(
        b"a = 1\r\nb = 2\r\nc = 3\nd = 4\n",
        "a = 1\nb = 2",
        "a = 10\nb = 20",
        b"a = 10\r\nb = 20\r\nc = 3\nd = 4\n",
        id="mixed-crlf-part",
    ),
]


def cases_by_id() -> dict[str, tuple[bytes, str, str, bytes]]:
    """The table's cases by id, for a host that runs them all in one
    session (one process rather than one per case)."""
    return {
        str(case.id): cast("tuple[bytes, str, str, bytes]", tuple(case.values))
        for case in FAITHFUL_BYTES
    }
