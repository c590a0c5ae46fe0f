"""Loggers for what a host also reports itself.

A failure the person is told of by an event (a store that cannot be made, an
MCP server that did not start) is also logged, for the editor's output
channel; ``rein run`` prints the events, so it leaves these records out of
its stderr (:func:`is_reported`) and says each thing once.
"""

from __future__ import annotations

import logging

__all__ = ["is_reported", "reported_logger"]

#: The suffix of the loggers whose messages the host also reports itself.
REPORTED_SUFFIX = ".reported"


def reported_logger(name: str) -> logging.Logger:
    """The logger of module ``name`` for what its host also reports itself."""
    return logging.getLogger(name + REPORTED_SUFFIX)


def is_reported(record: logging.LogRecord) -> bool:
    """The record came from a :func:`reported_logger`."""
    return record.name.endswith(REPORTED_SUFFIX)
