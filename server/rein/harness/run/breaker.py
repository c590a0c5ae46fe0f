"""The tool-misuse breaker: stop a model that repeats a failing call.

With the default thresholds (:class:`~rein.harness.config.ToolMisuseBreakerConfig`,
``harness.toolMisuseBreaker``; null turns the breaker off):

* 3 consecutive identical rejected calls: a corrective note goes into the
  next request (that request only: the note is not stored in the transcript).
* 6: that identical call is no longer executed for the rest of the run; its
  result says so.
* Two calls alternating (A, B, A, B) with identical results each time and no
  workspace change between them: a note after 4 calls, and both are refused
  after 8.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rein.harness.config import ToolMisuseBreakerConfig
from rein.harness.messages import ToolCall

__all__ = ["BreakerVerdict", "ToolMisuseBreaker", "ToolMisuseBreakerConfig"]


def call_key(call: ToolCall) -> str:
    # repr is a third of json.dumps' cost; models repeat a call with the same
    # key order, and a different order only makes two calls look different.
    return call.name + ":" + repr(call.arguments)


@dataclass(slots=True)
class BreakerVerdict:
    blocked: bool
    reason: str = ""


@dataclass(slots=True)
class ToolMisuseBreaker:
    """The breaker's state over one run."""

    config: ToolMisuseBreakerConfig = field(default_factory=ToolMisuseBreakerConfig)
    _last_rejected: str | None = None
    _streak: int = 0
    _blocked: set[str] = field(default_factory=set)
    _history: list[tuple[str, int, int]] = field(default_factory=list)
    _notes: list[str] = field(default_factory=list)
    _nudged_oscillation: bool = False

    def check(self, call: ToolCall) -> BreakerVerdict:
        key = call_key(call)
        if key in self._blocked:
            return BreakerVerdict(
                True,
                f"This exact {call.name} call has been refused: it failed or repeated "
                "without progress too many times in this run and will not be executed "
                "again. Change the arguments or take another approach.",
            )
        return BreakerVerdict(False)

    def record(self, call: ToolCall, is_error: bool, content: str, generation: int) -> None:
        key = call_key(call)
        if is_error:
            if key == self._last_rejected:
                self._streak += 1
            else:
                self._last_rejected, self._streak = key, 1
            if self._streak == self.config.note_at:
                self._notes.append(
                    f"Note: you have made the same {call.name} call {self._streak} times in a row "
                    f"and it failed each time with: {content[:300]}\n"
                    "Repeating it will not help. Read the error, change the arguments, or "
                    "try a different approach."
                )
            if self._streak >= self.config.block_at:
                self._blocked.add(key)
        else:
            self._last_rejected, self._streak = None, 0
        self._history.append((key, hash(content), generation))
        if len(self._history) > max(self.config.oscillation_block_at, 4):
            del self._history[0]
        self._check_oscillation()

    def _check_oscillation(self) -> None:
        note_at = self.config.oscillation_note_at
        block_at = self.config.oscillation_block_at
        h = self._history
        n = len(h)
        if n < min(note_at, block_at):
            return
        if not (h[-1] == h[-3] and h[-2] == h[-4] and h[-1][0] != h[-2][0]):
            self._nudged_oscillation = False  # fast path: the tail does not alternate
            return
        length = 0
        # Count how long the tail alternates between exactly two identical calls.
        for size in range(min(n, max(note_at, block_at)), min(note_at, block_at) - 1, -1):
            tail = h[-size:]
            a, b = tail[0], tail[1]
            if a[0] == b[0]:
                continue
            if all(item == (a if i % 2 == 0 else b) for i, item in enumerate(tail)):
                length = size
                break
        if length >= block_at:
            self._blocked.add(h[-1][0])
            self._blocked.add(h[-2][0])
        elif length >= note_at and not self._nudged_oscillation:
            self._nudged_oscillation = True
            names = " and ".join(sorted({k.split(":", 1)[0] for k, _, _ in h[-2:]}))
            self._notes.append(
                f"Note: you are alternating between the same two calls ({names}) with "
                "identical results and no change to the workspace. That is not making "
                "progress: step back and try something else."
            )
        elif length < note_at:
            self._nudged_oscillation = False

    def take_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes
