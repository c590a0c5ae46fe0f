"""A prompt's runs: the first run, then every queued follow-up as a run of
its own (an abort between them ends the prompt, the follow-ups kept), each
with its own :class:`~rein.harness.run.run_types.RunControl` and cancel
token, between ``agent_start`` and ``agent_end``, the async listeners'
deliveries awaited, the transcript checkpointed in the store after each."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any

import anyio

from rein.harness._agent_listeners import Outbox
from rein.harness._agent_queues import take
from rein.harness.agent_state import CancelToken
from rein.harness.config import HarnessConfig
from rein.harness.events import AgentEnd, AgentStart, Event, FollowUpStarted, RunEnd
from rein.harness.messages import Message, UserMessage
from rein.harness.ports import Model, Persistence
from rein.harness.run.loop import LoopContext, RunControl, RunResult, run_loop
from rein.harness.run.run_types import RunOptions
from rein.harness.run.steering import Steering

__all__ = ["PromptRuns"]

log = logging.getLogger("rein.harness.agent")


class PromptRuns:
    """Mixed into :class:`~rein.harness.agent.Agent`."""

    model: Model
    config: HarnessConfig
    persistence: Persistence | None
    waiting_for: str | None
    current_run_id: str | None
    last_result: RunResult | None
    on_run_idle_timeout: Callable[[BaseException], None] | None
    _messages: list[Message]
    _run_id_factory: Callable[[], str]
    _steering: Steering
    _follow_ups: deque[UserMessage]
    _control: RunControl | None
    _token: CancelToken | None
    _abort_pending: str | None
    _ended: str | None
    _outbox: Outbox | None
    _running: bool
    _idle: anyio.Event
    _emit: Callable[[Event], None]
    _deliver: Callable[[Outbox], Coroutine[Any, Any, None]]
    _loop_context: Callable[[str, RunOptions], LoopContext]

    async def _process(self, new_messages: list[Message], run: RunOptions) -> RunResult:
        self._running = True
        self._abort_pending = None
        self._ended = None
        self._steering.run_begins()
        self._idle = anyio.Event()
        outbox = Outbox()
        self._outbox = outbox
        result: RunResult | None = None
        try:
            async with anyio.create_task_group() as deliveries:
                deliveries.start_soon(self._deliver, outbox)
                try:
                    result = await self._runs(new_messages, run)
                finally:
                    self._running = False
                    self._control = None
                    self._token = None
                    self.current_run_id = None
                    self._emit(AgentEnd(status=result.status if result else "failed"))
                    self._outbox = None
                    outbox.close()
        except BaseExceptionGroup as group:
            # The delivery task never raises: the error is the run's own.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            self._outbox = None
            self._idle.set()
        assert result is not None
        return result

    async def _runs(self, new_messages: list[Message], run: RunOptions) -> RunResult:
        self._emit(AgentStart())
        result = await self._run_once(new_messages, run)
        # Follow-ups run with the same options; carried changes were the first run's.
        run = replace(run, carried=(), resume=None)
        while result.status == "completed" and self._follow_ups:
            if self._abort_pending is not None:
                # Aborted between the run and its follow-up: the follow-ups
                # stay queued (the host decides), and the caller hears of it.
                result = replace(result, status="aborted", error=self._abort_pending)
                self.last_result = result
                break
            follow = take(self._follow_ups, self.config.follow_up_mode)
            self._ended = None  # the follow-up's run is about to start
            self._emit(FollowUpStarted(text="\n\n".join(m.content for m in follow)))
            # An abort from a follow_up_started listener ends this run at once.
            result = await self._run_once(follow, run)
        return result

    async def _run_once(self, new_messages: Sequence[Message], run: RunOptions) -> RunResult:
        run_id = self._run_id_factory()
        self.current_run_id = run_id
        control = RunControl()
        if self._abort_pending is not None:
            # Aborted before this run's scope opened (at agent_start, or
            # when its follow-up was announced): it ends at once.
            control.abort(self._abort_pending)
        self._control = control
        self._ended = None
        self._token = CancelToken(control)
        ctx = self._loop_context(run_id, run)
        length_before = len(self._messages)
        result = await run_loop(ctx, self.config, self._run_emit, self.model, new_messages, control)
        if control.reason is not None and control.reason.startswith("idle timeout"):
            self._report_idle_timeout(control.reason)
        self._control = None
        if self.persistence is not None:
            if len(self._messages) < length_before or any(
                isinstance(m, UserMessage) and m.origin == "compaction" for m in self._messages[:1]
            ):
                await self.persistence.rewrite(self._messages)
            await self.persistence.checkpoint()
        self.waiting_for = result.waiting_for
        self.last_result = result
        return result

    def _run_emit(self, event: Event) -> None:
        """The run's events; at its ``run_end`` the run's scope is done, so
        an abort from then on aims at what would run next."""
        if isinstance(event, RunEnd) and event.run_id == self.current_run_id:
            self._control = None
            self._ended = event.status
        self._emit(event)

    def _report_idle_timeout(self, reason: str) -> None:
        if self.on_run_idle_timeout is None:
            return
        try:
            self.on_run_idle_timeout(TimeoutError(reason))
        except Exception:
            log.exception("on_run_idle_timeout raised")
