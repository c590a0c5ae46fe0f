"""The turn loop: one run, from the new user message(s) to a result.

:func:`run_loop` is a function over a :class:`LoopContext` (the transcript,
tools, hooks, queues), the config, an ``emit`` callback and the model. The
:class:`~rein.harness.agent.Agent` is its stateful shell. A turn streams the
model's reply (:class:`~rein.harness.run.streaming.TurnStream`), executes its tool
calls (:class:`~rein.harness.calls.tool_calls.ToolExecutor`), and a final answer
runs the gates over the run's record of changes
(:mod:`rein.harness.run.run_record`). The run's state mixes in its exits
(:mod:`~rein.harness.run._loop_exits`), its hooks and steering
(:mod:`~rein.harness.run._loop_hooks`), its gates and repair turns
(:mod:`~rein.harness.run._loop_repair`) and its spending
(:mod:`~rein.harness.run._loop_spend`).

Invariants kept here (docs/architecture.md lists them all):

* every tool call in the transcript has exactly one result, whatever happens
  (unknown tool, invalid arguments, a raising tool, a blocked call, abort);
* every ``*_start`` event has its ``*_end``;
* every change the run caused, whoever made it, is in its record, and a final
  answer with unvalidated changes runs the gates;
* the per-turn cost does not grow with the length of the history.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, Literal

import anyio
import anyio.abc
import anyio.lowlevel

from rein.harness.calls.tool_calls import ToolBatch, ToolExecutor
from rein.harness.config import HarnessConfig
from rein.harness.conversation.context import ContextOverflowError
from rein.harness.conversation.window import WindowGuard
from rein.harness.conversation.wire import WireTap
from rein.harness.cost.spend import RunSpend
from rein.harness.errors import ContextLengthError, ModelError
from rein.harness.events import (
    Blocker,
    Emit,
    ErrorEvent,
    Event,
    MessageEnd,
    MessageStart,
    RunStart,
    TurnStart,
)
from rein.harness.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    Usage,
    UserMessage,
)
from rein.harness.ports import (
    Model,
    ModelRequest,
)
from rein.harness.run._loop_exits import RunExits
from rein.harness.run._loop_hooks import RunHooks
from rein.harness.run._loop_repair import RunRepair
from rein.harness.run._loop_spend import RunSpending
from rein.harness.run._resume import resume_waiting_call
from rein.harness.run.run_record import RunRecord, recording
from rein.harness.run.run_types import LoopContext, RunControl, RunResult
from rein.harness.run.run_validation import RunValidation
from rein.harness.run.streaming import DegenerateReplies, TurnStream
from rein.harness.run.watchdog import Activity, watchdog

__all__ = ["LoopContext", "RunControl", "RunResult", "run_loop"]

log = logging.getLogger(__name__)

#: What a turn's step decided: start the next turn, or go on to validation.
_Next = Literal["next_turn", "validate"]


class _TurnLoop(RunExits, RunHooks, RunRepair, RunSpending):
    """State of one run; ``execute`` is the loop, ``finish_*`` the exits."""

    def __init__(self, ctx: LoopContext, config: HarnessConfig, emit: Emit, model: Model) -> None:
        self.ctx = ctx
        self.config = config
        self._emit_out = emit
        self.model = model
        #: The model of the current turn (``prepare_next_turn`` may change it).
        self.turn_model = model
        self.last_event = time.monotonic()
        self.turn = 0
        self.turn_open = False
        #: The run's usage so far, and the open turn's part of it.
        self.usage = Usage()
        self.turn_usage = Usage()
        self.last_text = ""
        self.record = RunRecord(ctx.carried, run_id=ctx.run_id)
        self.tools = ToolExecutor(ctx, config, self.emit, record=self.record)
        #: The assistant message being streamed (for the abort path).
        self.stream = TurnStream(self.emit, ctx.steering)
        self.degenerate = DegenerateReplies(
            config.max_empty_retries, config.empty_answer_with_changes
        )
        self.activity = Activity(self.emit)
        self.validation = RunValidation(ctx.gates, self.record, self.emit)
        self.repair_attempts = 0
        self.blockers: list[Blocker] = []
        #: ask_user calls that got no answer: (tool_call_id, question)
        self.waiting_for: list[tuple[str, str]] = []
        #: The details of an output tool's result that ended the run.
        self.terminal: dict[str, Any] | None = None
        self.output_nudges = 0
        #: How many times ``on_stop`` kept this run going.
        self.stop_continuations = 0
        #: Why a completed run has no answer text (an accepted empty reply).
        self.end_reason: str | None = None
        self.mutations_seen = 0
        self.task_group: anyio.abc.TaskGroup | None = None
        self.window = WindowGuard(ctx, self.emit, self.activity, self.summarize)
        window = ctx.budget.window if ctx.budget is not None else config.context_window
        self.spend = RunSpend(ctx.prices, config, window, model.name)

    # ------------------------------------------------------------------ events

    def emit(self, event: Event) -> None:
        self.last_event = time.monotonic()
        self._emit_out(event)

    def append(self, message: Message) -> None:
        self.ctx.messages.append(message)
        if self.ctx.on_message is not None:
            self.ctx.on_message(message)

    def append_with_events(self, message: Message) -> None:
        self.emit(MessageStart(role=message.role))
        self.append(message)
        # Events carry no image data (megabytes each); the transcript keeps it.
        shown = message
        if not isinstance(message, AssistantMessage) and message.images:
            shown = message.model_copy(update={"images": ()})
        self.emit(MessageEnd(message=shown))

    async def checkpoint(self) -> None:
        if self.ctx.checkpoint is not None:
            await self.ctx.checkpoint()

    # -------------------------------------------------------------------- loop

    async def execute(self, new_messages: Sequence[Message]) -> RunResult:
        refused = await self.begin(new_messages)
        if refused is not None:
            return self.finish("failed", refused)
        if self.waiting_for:
            # The resumed call (a subagent) asked the person again.
            await self.checkpoint()
            return self.finish(
                "waiting", f"waiting for the person's answer: {self.waiting_for[0][1]}"
            )
        # One checkpoint per run: an abort that came before the run's scope
        # opened (at agent_start) ends it here, its messages kept.
        await anyio.lowlevel.checkpoint()
        while True:
            if self.turn >= self.config.max_model_turns_per_run:
                # Checked before the boundary: a steer that no turn would
                # answer stays queued (has_steering), not in the transcript.
                return self.finish(
                    "failed",
                    f"reached the limit of {self.config.max_model_turns_per_run} model turns "
                    "for one run (harness.maxModelTurnsPerRun)",
                )
            over = self.over_budget()
            if over is not None:
                return over
            await self.apply_steering()
            reply = await self.model_turn()
            if isinstance(reply, RunResult):
                return reply
            if reply is None:
                continue  # an empty reply, retried
            if reply.tool_calls:
                step = await self.tool_turn(reply.tool_calls)
            else:
                step = self.answer_turn()
            if isinstance(step, RunResult):
                return step
            if step == "next_turn":
                continue
            repaired = await self.validate()
            if isinstance(repaired, RunResult):
                return repaired
            if repaired is None:
                # An abort that came during the final answer's events (its
                # stream, message_end) ends the run here: never completed.
                await anyio.lowlevel.checkpoint()
                if await self.ctx.steering.waiting():
                    # A steer that arrived during the final turn (or its
                    # validation) starts another turn: never left stranded.
                    continue
                # An abort while the external source answered that check.
                await anyio.lowlevel.checkpoint()
                if await self.kept_going():
                    continue
                return self.finish_answered()

    async def begin(self, new_messages: Sequence[Message]) -> str | None:
        """Announce the run, append its new messages, give the gates their
        baseline. Returns why the run must end at once (``on_user_prompt``
        refused its prompt), else None."""
        prompt = next(
            (
                m.content
                for m in new_messages
                if isinstance(m, UserMessage) and m.origin != "bootstrap"
            ),
            None,
        )
        self.emit(RunStart(run_id=self.ctx.run_id, prompt=prompt))
        verdict = await self.prompt_verdict(prompt)
        if verdict.block is not None:
            return verdict.block
        for message in new_messages:
            self.append_with_events(message)
        if verdict.context:
            self.append_with_events(UserMessage(content=verdict.context, origin="hook"))
        if self.ctx.gates is not None:
            with self.activity.paused("gate baselines"):
                await self.validation.begin(self.ctx.env.workspace)
            self.observe_mutations()  # carried manifest changes start their installs now
        if self.ctx.resume is not None:
            waiting = await resume_waiting_call(
                self.ctx, self.config, self.emit, self.record, self.ctx.resume
            )
            self.waiting_for.extend([waiting] if waiting else [])
            self.observe_mutations()
        return None

    async def model_turn(self) -> AssistantMessage | RunResult | None:
        """One model call: the assistant message; None for an empty reply
        that is retried or a retry's wait a steer ended; the run's result
        when the run ends here."""
        ctx = self.ctx
        self.turn += 1
        self.record.turn = self.turn
        self.turn_open = True
        self.emit(TurnStart(turn=self.turn))
        overrides = await self.turn_overrides()
        if overrides.system is not None:
            ctx.system = overrides.system
        model = overrides.model or self.model
        self.tools.model = overrides.model  # a `task` child follows the routing
        if ctx.wire_dump:
            model = WireTap(model, self.emit, self.turn)
        options = overrides.options or ctx.options
        self.turn_model = model
        base = overrides.messages
        # The breaker's notes go into this request only, never the transcript.
        notes = self.tools.breaker.take_notes() if self.tools.breaker is not None else []
        rejected: int | None = None
        while True:
            try:
                messages, base = await self.window.fit(base, notes, rejected)
            except ContextOverflowError as exc:
                return self.finish("failed", f"context overflow: {exc}")
            except ModelError as exc:
                return self.finish("failed", f"context compaction failed: {exc}")
            await self.checkpoint()
            request = ModelRequest(
                system=ctx.system, messages=messages, tools=ctx.tools.schemas(), options=options
            )
            try:
                assistant = await self.stream.stream(model, request)
            except ContextLengthError as exc:
                if rejected is None and not self.stream.open and ctx.budget is not None:
                    # Relief, then one retry (relief off: the guard fails verbatim).
                    self.emit(ErrorEvent(message=str(exc), where="model"))
                    rejected = max(1, self.window.size(messages, ctx.budget))
                    continue
                self.close_partial_stream("error")
                return self.finish("failed", f"model error: {exc}")
            except ModelError as exc:
                self.close_partial_stream("error")
                return self.finish("failed", f"model error: {exc}")
            if assistant is None:
                self.end_turn(0)
                return None  # a steer ended a retry's wait: deliver it, then ask anew
            break
        self.count_usage(assistant.usage)
        budget = ctx.budget
        self.spend.request(
            assistant.usage, lambda: self.window.size(messages, budget) if budget is not None else 0
        )
        if assistant.is_empty():
            return self.degenerate_reply(assistant)
        self.degenerate.empty = 0
        self.end_reason = None  # an answer after an accepted empty one
        self.append(assistant)
        self.emit(MessageEnd(message=assistant))
        if assistant.text:
            self.last_text = assistant.text
        return assistant

    def degenerate_reply(self, assistant: AssistantMessage) -> AssistantMessage | RunResult | None:
        """No text and no tool call: retried (None), accepted as the answer
        once the retries are spent (the message), or the run fails."""
        step = self.degenerate.judge(assistant)
        if step.accept:
            self.emit(ErrorEvent(message=step.message, where="model"))
            self.append(assistant)
            self.emit(MessageEnd(message=assistant))
            self.end_reason = step.message
            return assistant
        self.emit(MessageEnd(message=assistant))
        if step.fail:
            return self.finish("failed", step.message)
        self.emit(ErrorEvent(message=step.message, where="model"))
        self.end_turn(0)
        if step.nudge is not None:
            self.append_with_events(UserMessage(content=step.nudge, origin="nudge"))
        return None

    async def tool_turn(self, calls: list[ToolCall]) -> RunResult | _Next:
        """Execute the turn's calls; wait for the person, go on, or (when an
        output tool answered) validate."""
        await self.checkpoint()
        self.ctx.steering.new_phase()
        batch = await self.tools.execute(calls)
        self.take_batch(batch)
        self.end_turn(len(calls))
        self.observe_mutations()
        if batch.stopped is not None:
            return self.finish_aborted(batch.stopped)  # a stuck call, policy "cancel"
        if self.waiting_for:
            await self.checkpoint()
            question = self.waiting_for[0][1]
            return self.finish("waiting", f"waiting for the person's answer: {question}")
        if not self.terminal:
            return "next_turn"
        # An output tool gave the answer: treat it like a final answer.
        self.last_text = str(self.terminal.get("text") or "") or self.last_text
        return "validate"

    def take_batch(self, batch: ToolBatch) -> None:
        for result in batch.results:
            self.append_with_events(result)
        self.waiting_for.extend(batch.waiting_for)
        if batch.terminal is not None:
            self.terminal = batch.terminal

    def answer_turn(self) -> RunResult | _Next:
        """A text answer: validate it, unless an output tool must give it."""
        self.end_turn(0)
        required = self.ctx.required_output
        if required is None or self.terminal:
            return "validate"
        if self.output_nudges < 1:
            self.output_nudges += 1
            self.append_with_events(
                UserMessage(
                    content=f"You must answer by calling the `{required}` tool, not with "
                    "plain text. Call it now.",
                    origin="nudge",
                )
            )
            return "next_turn"
        return self.finish(
            "failed", f"the model answered in text twice instead of calling `{required}`"
        )

    # --------------------------------------------------------------- watchdog

    def busy(self) -> bool:
        """Tools, gates, installs and compactions are activity, not idleness."""
        gates = self.ctx.gates
        installing = (
            gates is not None and gates.dependencies is not None and gates.dependencies.busy
        )
        return self.tools.running > 0 or self.activity.active or installing

    def touch(self) -> None:
        self.last_event = time.monotonic()


async def run_loop(
    ctx: LoopContext,
    config: HarnessConfig,
    emit: Emit,
    model: Model,
    new_messages: Sequence[Message] = (),
    control: RunControl | None = None,
) -> RunResult:
    """Run until the model gives a final answer, the turn limit is hit, the
    model fails, or ``control.abort()`` is called. Never raises for those:
    the outcome says what happened."""
    control = control or RunControl()
    run = _TurnLoop(ctx, config, emit, model)
    outcome: RunResult | None = None
    with recording(run.record), anyio.CancelScope() as scope:
        control._scope = scope
        if control.aborted:
            scope.cancel()
        try:
            async with anyio.create_task_group() as tg:
                run.task_group = tg
                if config.run_idle_timeout_ms > 0:
                    tg.start_soon(
                        watchdog,
                        control,
                        config.run_idle_timeout_ms / 1000.0,
                        lambda: run.last_event,
                        run.busy,
                        run.touch,
                    )
                if ctx.steering.external_probe is not None:
                    tg.start_soon(run.poll_external_steering)
                if run.tools.supervisor is not None:
                    tg.start_soon(run.tools.supervisor.run)
                outcome = await run.execute(new_messages)
                tg.cancel_scope.cancel()
        except Exception as exc:
            root: BaseException = exc
            while isinstance(root, BaseExceptionGroup) and root.exceptions:
                root = root.exceptions[0]
            log.exception("run %s crashed", ctx.run_id)
            outcome = run.finish_crashed(root)
    control._scope = None
    if outcome is None:
        outcome = run.finish_aborted(control.reason or "aborted")
    return outcome
