"""Tool calls inside a run: a turn's batch, supervised, one result per call.

:class:`ToolExecutor` executes the tool calls of one assistant turn (parallel
or sequential), supervises them (heartbeats, a time limit with a stuck-call
policy, the misuse breaker) and returns exactly one result per call, in call
order, its text redacted and cut to ``harness.maxToolResultChars``. Each call
is invoked (validated, shown to the hooks, executed with retries of
transient failures) by :class:`~rein.harness.calls.invocation.ToolInvoker`.
When the run is aborted or crashes mid-batch, :meth:`ToolExecutor.abandon`
gives the results of the calls that did not finish. Every failure becomes an
``is_error`` result the model can read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import anyio

from rein.harness.calls.invocation import ToolInvoker
from rein.harness.config import HarnessConfig, StuckToolConfig
from rein.harness.events import Emit, ToolCallEnd, ToolCallStart, ToolCallUpdate
from rein.harness.messages import ToolCall, ToolResultMessage
from rein.harness.ports import Model
from rein.harness.redaction import redact, redact_value
from rein.harness.run.breaker import ToolMisuseBreaker
from rein.harness.run.run_record import RunRecord
from rein.harness.run.run_types import FromConfig, LoopContext
from rein.harness.run.supervision import CallSupervisor
from rein.harness.tools import ToolResult

__all__ = ["ToolBatch", "ToolExecutor", "truncate_tool_output"]


def truncate_tool_output(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters, keeping head and tail, with a
    marker that says how much was cut and how to see the rest."""
    if len(text) <= limit:
        return text
    marker_room = 200
    keep = max(limit - marker_room, 100)
    head = keep * 2 // 3
    tail = keep - head
    cut = len(text) - head - tail
    cut_lines = text.count("\n", head, len(text) - tail)
    marker = (
        f"\n[... {cut} characters ({cut_lines} lines) cut from this result. "
        "Read the rest with read_file offset/limit, or narrow the search ...]\n"
    )
    return text[:head] + marker + text[len(text) - tail :]


@dataclass(slots=True)
class ToolBatch:
    """What one turn's tool calls gave: a result per call, in call order."""

    results: list[ToolResultMessage]
    #: ask_user calls that got no answer: (tool_call_id, question).
    waiting_for: list[tuple[str, str]] = field(default_factory=list)
    #: The details of an output tool's successful result (it ends the run).
    terminal: dict[str, Any] | None = None
    #: Why the run must stop now (a stuck call under the "cancel" policy);
    #: the calls it cut short have "aborted" results.
    stopped: str | None = None


