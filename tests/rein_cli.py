"""``rein`` as a person runs it: ``python -m rein`` in a child process (this
interpreter, so the checkout's code), its output captured as text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def rein(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``rein ARGS...``, waited for at most ``timeout`` seconds."""
    return subprocess.run(
        [sys.executable, "-m", "rein", *args], capture_output=True, text=True, timeout=timeout
    )


def replay_run(
    workspace: Path, task: str, script: Path, *flags: str
) -> subprocess.CompletedProcess[str]:
    """``rein run TASK`` in ``workspace`` with the replay model playing
    ``script``, and ``flags`` besides."""
    return rein(
        "run", task, "-w", str(workspace), "--provider", "replay", "--script", str(script), *flags
    )
