"""The terminal commands' log (``rein run``, ``rein mcp list``: stderr at
WARNING) passes the redactor ``rein serve``'s and ``rein acp``'s logs pass
(safe20): a warning or a gate's exception quoting a key printed it before.
A real process, its handlers as the command sets them."""

from __future__ import annotations

import subprocess
import sys

KEY = "sk-proj-STDERRLOGxx0123456789abcdefgh"

SCRIPT = f"""
import logging
from rein.headless.stderr_log import log_to_stderr

log_to_stderr()
log = logging.getLogger("rein.harness.gating.gates")
log.warning("tests gate: a coverage record was not kept: %s", "token {KEY}")
try:
    raise RuntimeError("pytest printed {KEY}")
except RuntimeError:
    log.exception("gate %s failed to run", "tests")
"""


def test_rein_runs_log_lines_are_redacted() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )
    assert "a coverage record was not kept: token [redacted]" in done.stderr, done.stderr
    assert "gate tests failed to run" in done.stderr
    assert "RuntimeError: pytest printed [redacted]" in done.stderr
    assert KEY not in done.stderr
