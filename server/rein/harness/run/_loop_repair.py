"""A final answer's gates: their verdict over the run's unvalidated
changes, then the repair turn the blockers ask for, or the failed result
once ``harness.maxRepairAttempts`` is spent; and the gates told of every new
change as it comes (the dependency coordinator starts installs from it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import anyio.abc

from rein.harness.config import HarnessConfig
from rein.harness.events import Blocker, Event, RepairAttempt, RunStatus
from rein.harness.gating.gates import build_repair_prompt
from rein.harness.messages import Message, UserMessage
from rein.harness.run.run_record import RunRecord
from rein.harness.run.run_types import LoopContext, RunResult
from rein.harness.run.run_validation import RunValidation
from rein.harness.run.watchdog import Activity

__all__ = ["RunRepair"]


def _short(b: Blocker) -> str:
    if b.path is not None and b.line is not None:
        return f"{b.path}:{b.line + 1}: {b.message}"
    return b.message


class RunRepair:
    """Mixed into the loop's run state (:mod:`rein.harness.run.loop`)."""

    ctx: LoopContext
    config: HarnessConfig
    record: RunRecord
    validation: RunValidation
    activity: Activity
    repair_attempts: int
    blockers: list[Blocker]
    terminal: dict[str, Any] | None
    mutations_seen: int
    task_group: anyio.abc.TaskGroup | None
    emit: Callable[[Event], None]
    append_with_events: Callable[[Message], None]
    finish: Callable[[RunStatus, str | None], RunResult]

    async def validate(self) -> RunResult | Literal["repair"] | None:
        """Run the gates over unvalidated changes: None when they pass (or
        there is nothing to check), "repair" when a repair turn follows, the
        failed result when the repair budget is spent."""
        config = self.config
        if not self.validation.unvalidated():
            return None
        if self.terminal is not None and self.terminal.get("skip_gates"):
            return None  # the answer gave up: later gates validate its changes
        with self.activity.paused("gates"):
            verdict = await self.validation.check(self.ctx.env.workspace)
        blockers = verdict.blockers
        if not blockers:
            # Passed, or unverified (nothing to repair): the result says which.
            return None
        if self.repair_attempts >= config.max_repair_attempts:
            self.blockers = blockers
            return self.finish(
                "failed",
                f"{len(blockers)} problem(s) remain after {self.repair_attempts} "
                f"repair attempt(s) (harness.maxRepairAttempts = "
                f"{config.max_repair_attempts}): " + "; ".join(_short(b) for b in blockers[:5]),
            )
        self.repair_attempts += 1
        self.emit(
            RepairAttempt(
                attempt=self.repair_attempts,
                max_attempts=config.max_repair_attempts,
                blockers=blockers,
            )
        )
        prompt = build_repair_prompt(
            blockers, self.repair_attempts, config.max_repair_attempts, verdict.not_checked
        )
        self.terminal = None
        self.append_with_events(UserMessage(content=prompt, origin="repair"))
        return "repair"

    def observe_mutations(self) -> None:
        """Tell the gates (the dependency coordinator) about new changes."""
        mutations = self.record.to_validate()
        if self.ctx.gates is not None and self.task_group is not None:
            for change in mutations[self.mutations_seen :]:
                self.ctx.gates.on_mutation(change.mutation, self.task_group.start_soon)
        self.mutations_seen = len(mutations)
