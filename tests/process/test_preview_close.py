"""A stopped preview leaves nothing of its process open: ``stop`` closes the
output pipe and so the subprocess transport itself, even while a process
outside its group still holds the pipe's other end (as the sandbox's
processes do for a moment after its leader died), instead of leaving them
to the garbage collector, which, once the event loop is closed, reports
"Exception ignored in BaseSubprocessTransport.__del__"."""

from __future__ import annotations

import gc
import os
import shlex
import socket
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio

from rein.process.preview import SubprocessPreviewFactory

#: Hands its standard output to whoever listens on the socket, then waits.
HANDS_OVER = """\
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
socket.send_fds(s, [b"x"], [1])
print("ready", flush=True)
time.sleep(30)
"""


def test_a_stopped_preview_leaves_no_transport_open_when_its_loop_ends(tmp_path: Path) -> None:
    (tmp_path / "hand.py").write_text(HANDS_OVER)
    address = str(tmp_path / "s")
    held: list[int] = []

    async def main() -> None:
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(address)
            listener.listen(1)
            command = f"{shlex.quote(sys.executable)} hand.py {shlex.quote(address)}"
            preview = await SubprocessPreviewFactory(str(tmp_path)).start(command)
            with anyio.fail_after(10):
                connection, _ = await anyio.to_thread.run_sync(listener.accept)
                with connection:
                    _, fds, _, _ = socket.recv_fds(connection, 1, 1)
                held.extend(fds)  # the pipe stays open past the group's end
                assert await preview.read_line() == "ready"
                await preview.stop(2.0)

    gc.collect()  # what earlier tests in this worker left is theirs, not this preview's
    ignored: list[Any] = []
    hook, sys.unraisablehook = sys.unraisablehook, ignored.append
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            anyio.run(main)  # the loop is closed when it returns
            gc.collect()
    finally:
        sys.unraisablehook = hook
        for fd in held:
            os.close(fd)
    assert [(repr(u.object), str(u.exc_value)) for u in ignored] == []
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []
