"""``rein undo`` whose file write number N+1 stops halfway, as a kill -9
would find it: its temporary file half written, the file itself not yet
replaced. It says so on stderr and waits to be killed.

``python -m tests.e2e.stalled_undo N undo [rein undo arguments]``
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from rein.cli import main
from rein.disk import disk_workspace


def run() -> int:
    stall_at = int(sys.argv[1])
    real = disk_workspace._atomic_write
    written = 0

    def stalling(path: Path, data: bytes) -> None:
        nonlocal written
        if written == stall_at:
            partial = path.parent / f".{path.name}.stalled.rein-tmp"
            partial.write_bytes(data[: len(data) // 2])
            print(f"stalled after {written} writes", file=sys.stderr, flush=True)
            threading.Event().wait()
        written += 1
        real(path, data)

    disk_workspace._atomic_write = stalling  # type: ignore[assignment]
    return main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(run())