class ToolExecutor:
    """Executes the tool calls of a run, one batch (assistant turn) at a time.

    Its state outlives a batch where the run needs it: the misuse breaker and
    ``running`` (the watchdog does not count tool time). ``record`` is the
    run's record every tool's context shares.
    """

    def __init__(
        self,
        ctx: LoopContext,
        config: HarnessConfig,
        emit: Emit,
        *,
        record: RunRecord | None = None,
    ) -> None:
        self.ctx = ctx
        self.config = config
        self.emit = emit
        self.record = record if record is not None else RunRecord()
        #: Invokes each call (validation, hooks, execution, retries).
        self.invoker = ToolInvoker(ctx, config, emit, self.record)
        breaker = ctx.tool_misuse_breaker
        if isinstance(breaker, FromConfig):
            breaker = config.tool_misuse_breaker
        #: The misuse breaker of the run (None: off).
        self.breaker = ToolMisuseBreaker(breaker) if breaker is not None else None
        stuck = ctx.stuck_tool
        #: Heartbeats and the stuck-call policy (None: unsupervised).
        self.stuck: StuckToolConfig | None = (
            config.stuck_tool if isinstance(stuck, FromConfig) else stuck
        )
        #: The model ``prepare_next_turn`` chose for the turn whose calls run
        #: now (None: the agent's own); the tools' contexts carry it.
        self.model: Model | None = None
        #: Batches executing now (0 or 1; the watchdog pauses while > 0).
        self.running = 0
        # The batch in flight.
        self._calls: list[ToolCall] = []
        self._results: list[ToolResultMessage | None] = []
        self._started: set[str] = set()
        #: When each running call started (an aborted call's end says how long it ran).
        self._start_times: dict[str, float] = {}
        self._ended: set[str] = set()
        self._waiting_for: list[tuple[str, str]] = []
        self._terminal: dict[str, Any] | None = None
        self._stopped: str | None = None
        self._batch_scope: anyio.CancelScope | None = None
        #: Heartbeats and time limits of the running calls (None: unsupervised).
        self.supervisor: CallSupervisor | None = None
        if self.stuck is not None and (self.stuck.heartbeat_ms > 0 or self.stuck.timeout_ms > 0):
            self.supervisor = CallSupervisor(
                self.stuck.heartbeat_ms / 1000.0, self.stuck.timeout_ms / 1000.0, self._heartbeat
            )

    @property
    def pending(self) -> int:
        """Calls of an unfinished batch (non-zero only after an abort)."""
        return len(self._calls)

    # ------------------------------------------------------------------ batch

    async def execute(self, calls: list[ToolCall]) -> ToolBatch:
        """Execute ``calls`` (parallel when configured) under a heartbeat
        supervisor; one result per call, in call order. Calls past
        ``harness.maxToolCallsPerTurn`` are not run: each gets an error
        result saying why."""
        self._begin(calls)
        cap = self.config.max_tool_calls_per_turn
        for index, call in enumerate(calls[cap:], start=cap):
            self._refuse(index, call, len(calls), cap)
        runs = calls[:cap]
        self.running += 1
        try:
            supervisor = self.supervisor
            if supervisor is None or supervisor.active:
                await self._run_batch(runs)
            else:  # outside a run's task group: supervised for this batch
                async with anyio.create_task_group() as tg:
                    tg.start_soon(supervisor.run)
                    await self._run_batch(runs)
                    tg.cancel_scope.cancel()
        finally:
            self.running -= 1
            self._batch_scope = None
        stopped, waiting_for, terminal = self._stopped, self._waiting_for, self._terminal
        if stopped is not None:
            results = self.abandon(stopped)
        else:
            results = [r for r in self._results if r is not None]
        self._begin([])
        return ToolBatch(results, waiting_for, terminal, stopped)

    async def _run_batch(self, calls: list[ToolCall]) -> None:
        with anyio.CancelScope() as self._batch_scope:
            if self.config.tool_execution == "parallel" and len(calls) > 1:
                async with anyio.create_task_group() as calls_tg:
                    for index, call in enumerate(calls):
                        calls_tg.start_soon(self._run_call, index, call)
            else:
                for index, call in enumerate(calls):
                    await self._run_call(index, call)

    def abandon(self, reason: str) -> list[ToolResultMessage]:
        """The run ends mid-batch: the results so far, and an "aborted" error
        result (with its start/end events) for every call without one."""
        out: list[ToolResultMessage] = []
        for index, call in enumerate(self._calls):
            result = self._results[index]
            if result is None:
                result = self._aborted(call, reason)
            out.append(result)
        self._begin([])
        return out

    def _begin(self, calls: list[ToolCall]) -> None:
        self._calls = calls
        self._results = [None] * len(calls)
        self._started = set()
        self._start_times = {}
        self._ended = set()
        self._waiting_for = []
        self._terminal = None
        self._stopped = None

    def _refuse(self, index: int, call: ToolCall, asked: int, cap: int) -> None:
        """A call past the per-turn cap: its events and an error result."""
        text = (
            f"Not run: this turn asked for {asked} tool calls; only the first {cap} ran "
            "(harness.maxToolCallsPerTurn). Call it again later if it is still needed."
        )
        self._started.add(call.id)
        self._ended.add(call.id)
        self.emit(ToolCallStart(tool_call_id=call.id, name=call.name, arguments=call.arguments))
        self.emit(ToolCallEnd(tool_call_id=call.id, name=call.name, is_error=True, content=text))
        self._results[index] = ToolResultMessage(
            tool_call_id=call.id, tool_name=call.name, content=text, is_error=True
        )

    def _aborted(self, call: ToolCall, reason: str) -> ToolResultMessage:
        text = f"Tool call aborted: {reason}"
        if call.id not in self._started:
            self.emit(ToolCallStart(tool_call_id=call.id, name=call.name, arguments=call.arguments))
        if call.id not in self._ended:
            self._ended.add(call.id)
            began = self._start_times.get(call.id)
            self.emit(
                ToolCallEnd(
                    tool_call_id=call.id,
                    name=call.name,
                    is_error=True,
                    content=text,
                    duration_ms=0.0 if began is None else (time.perf_counter() - began) * 1000.0,
                )
            )
        return ToolResultMessage(
            tool_call_id=call.id, tool_name=call.name, content=text, is_error=True
        )

    # ------------------------------------------------------------------- call

    async def _run_call(self, index: int, call: ToolCall) -> None:
        """One call: start event, breaker, supervised execution, end event."""
        started = time.perf_counter()
        self._started.add(call.id)
        self._start_times[call.id] = started
        tool = self.ctx.tools.get(call.name)
        self.emit(
            ToolCallStart(
                tool_call_id=call.id,
                name=call.name,
                arguments=call.arguments,
                details=tool.start_details() if tool is not None else {},
            )
        )
        breaker = self.breaker
        verdict = breaker.check(call) if breaker is not None else None
        if verdict is not None and verdict.blocked:
            result = ToolResult(verdict.reason, is_error=True)
        else:
            result = await self._supervise(call)
            if breaker is not None:
                workspace = self.ctx.env.workspace
                breaker.record(
                    call, result.is_error, result.content, workspace.generation if workspace else 0
                )
        content = truncate_tool_output(redact(result.content), self.config.max_tool_result_chars)
        self._results[index] = ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=content,
            is_error=result.is_error,
            images=result.images,
        )
        self._note_outcome(call, result)
        self._ended.add(call.id)
        self.emit(
            ToolCallEnd(
                tool_call_id=call.id,
                name=call.name,
                is_error=result.is_error,
                content=content,
                duration_ms=(time.perf_counter() - started) * 1000.0,
                # Redacted like the content (edit_file's diff may hold a key).
                details=redact_value(result.details),
                display=tool.display if tool is not None and not result.is_error else "text",
            )
        )
        if result.details.get("stuck") and self.stuck is not None and self.stuck.policy == "cancel":
            self._stopped = f"{call.name} was stuck and was cancelled (stuck_tool policy: cancel)"
            if self._batch_scope is not None:
                self._batch_scope.cancel()

    def _note_outcome(self, call: ToolCall, result: ToolResult) -> None:
        """What the loop must act on: an unanswered question, a final answer."""
        if result.details.get("no_answer"):
            self._waiting_for.append((call.id, str(result.details.get("question", ""))))
        if result.details.get("terminal") and not result.is_error:
            self._terminal = result.details

    async def _supervise(self, call: ToolCall) -> ToolResult:
        """Run the call under its time limit (the heartbeat supervisor
        reports it while it runs long); a call past the limit is stuck and
        handled by the stuck-tool policy."""
        stuck = self.stuck
        tool = self.ctx.tools.get(call.name)
        limit_ms = stuck.timeout_ms if stuck is not None else 0
        if tool is not None and tool.timeout_s is not None:
            limit_ms = int(tool.timeout_s * 1000)
        attempts = 2 if stuck is not None and stuck.policy == "retry" else 1
        for attempt in range(1, attempts + 1):
            result = await self._attempt(call, limit_ms)
            if result is not None:
                return result
            if attempt < attempts:
                self.emit(
                    ToolCallUpdate(
                        tool_call_id=call.id,
                        name=call.name,
                        kind="status",
                        text=f"stuck after {limit_ms / 1000.0:g} s: cancelled, retrying once",
                    )
                )
        retried = " twice (it was retried once)" if attempts > 1 else ""
        return ToolResult(
            f"{call.name} did not finish within {limit_ms / 1000.0:g} s{retried} and was "
            "cancelled. Try a smaller step, or a command that finishes sooner.",
            is_error=True,
            details={"stuck": True},
        )

    async def _attempt(self, call: ToolCall, limit_ms: int) -> ToolResult | None:
        """One execution under the limit; None when it was stuck."""
        supervisor = self.supervisor
        if supervisor is None:  # unsupervised: only a tool's own limit applies
            if limit_ms <= 0:
                return await self.invoker.invoke(call, self.model)
            with anyio.move_on_after(limit_ms / 1000.0):
                return await self.invoker.invoke(call, self.model)
            return None  # cut at the limit: stuck
        running = supervisor.begin(call.id, call.name, limit_ms / 1000.0)
        result: ToolResult | None = None
        try:
            with running.scope:
                result = await self.invoker.invoke(call, self.model)
        finally:
            supervisor.end(call.id)
        return None if running.stuck else result

    def _heartbeat(self, call_id: str, name: str, elapsed: float) -> None:
        self.emit(
            ToolCallUpdate(
                tool_call_id=call_id,
                name=name,
                kind="heartbeat",
                text=f"still running after {elapsed:.1f} s",
            )
        )
