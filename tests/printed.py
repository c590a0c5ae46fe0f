"""What `rein run`'s :class:`~rein.render.EventPrinter` prints for events."""

from __future__ import annotations

import io

from rein.harness.events import Event
from rein.render import EventPrinter

__all__ = ["printed"]


def printed(*events: Event) -> str:
    """The text ``EventPrinter`` writes for ``events``, in order."""
    out = io.StringIO()
    printer = EventPrinter(out)
    for event in events:
        printer(event)
    return out.getvalue()
