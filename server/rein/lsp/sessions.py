"""Sessions inside the language server: one Agent each, runs as tasks, and
the event stream to the client (gap-free ``seq``, coalesced text deltas)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from rein.harness import Agent, RunResult, Usage
from rein.harness.events import Event, MessageDelta

__all__ = ["EventStream", "Session", "SessionBusyError", "result_payload"]

log = logging.getLogger(__name__)

#: Text deltas are flushed at most this often per session (~60 per second).
COALESCE_S = 0.016

SessionStatus = Literal[
    "idle", "running", "completed", "failed", "aborted", "waiting", "interrupted"
]


class SessionBusyError(Exception):
    pass


class EventStream:
    """Numbers events per session and sends them; text and thinking deltas
    are merged and sent at most once per ``COALESCE_S``."""

    def __init__(
        self,
        session_id: str,
        send: Callable[[dict[str, Any]], None],
        run_id: Callable[[], str | None],
        interval_s: float = COALESCE_S,
    ) -> None:
        self.session_id = session_id
        self._send = send
        self._run_id = run_id
        self.interval_s = interval_s
        self.seq = 0
        self._pending: list[MessageDelta] = []
        self._timer: asyncio.TimerHandle | None = None
        self._last_run_id: str | None = None
        self.sent = 0

    def __call__(self, event: Event) -> None:
        if event.type == "run_start":
            self._last_run_id = event.run_id
        if event.type == "message_delta" and event.kind in ("text", "thinking"):
            if self._pending and self._pending[-1].kind != event.kind:
                self.flush()
            self._pending.append(event)
            if self._timer is None:
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:
                    self.flush()
                    return
                self._timer = loop.call_later(self.interval_s, self.flush)
            return
        self.flush()
        self._emit(event.model_dump(mode="json"))

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        first = self._pending[0]
        merged = {
            "type": "message_delta",
            "kind": first.kind,
            "delta": "".join(e.delta for e in self._pending),
            "tool_call_id": None,
            "tool_name": None,
        }
        self._pending = []
        self._emit(merged)

    def _emit(self, payload: dict[str, Any]) -> None:
        self.seq += 1
        self.sent += 1
        self._send(
            {
                "sessionId": self.session_id,
                "runId": self._run_id() or self._last_run_id,
                "seq": self.seq,
                "event": payload,
            }
        )


def result_payload(session_id: str, result: RunResult) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "sessionId": session_id,
        "runId": result.run_id,
        "status": result.status,
        "text": result.text,
        "turns": result.turns,
        "repairAttempts": result.repair_attempts,
        "generations": result.generations,
        "usage": {
            "inputTokens": result.usage.input_tokens,
            "outputTokens": result.usage.output_tokens,
            "cacheReadTokens": result.usage.cache_read_tokens,
            "cacheWriteTokens": result.usage.cache_write_tokens,
        },
    }
    if result.error:
        payload["error"] = result.error
    if result.blockers:
        payload["blockers"] = [b.model_dump(mode="json") for b in result.blockers]
    return payload


def new_session_id() -> str:
    return "ses_" + uuid.uuid4().hex[:12]


@dataclass(eq=False)
class Session:
    id: str
    agent: Agent
    stream: EventStream
    title: str = ""
    mode: str = "agent"
    status: SessionStatus = "idle"
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    task: asyncio.Task[RunResult] | None = None
    #: Extra per-session cleanup (unsubscribe, ...).
    closers: list[Callable[[], None]] = field(default_factory=list)
    #: What the session was started for ("chat", "fix", "explain", "autoRepair").
    origin: str = "chat"
    #: Model turns and token usage over all the session's runs.
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    #: Plan mode: the plan-act flow and its planner (``agent`` is the executor).
    flow: Any = None
    planner: Agent | None = None

    def abort(self, reason: str) -> bool:
        aborted = self.agent.abort(reason)
        if self.planner is not None:
            aborted = self.planner.abort(reason) or aborted
        return aborted

    @property
    def current_run_id(self) -> str | None:
        if self.planner is not None and self.planner.current_run_id:
            return self.planner.current_run_id
        return self.agent.current_run_id

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def touch(self) -> None:
        self.updated_at = time.time()

    async def run(self, start: Callable[[], Any]) -> RunResult:
        """Run ``start()`` (a coroutine producing a RunResult) as this
        session's task; resolve when it ends. Cancelling the caller aborts the
        run and waits until its transcript is consistent."""
        if self.busy:
            raise SessionBusyError(
                f"session {self.id} is running; use rein/steer to redirect it or "
                "rein/followUp to queue the next message"
            )
        self.status = "running"
        self.touch()
        self.task = asyncio.ensure_future(start())
        try:
            result: RunResult = await asyncio.shield(self.task)
        except asyncio.CancelledError:
            self.abort("cancelled by the client")
            try:
                await asyncio.wait_for(asyncio.shield(self.task), 30)
            except Exception:
                log.exception("session %s: abort after cancel did not finish cleanly", self.id)
            raise
        finally:
            self.stream.flush()
            self.touch()
            if self.task is not None and self.task.done() and not self.task.cancelled():
                exc = self.task.exception()
                if exc is None:
                    self.status = self.task.result().status
                else:
                    self.status = "failed"
        return result
