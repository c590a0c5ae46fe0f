"""What a running tool streams to the client, bounded per call.

A tool's ``ctx.update(text, kind)`` becomes ``tool_call_update`` events
(redacted). Whatever the tool sends, the client gets a bounded amount:

* one event carries at most :data:`MAX_UPDATE_CHARS` characters (a longer
  update goes out as several events, in order);
* one call streams at most :data:`MAX_STREAMED_CHARS` characters of output
  in all; past that, one ``status`` update says the rest is not streamed,
  and the call's result (head and tail, ``harness.maxToolResultChars``) is
  what the person and the model see of it.

A command printing 50 MB therefore costs the client a few hundred events of
16 KB, not one event of 50 MB.

Output is redacted before it is cut, and a cut never splits a secret: the
output may arrive in pieces cut anywhere (a long line streams by size), so
the end of each piece that could be the start of a key (the word after the
last whitespace, a trailing ``Bearer``) waits for the next piece, or for
:meth:`ToolUpdates.finish` when the call ends (``redaction.safe_cut``).
"""

from __future__ import annotations

from typing import Literal

from rein.harness.events import Emit, ToolCallUpdate
from rein.harness.redaction import MAX_HOLD_CHARS, redact, safe_cut

__all__ = ["MAX_STREAMED_CHARS", "MAX_UPDATE_CHARS", "ToolUpdates"]

#: The most characters one ``tool_call_update`` event carries.
MAX_UPDATE_CHARS = 16_384
#: The most output characters one tool call streams to the client.
MAX_STREAMED_CHARS = 1_000_000

UpdateKind = Literal["output", "heartbeat", "status", "terminal"]

_KINDS: dict[str, UpdateKind] = {
    "output": "output",
    "heartbeat": "heartbeat",
    "status": "status",
    "terminal": "terminal",
}


class ToolUpdates:
    """The ``update`` callback of one tool call: emits its
    ``tool_call_update`` events within the bounds."""

    def __init__(
        self,
        emit: Emit,
        tool_call_id: str,
        name: str,
        *,
        max_update_chars: int = MAX_UPDATE_CHARS,
        max_streamed_chars: int = MAX_STREAMED_CHARS,
    ) -> None:
        self._emit = emit
        self.tool_call_id = tool_call_id
        self.name = name
        self.max_update_chars = max_update_chars
        self.max_streamed_chars = max_streamed_chars
        #: Output characters streamed so far.
        self.streamed = 0
        #: Output held back: it may be the start of a secret still arriving.
        self._held = ""
        self._told = False

    def __call__(self, text: str, kind: str = "output") -> None:
        shown = _KINDS.get(kind, "output")
        if shown != "output":
            self._send(redact(text)[: self.max_update_chars], shown)
            return
        room = self.max_streamed_chars - self.streamed - len(self._held)
        if room <= 0:
            return
        pending = self._held + text[:room]
        cut = safe_cut(pending)
        if len(pending) - cut > 4 * MAX_HOLD_CHARS:
            cut = len(pending)  # a word this long is no key: let it go, redacted
        self._held = pending[cut:]
        self._stream(pending[:cut])
        if self.streamed + len(self._held) >= self.max_streamed_chars:
            self.finish()

    def finish(self) -> None:
        """The call ended (or reached its bound): what was held back goes out."""
        held, self._held = self._held, ""
        self._stream(held)
        if self.streamed >= self.max_streamed_chars and not self._told:
            self._told = True
            self._send(
                f"[output past {self.max_streamed_chars:,} characters is not streamed; "
                "the result keeps its start and end]",
                "status",
            )

    def _stream(self, text: str) -> None:
        """Redact ``text`` whole, then send it in events of bounded size."""
        if not text:
            return
        self.streamed += len(text)
        shown = redact(text)
        step = self.max_update_chars
        for start in range(0, len(shown), step):
            self._send(shown[start : start + step], "output")

    def _send(self, text: str, kind: UpdateKind) -> None:
        if text:
            self._emit(
                ToolCallUpdate(tool_call_id=self.tool_call_id, name=self.name, kind=kind, text=text)
            )
