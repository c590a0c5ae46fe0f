"""The session's transcript as a JSONL file, for the hooks' ``transcript_path``.

Claude Code's hooks read the transcript (to summarise a session, to check
what was said); Rein keeps its sessions in its store, so for the hooks it
also writes one file per session in its storage folder (never in the
workspace): ``transcripts/<session id>.jsonl``, one JSON object per
message, appended as the run goes (at each turn's and run's end) and
brought up to date just before every hook runs; every text in it is
redacted (no secret reaches it). A transcript that became shorter
(compaction) or was replaced (a stored session resumed) is written again.

The format is Rein's own, shaped like Claude Code's so that the usual
readings work (it is not Claude's exact schema): every line has ``type``
(``user``, ``assistant``; a tool's result is a ``user`` line, as in
Claude's), ``message`` with ``role`` and ``content`` (a string for the
person's text; otherwise a list of blocks: ``text``, ``thinking``,
``tool_use`` with ``id``, ``name`` and ``input`` named as the hook
protocol names them, ``tool_result`` with ``tool_use_id``, ``content`` and
``is_error``), ``session_id``, ``cwd`` and ``timestamp`` (when the line
was written). Rein's own fields: ``origin`` of a user line (``prompt``,
``steer``, ``follow_up``, ``repair``, ...) and ``index`` (the message's
place in the transcript). Claude's ``uuid``, ``parentUuid`` and
``version`` are not written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rein.bring.hook_protocol import claude_tool
from rein.harness.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from rein.harness.redaction import redact

__all__ = ["TranscriptFile", "redacted", "transcript_line", "transcript_path"]

TRANSCRIPTS = "transcripts"


def redacted(value: Any) -> Any:
    """``value`` (JSON data) with every text redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v) for v in value]
    return value


def _block(part: TextPart | ThinkingPart | ToolCall, root: Path) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ThinkingPart):
        return {"type": "thinking", "thinking": "" if part.redacted else part.thinking}
    name, tool_input = claude_tool(part.name, dict(part.arguments or {}), root)
    return {"type": "tool_use", "id": part.id, "name": name, "input": tool_input}


def transcript_line(message: Message, index: int, session_id: str, root: Path) -> dict[str, Any]:
    """One message as its transcript line (not yet redacted)."""
    line: dict[str, Any] = {"type": "user", "index": index}
    if isinstance(message, UserMessage):
        line["origin"] = message.origin
        line["message"] = {"role": "user", "content": message.content}
    elif isinstance(message, AssistantMessage):
        line["type"] = "assistant"
        blocks = [_block(part, root) for part in message.content]
        line["message"] = {"role": "assistant", "content": blocks}
    else:
        assert isinstance(message, ToolResultMessage)
        result = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": message.content,
            "is_error": message.is_error,
        }
        line["message"] = {"role": "user", "content": [result]}
    line["session_id"] = session_id
    line["cwd"] = str(root)
    line["timestamp"] = datetime.now(UTC).isoformat(timespec="milliseconds")
    return line


class TranscriptFile:
    """The JSONL transcript of one session at ``path``."""

    def __init__(self, path: Path, session_id: str, root: Path) -> None:
        self.path = path
        self.session_id = session_id
        self.root = root
        #: The messages written, by identity (messages are frozen).
        self._written: list[Message] = []
        self._opened = False

    def sync(self, messages: Sequence[Message]) -> None:
        """Bring the file up to ``messages``: the new ones appended; all of
        it written again when the transcript is not an extension of what
        was written (the first time, a compaction). OSError: it cannot be
        written."""
        done = len(self._written)
        extends = self._opened and len(messages) >= done
        if extends and done and messages[done - 1] is not self._written[-1]:
            extends = False
        start = done if extends else 0
        new = list(messages[start:])
        if extends and not new:
            return
        lines = [
            json.dumps(redacted(transcript_line(m, start + i, self.session_id, self.root)))
            for i, m in enumerate(new)
        ]
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if extends else os.O_TRUNC)
        fd = os.open(self.path, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("".join(line + "\n" for line in lines))
        self._written = [*self._written, *new] if extends else new
        self._opened = True


def transcript_path(folder: Path, session_id: str) -> Path:
    """Where the transcript of ``session_id`` is kept under the storage ``folder``."""
    return folder / TRANSCRIPTS / f"{session_id}.jsonl"
