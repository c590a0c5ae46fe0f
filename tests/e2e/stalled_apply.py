"""``rein apply`` that stops at a chosen place and waits for a line on its
stdin, saying so on stderr first: the test sends SIGTERM there, then the
line, and sees where the signal took effect.

``python -m tests.e2e.stalled_apply before apply ...``: before anything is
written (while the folder's analyzers start);
``python -m tests.e2e.stalled_apply write N apply ...``: in the middle of
the write, after N files were written (the next one not yet).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from rein.cli import main
from rein.disk import disk_workspace
from rein.hosting.headless import HeadlessSession


def _wait(said: str) -> None:
    print(said, file=sys.stderr, flush=True)
    sys.stdin.readline()  # the test's go (or its end: stdin closed)


def run() -> int:
    where = sys.argv[1]
    if where == "before":
        started = HeadlessSession.analyzers_started

        async def stalled(self: HeadlessSession) -> None:
            await anyio.to_thread.run_sync(_wait, "stalled before the write")
            await started(self)

        HeadlessSession.analyzers_started = stalled  # type: ignore[method-assign]
        return main(sys.argv[2:])
    stall_at = int(sys.argv[2])
    real = disk_workspace._atomic_write
    written = 0

    def stalling(path: Path, data: bytes) -> None:
        nonlocal written
        if written == stall_at:
            _wait(f"stalled after {written} writes")
        written += 1
        real(path, data)

    disk_workspace._atomic_write = stalling  # type: ignore[assignment]
    return main(sys.argv[3:])


if __name__ == "__main__":
    sys.exit(run())
