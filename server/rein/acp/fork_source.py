"""What a ``session/fork`` takes from its source (:func:`rein.acp.opening.fork`).

The conversation as it stands (a tool call still without its result marked
interrupted, as a crash's is), the mode and the title; in plan mode also the
plan: the planner's conversation and the plan's snapshot (its steps, where
it stands, the changes no gate validated yet), so the fork goes on with the
same plan, and ``session/load`` of the fork in a later ``rein acp`` finds
it.

A question the source waits on (``ask_user``) cannot be answered by the
fork: the answer belongs to the source, which is not touched. In the fork
the question's result says so (the model reads that it was not answered
and may ask again), the fork does not wait on it (its next prompt is a
prompt, not the answer), and a plan waiting on it goes on with its step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from rein.flows.plan_snapshot import PlanSnapshot
from rein.harness.agent import repair_transcript
from rein.harness.messages import AssistantMessage, Message, ToolResultMessage
from rein.session import Mode, Session
from rein.session.stored import StoredSession

__all__ = ["ForkSource", "of_live", "of_stored", "question_note"]


@dataclass(slots=True)
class ForkSource:
    """The source of a fork as the fork starts from it."""

    mode: Mode
    title: str
    messages: list[Message]
    planner_messages: list[Message] = field(default_factory=list)
    plan: PlanSnapshot | None = None
    #: The question the source waits on, which the fork cannot answer.
    question: str | None = None


def question_note(source_id: str, question: str) -> str:
    """What the fork says of the source's question (the model, the person)."""
    return (
        f"Not answered here: this session is a fork of session {source_id}, made while "
        f"that session waited for the person's answer to {question!r}. The answer goes to "
        f"{source_id}, not to this fork; ask again if you still need it."
    )


def of_live(session: Session) -> ForkSource:
    """A running or idle source: its transcripts as its last step left them."""
    plan = PlanSnapshot.from_json(session.flow.plan.to_json()) if session.flow is not None else None
    planner = list(session.planner.messages) if session.planner is not None else []
    return _forked(
        session.id,
        cast(Mode, session.mode),  # a session's mode is one of MODES
        session.title,
        list(session.agent.messages),
        planner,
        plan,
        session.agent.waiting_for,
    )


def of_stored(stored: StoredSession) -> ForkSource:
    """A source in the store only. Its plan is copied: the fork's changes
    (a waiting step goes on) never reach the loaded source."""
    spec = stored.spec
    plan = spec.plan_snapshot
    return _forked(
        spec.session_id or "",
        spec.mode,
        spec.title,
        list(spec.messages),
        list(spec.planner_messages),
        PlanSnapshot.from_json(plan.to_json()) if plan is not None else None,
        spec.waiting_for,
    )


def _forked(
    source_id: str,
    mode: Mode,
    title: str,
    messages: list[Message],
    planner: list[Message],
    plan: PlanSnapshot | None,
    waiting_for: str | None,
) -> ForkSource:
    question = _question(messages, waiting_for) if waiting_for is not None else None
    if question is not None and waiting_for is not None:
        note = question_note(source_id, question)
        messages = [
            ToolResultMessage(
                tool_call_id=m.tool_call_id, tool_name=m.tool_name, content=note, is_error=True
            )
            if isinstance(m, ToolResultMessage) and m.tool_call_id == waiting_for
            else m
            for m in messages
        ]
    messages, _ = repair_transcript(messages)
    planner, _ = repair_transcript(planner)
    if plan is not None and plan.state == "waiting":
        plan.state = "executing"  # the step goes on; its question is not the fork's
    return ForkSource(mode, title, messages, planner, plan, question)


def _question(messages: list[Message], call_id: str) -> str:
    """The text of the question asked by the call ``call_id``."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.id == call_id:
                    return str(call.arguments.get("question", "")) or call.name
    return "a question"
