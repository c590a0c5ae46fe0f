"""How a run ends: the ``run_end`` event and the :class:`RunResult` that
say what happened, and the aborted and crashed exits, which first keep the
transcript valid (the partial message ended, every tool call answered)."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from rein.harness.calls.tool_calls import ToolExecutor
from rein.harness.conversation.tokens import estimate_tokens
from rein.harness.cost.spend import RunSpend
from rein.harness.events import (
    Blocker,
    ErrorEvent,
    Event,
    MessageEnd,
    RunEnd,
    RunStatus,
    SteeringApplied,
)
from rein.harness.messages import Message, Usage
from rein.harness.redaction import redact
from rein.harness.run.run_record import RunRecord
from rein.harness.run.run_types import LoopContext, RunResult
from rein.harness.run.run_validation import RunValidation
from rein.harness.run.streaming import DegenerateReplies, TurnStream

__all__ = ["RunExits"]


class RunExits:
    """Mixed into the loop's run state (:mod:`rein.harness.run.loop`)."""

    ctx: LoopContext
    turn: int
    usage: Usage
    last_text: str
    record: RunRecord
    tools: ToolExecutor
    stream: TurnStream
    validation: RunValidation
    spend: RunSpend
    repair_attempts: int
    blockers: list[Blocker]
    waiting_for: list[tuple[str, str]]
    terminal: dict[str, Any] | None
    degenerate: DegenerateReplies
    end_reason: str | None
    emit: Callable[[Event], None]
    append: Callable[[Message], None]
    append_with_events: Callable[[Message], None]
    end_turn: Callable[[int], None]
    count_usage: Callable[[Usage], None]

    def close_partial_stream(self, stop_reason: str) -> None:
        """Abort or error while streaming: keep what was said, end the message."""
        message = self.stream.close(stop_reason)
        if message is not None:
            # The model produced what streamed and reports nothing for a cut
            # stream: count it, estimated, so an aborted run is not free.
            said = estimate_tokens(message.text + message.thinking) if message.content else 0
            if said:
                usage = Usage(output_tokens=said, estimated=True)
                message = message.model_copy(update={"usage": usage})
                self.count_usage(usage)
            self.append(message)
            self.emit(MessageEnd(message=message))

    def finish(self, status: RunStatus, reason: str | None = None) -> RunResult:
        reason = redact(reason) if reason else reason
        self.end_turn(0)
        self.validation.end()
        unverified = list(self.validation.unverified) if status == "completed" else []
        if status == "failed" and reason:
            self.emit(ErrorEvent(message=reason, where="run", fatal=True))
        self.emit(
            RunEnd(
                run_id=self.ctx.run_id,
                status=status,
                reason=reason,
                turns=self.turn,
                usage=self.usage,
                cost=self.spend.run_cost,
                context=self.spend.context,
                unverified=unverified,
            )
        )
        return RunResult(
            run_id=self.ctx.run_id,
            status=status,
            error=reason,
            text=self.last_text,
            turns=self.turn,
            usage=self.usage,
            repair_attempts=self.repair_attempts,
            generations=self.record.generations,
            blockers=self.blockers,
            waiting_for=self.waiting_for[0][0]
            if status == "waiting" and self.waiting_for
            else None,
            mutations=list(self.record.mutations),
            output=self.terminal,
            tools_used=list(self.record.tools_used),
            tools_succeeded=list(self.record.tools_succeeded),
            unverified=unverified,
            cost=self.spend.run_cost,
            context=self.spend.context,
            model_retries=list(self.stream.retries),
        )

    def finish_answered(self) -> RunResult:
        """The final answer passed its gates: the run completes, unless the
        answer is an empty reply accepted after the retries and the run
        changed files (``harness.emptyAnswerWithChanges``: then it fails)."""
        if self.end_reason is not None:
            changed = dict.fromkeys(p for m in self.record.to_validate() for p in m.paths)
            failure = self.degenerate.unanswered_changes(list(changed))
            if failure is not None:
                return self.finish("failed", failure)
        return self.finish("completed", self.end_reason)

    def finish_aborted(self, reason: str) -> RunResult:
        self.close_partial_stream("aborted")
        pending = self.tools.pending
        self.abandon_tool_calls(reason)
        self.end_turn(pending)
        steering = self.ctx.steering.drain()
        if steering:
            for message in steering:
                self.append_with_events(message)
            self.emit(SteeringApplied(texts=[m.content for m in steering]))
        return self.finish("aborted", reason)

    def abandon_tool_calls(self, reason: str) -> None:
        """The run ends mid-batch: every call still gets its one result."""
        for result in self.tools.abandon(reason):
            self.append_with_events(result)

    def finish_crashed(self, exc: BaseException) -> RunResult:
        """A bug in the loop itself: keep the transcript valid, fail the run."""
        self.close_partial_stream("error")
        self.abandon_tool_calls(f"internal error: {exc}")
        self.emit(
            ErrorEvent(
                message="".join(traceback.format_exception_only(type(exc), exc)).strip(),
                where="loop",
                fatal=True,
            )
        )
        return self.finish("failed", f"internal error: {type(exc).__name__}: {exc}")
