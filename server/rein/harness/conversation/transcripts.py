"""Transcript repair: an ask_user answer in place of its placeholder, and
the rollback of a transcript a crash left with unanswered calls."""

from __future__ import annotations

from collections.abc import Sequence

from rein.harness.messages import AssistantMessage, Message, ToolResultMessage

__all__ = ["INTERRUPTED", "answer_message", "dangling_tool_calls", "repair_transcript"]


def answer_message(placeholder: ToolResultMessage, text: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=placeholder.tool_call_id,
        tool_name=placeholder.tool_name,
        content=f"The person answered: {text.strip()}",
    )


INTERRUPTED = (
    "Interrupted: the session stopped before this call finished (the server exited). "
    "Nothing is known about its effect: check before repeating it."
)


def repair_transcript(messages: Sequence[Message]) -> tuple[list[Message], int]:
    """Roll back a transcript left by a crash: every tool call without a
    result gets an "interrupted" one, placed after its turn's results.
    Returns the repaired transcript and how many results were added."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)}
    out: list[Message] = []
    added = 0
    missing: list[ToolResultMessage] = []
    for message in messages:
        if missing and not isinstance(message, ToolResultMessage):
            out.extend(missing)
            added += len(missing)
            missing = []
        out.append(message)
        if isinstance(message, AssistantMessage):
            missing = [
                ToolResultMessage(
                    tool_call_id=c.id, tool_name=c.name, content=INTERRUPTED, is_error=True
                )
                for c in message.tool_calls
                if c.id not in answered
            ]
    out.extend(missing)
    added += len(missing)
    return out, added


def dangling_tool_calls(messages: Sequence[Message]) -> list[str]:
    """Ids of tool calls that have no result (should always be empty)."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)}
    return [
        c.id
        for m in messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
        if c.id not in answered
    ]
