"""A stored session's transcript as ``session/update`` notifications, for
``session/load``: the client rebuilds the conversation from them before the
load is answered.

The person's prompts (and their steers and follow-ups) become
``user_message_chunk``; the model's text and reasoning agent chunks; every
tool call one ``tool_call`` with its final status and content (its result,
or "no result" for a call a crash left unanswered); in plan mode the
planner's conversation comes first and the plan last, as a ``plan`` update.
What Rein added itself (the bootstrap context, repair prompts, nudges) is
not replayed: the person never typed it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acp import helpers
from acp.schema import ToolCallLocation, ToolCallStatus

from rein.acp.tool_labels import tool_kind, tool_title
from rein.acp.updates import RESULT_CHARS, SessionUpdate, plan_entries
from rein.harness.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from rein.session import Session

__all__ = ["PERSON_ORIGINS", "replay_messages", "replay_session"]

#: The user messages a person wrote (the others Rein added).
PERSON_ORIGINS = frozenset({"prompt", "steer", "follow_up"})


def _locations(root: Path, call: ToolCall) -> list[ToolCallLocation] | None:
    path = call.arguments.get("path")
    if not isinstance(path, str) or not path or call.name == "run_command":
        return None
    return [ToolCallLocation(path=str((root / path).resolve()))]


def replay_messages(messages: Sequence[Message], root: Path) -> list[SessionUpdate]:
    """The updates that draw ``messages`` (one agent's transcript)."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    updates: list[SessionUpdate] = []
    for message in messages:
        if isinstance(message, UserMessage):
            if message.origin in PERSON_ORIGINS and message.content:
                updates.append(helpers.update_user_message_text(message.content))
        elif isinstance(message, AssistantMessage):
            for part in message.content:
                if isinstance(part, TextPart) and part.text:
                    updates.append(helpers.update_agent_message_text(part.text))
                elif isinstance(part, ThinkingPart) and part.thinking and not part.redacted:
                    updates.append(helpers.update_agent_thought_text(part.thinking))
                elif isinstance(part, ToolCall):
                    updates.append(_replayed_call(part, results.get(part.id), root))
    return updates


def _replayed_call(call: ToolCall, result: ToolResultMessage | None, root: Path) -> SessionUpdate:
    status: ToolCallStatus
    if result is None:
        status, text = "failed", "no result (the run was interrupted)"
    else:
        status = "failed" if result.is_error else "completed"
        text = result.content[:RESULT_CHARS]
    return helpers.start_tool_call(
        call.id,
        tool_title(call.name, call.arguments),
        kind=tool_kind(call.name),
        status=status,
        content=[helpers.tool_content(helpers.text_block(text))] if text else None,
        locations=_locations(root, call),
        raw_input=dict(call.arguments),
    )


def replay_session(session: Session, root: Path) -> list[SessionUpdate]:
    """Everything a loaded session's client should show, in order."""
    updates: list[SessionUpdate] = []
    if session.planner is not None:
        updates.extend(replay_messages(session.planner.messages, root))
    updates.extend(replay_messages(session.agent.messages, root))
    if session.flow is not None and session.flow.plan.steps:
        updates.append(helpers.update_plan(plan_entries(session.flow.plan.steps)))
    return updates
