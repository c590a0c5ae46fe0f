"""``rein`` as a person runs it: ``rein ARGS...`` in a child process (this
interpreter, so the checkout's code; started from the worker's fork server,
tests/forkserver), its output captured as text."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.forkserver import REIN


def rein(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``rein ARGS...``, waited for at most ``timeout`` seconds."""
    return subprocess.run([*REIN, *args], capture_output=True, text=True, timeout=timeout)


def replay_run(
    workspace: Path, task: str, script: Path, *flags: str
) -> subprocess.CompletedProcess[str]:
    """``rein run TASK`` in ``workspace`` with the replay model playing
    ``script``, and ``flags`` besides."""
    return rein(
        "run", task, "-w", str(workspace), "--provider", "replay", "--script", str(script), *flags
    )
