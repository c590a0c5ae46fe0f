"""A stored session read back: its transcripts (rolled back where a crash
left tool calls without results), a waiting ``ask_user`` or subagent, the
plan-act snapshot and the changes earlier runs left unvalidated, as the
:class:`SessionSpec` a session is built from and what is restored into it
once built. :meth:`rein.session.SessionManager.load` uses it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from rein.flows.plan_act import PlanSnapshot
from rein.flows.subagents import PendingChild, SubagentSpawner
from rein.harness import Message, Usage
from rein.harness.agent import repair_transcript
from rein.session.ports import MODES, Mode, SessionSpec
from rein.session.session import Session
from rein.store import SessionRecord, SqliteStore
from rein.store.memory_keys import PLANNER_MEMORY, memory_key

__all__ = ["StoredSession", "read_stored"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class StoredSession:
    """What the store holds of one session: build it from ``spec``, then
    :meth:`restore_into` the built session."""

    store: SqliteStore
    record: SessionRecord
    spec: SessionSpec
    #: The agent's memory state (``waiting_for``, ``subagent``, ``validation``).
    state: dict[str, Any]

    async def restore_into(self, session: Session) -> None:
        """The record's status, turns, usage and times, the subagent the
        session waits on, and the changes earlier runs left unvalidated
        (the next run validates them)."""
        record, state = self.record, self.state
        session.status = record.status  # type: ignore[assignment]
        session.turns = record.turns
        session.usage = Usage(
            **{k: int(v) for k, v in record.usage.items() if k in Usage.model_fields}
        )
        session.created_at = record.created_at
        session.updated_at = record.updated_at
        if state.get("subagent"):
            await _restore_subagent(self.store, session, state["subagent"])
        if session.gates is not None and state.get("validation"):
            session.gates.restore_state(state["validation"])


async def read_stored(store: SqliteStore, session_id: str) -> StoredSession | None:
    """The stored session ``session_id`` (None: the store has none)."""
    record = await store.get_session(session_id)
    if record is None:
        return None
    mode: Mode = record.mode if record.mode in MODES else "agent"
    memory = memory_key(mode)
    messages = await _load_memory(store, session_id, memory)
    state = await store.memory_state(session_id, memory)
    planner_messages: list[Message] = []
    snapshot = None
    if mode == "plan":
        planner_messages = await _load_memory(store, session_id, PLANNER_MEMORY)
        saved = await store.memory_state(session_id, PLANNER_MEMORY)
        snapshot = PlanSnapshot.from_json(saved) if saved else None
    spec = SessionSpec(
        mode=mode,
        title=record.title,
        origin=record.origin,
        session_id=session_id,
        messages=messages,
        waiting_for=state.get("waiting_for"),
        persisted=True,
        planner_messages=planner_messages,
        plan_snapshot=snapshot,
    )
    return StoredSession(store, record, spec, state)


async def _restore_subagent(store: SqliteStore, session: Session, data: Any) -> None:
    """The subagent the session waits on (and its own waiting children),
    with their transcripts: the person's answer resumes it."""
    spawner = session.agent.env.subagents
    if not isinstance(spawner, SubagentSpawner):
        log.warning("session %s waits on a subagent but has no subagents", session.id)
        return
    try:
        pending = PendingChild.model_validate(data)
    except ValueError:
        log.exception("session %s: its waiting subagent's state is unreadable", session.id)
        return
    level: PendingChild | None = pending
    while level is not None:
        spawner.transcripts[level.child_id] = await _load_memory(
            store, session.id, f"{level.child_id}:memory"
        )
        level = level.inner
    spawner.restore(pending)


async def _load_memory(store: SqliteStore, session_id: str, memory: str) -> list[Message]:
    messages, added = repair_transcript(await store.load_messages(session_id, memory))
    if added:
        await store.replace_all(session_id, memory, messages)
    return messages
