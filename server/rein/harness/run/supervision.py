"""Supervision of running tool calls: heartbeats and time limits.

One :class:`CallSupervisor` task per run watches every call that runs: a
call running longer than the heartbeat interval gets a ``heartbeat`` update
each interval, and a call past its time limit has its cancel scope cancelled
(it is *stuck*; the executor applies the stuck-tool policy).

Starting a call costs a dict entry and a cancel scope without a deadline: no
task, no timer. The supervisor sleeps until the earliest heartbeat or limit
due; while nothing runs it wakes once per ``step`` (the shortest interval or
limit configured), so a call that starts later is never due before the
supervisor's next wake unless its own limit is shorter, and only then is the
supervisor woken early.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import anyio

__all__ = ["CallSupervisor", "RunningCall"]


class RunningCall:
    """One call under supervision: ``scope`` runs it, ``stuck`` tells that
    the supervisor cancelled it at its limit."""

    __slots__ = ("call_id", "deadline", "name", "next_beat", "scope", "started", "stuck")

    def __init__(self, call_id: str, name: str, started: float, beat: float, limit: float) -> None:
        self.call_id = call_id
        self.name = name
        self.started = started
        self.next_beat = started + beat if beat > 0 else math.inf
        self.deadline = started + limit if limit > 0 else math.inf
        self.scope = anyio.CancelScope()
        self.stuck = False

    @property
    def due(self) -> float:
        return math.inf if self.stuck else min(self.next_beat, self.deadline)


#: Called with (call id, tool name, seconds running) for each heartbeat.
Beat = Callable[[str, str, float], None]


class CallSupervisor:
    """Heartbeats and limits for the calls of one run (see the module doc).

    :meth:`run` is the supervising task; the run's task group starts it and
    cancels it when the run ends. :attr:`active` tells whether it runs.
    """

    def __init__(self, heartbeat_s: float, default_limit_s: float, beat: Beat) -> None:
        self.heartbeat_s = heartbeat_s
        self.default_limit_s = default_limit_s
        self._beat = beat
        self._running: dict[str, RunningCall] = {}
        self._wake = anyio.Event()
        self._wake_at = math.inf
        self.active = False

    def begin(self, call_id: str, name: str, limit_s: float | None = None) -> RunningCall:
        """Supervise a call starting now; ``limit_s`` overrides the default
        limit (0: none). Run it inside ``running.scope``; :meth:`end` it."""
        limit = self.default_limit_s if limit_s is None else limit_s
        running = RunningCall(call_id, name, time.monotonic(), self.heartbeat_s, limit)
        self._running[call_id] = running
        if running.due < self._wake_at:
            self._wake.set()
        return running

    def end(self, call_id: str) -> None:
        self._running.pop(call_id, None)

    def _step(self) -> float:
        """How long an idle supervisor sleeps: no call can fall due sooner
        after it starts unless its own limit is shorter (it wakes us)."""
        steps = [s for s in (self.heartbeat_s, self.default_limit_s) if s > 0]
        return min(steps) if steps else math.inf

    async def run(self) -> None:
        self.active = True
        try:
            while True:
                now = time.monotonic()
                for running in list(self._running.values()):
                    if running.stuck:
                        continue
                    if running.deadline <= now:
                        running.stuck = True
                        running.scope.cancel()
                    elif running.next_beat <= now:
                        self._beat(running.call_id, running.name, now - running.started)
                        while running.next_beat <= now:
                            running.next_beat += self.heartbeat_s
                if self._running:
                    due = min(r.due for r in self._running.values())
                else:
                    due = now + self._step()
                self._wake_at = due
                if self._wake.is_set():
                    self._wake = anyio.Event()
                    continue
                with anyio.move_on_after(max(0.0, due - now)):
                    await self._wake.wait()
                self._wake = anyio.Event()
        finally:
            self.active = False
            self._wake_at = math.inf
