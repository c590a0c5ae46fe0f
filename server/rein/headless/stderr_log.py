"""Where the terminal commands' log goes: stderr, said once."""

from __future__ import annotations

import logging
import sys

from rein.harness.redaction import RedactingFilter
from rein.harness.reported import is_reported

__all__ = ["log_to_stderr"]


def log_to_stderr() -> None:
    """What Rein logs at WARNING or above goes to stderr as Python's
    last-resort handler printed it, but not what the command reports itself
    (``rein run``'s events, ``rein mcp list``'s rows): said once, not twice;
    redacted (:class:`~rein.harness.redaction.RedactingFilter`, as ``rein
    serve``'s and ``rein acp``'s logs: a gate's exception or a warning that
    quotes a command's output holds no key). Nothing when the process has
    handlers of its own."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.addFilter(lambda record: not is_reported(record))
    handler.addFilter(RedactingFilter())
    root.addHandler(handler)
