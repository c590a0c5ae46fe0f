"""``ask_user`` over ACP: the question said in the conversation.

ACP version 1 has no request for a free answer: elicitation
(``elicitation/create``) is an unstable draft in the SDK's schema (marked
UNSTABLE on ``ClientCapabilities.elicitation``), so Rein does not use it
even when a client advertises it, and a permission request offers fixed
options only. The question is sent as an agent message
(``agent_message_chunk``, through ``tell``) and :meth:`ask` returns None at
once: the run ends waiting for the answer (its prompt ends with
``end_turn``), and the person's next ``session/prompt`` is the answer that
the run resumes with.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio

from rein.acp._client_calls import CLIENT_BOUND_S
from rein.acp.context import ClientLink

__all__ = ["ClientUserChannel", "question_message"]

log = logging.getLogger(__name__)


def question_message(question: str) -> str:
    """How the question reads in the editor's conversation."""
    return f"**Question:** {question.strip()}\n\nAnswer in your next message; the task goes on from there."


class ClientUserChannel:
    """The harness ``UserChannel`` of one ACP session. ``tell(text)`` sends
    an agent message to the session's conversation."""

    def __init__(
        self,
        link: ClientLink,
        session_id: str,
        tell: Callable[[str], Awaitable[None]],
        *,
        bound_s: float = CLIENT_BOUND_S,
    ) -> None:
        self.link = link
        self.session_id = session_id
        self.tell = tell
        self.bound_s = bound_s

    async def ask(self, question: str) -> str | None:
        """Say the question; None: the answer comes as the next prompt."""
        try:
            with anyio.fail_after(self.bound_s):
                await self.tell(question_message(question))
        except Exception as exc:
            # The run still ends waiting, and the question is in the
            # transcript (session/load replays it).
            log.warning("session %s: the question could not be sent: %s", self.session_id, exc)
        return None
