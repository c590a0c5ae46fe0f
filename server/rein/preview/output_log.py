"""The preview's output: the kept lines with absolute indices (so an
observation can ask for "everything since the load"), the lines still to be
sent as one coalesced event, and finding error lines with their tracebacks.

A line is redacted as it enters (:mod:`rein.harness.redaction`: the keys
Rein holds, common key shapes): the preview is the person's program, and
what it prints reaches the ``preview_output`` and ``preview_error`` events,
the observation gate's verdict and the status the same way."""

from __future__ import annotations

import itertools
import re
from collections import deque
from collections.abc import Callable, Sequence

from rein.harness.redaction import redact

__all__ = ["FRAME", "TAIL_LINES", "OutputLog", "find_errors", "headline"]

#: Output lines kept for observations and the status.
MAX_LINES = 2_000
#: Lines in one preview_output event (older ones of a burst are dropped).
MAX_EVENT_LINES = 200
MAX_LINE_CHARS = 2_000
EXCERPT_LINES = 80
#: Output lines the error of a failed start, an exit or an observation carries.
TAIL_LINES = 40

TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')


class OutputLog:
    """Lines numbered from 0 in the order they were printed; the newest
    ``MAX_LINES`` are kept."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lines: deque[str] = deque(maxlen=MAX_LINES)
        #: The index the next line gets.
        self.total = 0
        #: When the last line arrived (``clock`` time).
        self.last_at = -1e9
        self._pending: deque[str] = deque(maxlen=MAX_EVENT_LINES)
        self._pending_total = 0

    def append(self, line: str) -> None:
        line = redact(line)  # before the cut: a key is never cut in two
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [...]"
        self._lines.append(line)
        self.total += 1
        self.last_at = self._clock()
        self._pending.append(line)
        self._pending_total += 1

    def since(self, mark: int) -> list[str]:
        """The kept lines with index >= ``mark``."""
        first = self.total - len(self._lines)
        return list(itertools.islice(self._lines, max(mark, first) - first, None))

    def take_pending(self) -> tuple[str, int] | None:
        """The lines not sent yet (at most ``MAX_EVENT_LINES``, the newest)
        and how many older ones were dropped; None when there are none."""
        if not self._pending_total:
            return None
        dropped = self._pending_total - len(self._pending)
        text = "\n".join(self._pending)
        self._pending.clear()
        self._pending_total = 0
        return text, dropped


def find_errors(
    lines: Sequence[str], patterns: Sequence[re.Pattern[str]]
) -> tuple[list[str], list[str]]:
    """The lines matching a pattern, and an excerpt from the first match to
    the last, each traceback through its final exception line (bounded)."""
    hits = [i for i, line in enumerate(lines) if any(p.search(line) for p in patterns)]
    if not hits:
        return [], []
    end = hits[-1]
    for i in hits:
        if TRACEBACK.match(lines[i]):
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j][:1] in (" ", "\t")):
                j += 1
            end = max(end, min(j, len(lines) - 1))
    excerpt = list(lines[hits[0] : end + 1])
    if len(excerpt) > EXCERPT_LINES:
        head, tail = excerpt[:10], excerpt[-(EXCERPT_LINES - 11) :]
        excerpt = [*head, f"[... {len(excerpt) - len(head) - len(tail)} lines ...]", *tail]
    return [lines[i] for i in hits], excerpt


def headline(matches: Sequence[str]) -> str:
    """The most telling error line: the last that is not a traceback header."""
    for line in reversed(matches):
        if not TRACEBACK.match(line):
            return line.strip()
    return matches[-1].strip() if matches else ""
