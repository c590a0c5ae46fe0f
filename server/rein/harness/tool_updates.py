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
"""

from __future__ import annotations

from typing import Literal

from rein.harness.events import Emit, ToolCallUpdate
from rein.harness.redaction import redact

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

    def __call__(self, text: str, kind: str = "output") -> None:
        shown = _KINDS.get(kind, "output")
        if shown != "output":
            self._send(text[: self.max_update_chars], shown)
            return
        room = self.max_streamed_chars - self.streamed
        if room <= 0:
            return
        text = text[:room]
        self.streamed += len(text)
        step = self.max_update_chars
        for start in range(0, len(text), step):
            self._send(text[start : start + step], "output")
        if self.streamed >= self.max_streamed_chars:
            self._send(
                f"[output past {self.max_streamed_chars:,} characters is not streamed; "
                "the result keeps its start and end]",
                "status",
            )

    def _send(self, text: str, kind: UpdateKind) -> None:
        if text:
            self._emit(
                ToolCallUpdate(
                    tool_call_id=self.tool_call_id, name=self.name, kind=kind, text=redact(text)
                )
            )
