"""``rein`` for the tests, started in milliseconds instead of a second.

Each test worker starts one fork server (``zygote.py``) that has imported
rein's commands once; a test runs :data:`REIN` where a person runs
``python -m rein``: a small stand-in (``shim.py``) that hands its streams,
arguments, environment and folder to the server, which forks the rein
process from its imported state. The rein process is the real one (the same
code from ``rein.__main__`` on, over the same pipes, seeing the same
environment, signals passed on, exit code and signal death returned); only
the interpreter's start and imports are not paid again. Where a start could
differ (a terminal, another session, other interpreter settings, extra file
descriptors) or no server runs, the stand-in execs ``python -m rein``.
``tests/forkserver/test_forkserver.py`` checks a forked start against a real
one. A test whose point is the interpreter's own start (what is imported
before the first answer) runs :data:`REAL_REIN`."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.forkserver.shim import server_environment

SHIM = Path(__file__).resolve().with_name("shim.py")
ZYGOTE = Path(__file__).resolve().with_name("zygote.py")

#: ``rein`` as a command, started from the worker's fork server.
REIN = [sys.executable, str(SHIM)]
#: ``rein`` as a command, a new interpreter every time.
REAL_REIN = [sys.executable, "-m", "rein"]
#: The variable that names the fork server's socket to the stand-in.
VARIABLE = "REIN_TEST_FORKSERVER"

_READY_S = 120.0


@contextmanager
def fork_server(folder: Path) -> Iterator[str]:
    """A fork server listening in ``folder``: its socket's path, for
    :data:`VARIABLE`. It ends with the block (or with this process)."""
    path = str(folder / "rein.sock")
    with (folder / "zygote.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, str(ZYGOTE), path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=server_environment(dict(os.environ)),
        )
    assert server.stdout is not None and server.stdin is not None
    try:
        ready, _, _ = select.select([server.stdout], [], [], _READY_S)
        line = server.stdout.readline() if ready else b""
        if line.strip() != b"ready":
            log = (folder / "zygote.log").read_text(errors="replace")
            raise RuntimeError(f"the fork server did not start ({line!r}): {log[-2000:]}")
        yield path
    finally:
        server.stdin.close()  # its end: it kills what it still runs
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
