"""Why a navigation answer may be empty: the file does not parse.

basedpyright recovers from a parse error by dropping what it could not
parse (an unclosed parenthesis takes the rest of the file with it): a
definition, hover or rename asked there comes back empty, and "No
definition of `echo` found" reads as if the name were undefined. When an
answer is empty, the note says the file's first parse error as the
analyzers report it (a diagnostics snapshot of that file, given up after
:data:`NOTE_BOUND_S`; a note that fails is left out, never the answer).
"""

from __future__ import annotations

import logging

import anyio

from rein.analysis.blocker_order import is_syntax_error
from rein.harness.tools import ToolContext

__all__ = ["NOTE_BOUND_S", "parse_note"]

log = logging.getLogger(__name__)

#: The longest an empty answer waits for its note.
NOTE_BOUND_S = 1.5


async def parse_note(ctx: ToolContext, rel: str) -> str:
    """`` (path does not parse: line N: message; ...)`` when the analyzers
    report a parse error in ``rel``, else ""."""
    source = ctx.env.diagnostics
    if source is None:
        return ""
    with anyio.move_on_after(NOTE_BOUND_S):
        try:
            snap = await source.snapshot([rel])
        except Exception:  # a note never fails the answer
            log.debug("no parse note for %s", rel, exc_info=True)
            return ""
        errors = sorted(
            (d for d in snap.diagnostics if d.path == rel and is_syntax_error(d)),
            key=lambda d: (d.line, d.character),
        )
        if errors:
            first = errors[0]
            return (
                f" ({rel} does not parse: line {first.line + 1}: {first.message}; the server "
                "may not have understood the code after it: fix that first, or read the file)"
            )
    return ""
