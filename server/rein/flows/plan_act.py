"""The Plan-Act flow: a Planner makes a plan, an Executor runs it step by step.

States: idle -> planning -> executing <-> updating -> summarizing -> completed
(and failed / waiting). Each transition is a ``plan_state`` event.

* The Planner has ``tool_choice: required`` and holds no work tools: only the
  ``submit_plan`` output tool and a compact overview of the toolkits (names
  and one line each) in its prompt, so full schemas stay out of its context.
* The Executor runs one step at a time with the work tools and ends each step
  with ``complete_step``. A successful step is marked locally (a
  ``plan_updated`` event, no Planner round trip); only a failed step enters
  *updating*, where the Planner revises the remaining steps.
* ``complete_step(success=true)`` is rejected unless a work tool succeeded
  during the step (in any of its runs: before a wait, after a restart).
* An empty plan completes at once; a single successful step skips the summary.
* The gates run after the Executor's last step, with the agent mode's repair
  budget, over every change the plan made that no gate validated yet (kept
  in the snapshot, so a restart does not lose them).
* An abort, a crash or a restart leaves the plan in its state; the next
  message resumes the same plan (planning: plan again; executing, waiting:
  continue the step; updating: the revision first; summarizing: the summary).
* A failed or empty final summary fails the run with the reason.

The tools (``submit_plan``, ``complete_step``) and the Planner's overview of
the work tools are :mod:`rein.flows.plan_tools`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from rein.flows.plan_snapshot import PlanSnapshot
from rein.flows.plan_tools import (
    CompleteStepArgs,
    PlanArgs,
    complete_step_tool,
    submit_plan_tool,
    toolkit_overview,
    work_done,
)
from rein.harness.agent import Agent, RunResult, new_run_id
from rein.harness.events import Emit, PlanState, PlanStateName, PlanStep, PlanUpdated
from rein.harness.gating.gates import GatePipeline
from rein.harness.messages import Usage, UserMessage
from rein.harness.prompts import summariser_prompt
from rein.harness.run.output import OutputTool, output_of
from rein.harness.run.run_record import RunMutation
from rein.harness.run.run_types import RunOptions

__all__ = ["PlanActFlow", "PlanSnapshot"]

PlanReason = Literal["planned", "step_done", "step_failed", "revised", "step_started"]
SaveState = Callable[[PlanSnapshot], Awaitable[None]]


def _step_prompt(step: PlanStep, index: int, total: int, done: list[PlanStep]) -> str:
    finished = "\n".join(f"- {s.id}: {s.summary or s.description}" for s in done) or "(none yet)"
    return (
        f"Step {index + 1} of {total} — {step.id}: {step.description}\n\n"
        f"Steps done so far:\n{finished}\n\n"
        "Do this step now with your tools, then call complete_step with its id."
    )


class PlanActFlow:
    def __init__(
        self,
        planner: Agent,
        executor: Agent,
        emit: Emit,
        *,
        gates: GatePipeline | None = None,
        max_replans: int = 3,
        save_state: SaveState | None = None,
        snapshot: PlanSnapshot | None = None,
        step_tool: OutputTool[CompleteStepArgs] | None = None,
        project_instructions: str | None = None,
    ) -> None:
        """``step_tool`` replaces the executor's ``complete_step`` (the evals
        swap in one without the no-work check to show the check matters).
        ``project_instructions`` reach the summary run's prompt, made from
        the executor's tools at the time (the planner's names ``submit_plan``,
        which the summary run cannot call)."""
        self.project_instructions = project_instructions
        self.planner = planner
        self.executor = executor
        self.emit = emit
        self.gates = gates
        self.max_replans = max_replans
        self.save_state = save_state
        self.plan = snapshot or PlanSnapshot()
        self._submit = submit_plan_tool()
        self._complete = step_tool or complete_step_tool(lambda: self.plan.step_work)
        self._usage = Usage()
        self._turns = 0
        self._repairs = 0
        self._mutations: list[RunMutation] = []
        self.model_calls = 0
        self._active = False
        #: The session's bootstrap context, for the planner's next prompt.
        self._context: str | None = None
        #: An abort that came while no run was active: the next run does not start.
        self._abort_reason: str | None = None

    # ------------------------------------------------------------- plumbing

    async def _to(self, state: PlanStateName) -> None:
        previous = self.plan.state
        self.plan.state = state
        self.emit(PlanState(state=state, previous=previous))
        await self._save()

    async def _save(self) -> None:
        if self.save_state is not None:
            await self.save_state(self.plan)

    def _plan_event(self, reason: PlanReason) -> None:
        self.emit(PlanUpdated(steps=list(self.plan.steps), reason=reason))

    def _set_step(self, index: int, **update: Any) -> None:
        self.plan.steps[index] = self.plan.steps[index].model_copy(update=update)

    def _account(self, result: RunResult) -> None:
        self._usage = self._usage + result.usage
        self._turns += result.turns
        self._repairs += result.repair_attempts
        self._mutations.extend(result.mutations)
        self.plan.unvalidated.extend(result.mutations)

    def _result(
        self,
        status: str,
        text: str,
        run_id: str,
        error: str | None = None,
        base: RunResult | None = None,
    ) -> RunResult:
        return RunResult(
            run_id=run_id,
            status=status,  # type: ignore[arg-type]
            text=text,
            turns=self._turns,
            repair_attempts=self._repairs,
            generations=sorted({m.generation for m in self._mutations}),
            usage=self._usage,
            error=error,
            blockers=list(base.blockers) if base else [],
            waiting_for=base.waiting_for if base else None,
            mutations=list(self._mutations),
        )

    def _planner_run(
        self, tool_choice: str, required_output: str | None, system_prompt: str | None = None
    ) -> RunOptions:
        """The planner's own options (model, max tokens, temperature) with
        this run's tool choice (and system prompt: None, the planner's).
        ``submit_plan`` stays in the summary's request too, where the tool
        choice is none: that request can call nothing."""
        return RunOptions(
            options=self.planner.options.model_copy(update={"tool_choice": tool_choice}),
            required_output=required_output,
            extra_tools=[self._submit],
            system_prompt=system_prompt,
        )

    def _executor_run(self, final_step: bool) -> RunOptions:
        """A step's run: ends with complete_step; the last step runs the gates
        over every change of the plan not validated yet (restored ones too:
        the session's gates keep them pending until a pass)."""
        if final_step and self.gates is not None:
            self.gates.validation.keep(self.plan.unvalidated)
        return RunOptions(
            gates=self.gates if final_step else None,
            required_output=self._complete.name,
            extra_tools=[self._complete],
            carried=list(self.plan.unvalidated) if final_step else (),
        )

    def _after_final_step(self) -> None:
        """The last step's gates looked: what they validated is no longer the
        plan's to carry (what they did not stays pending in the session)."""
        gates = self.gates
        if gates is not None:
            self.plan.unvalidated = [
                m for m in self.plan.unvalidated if m in gates.validation.pending
            ]

    async def _completed(self, text: str, run_id: str) -> RunResult:
        """The plan is done. Its changes are the session's now: validated, or
        pending in the session's gates (none to carry without gates)."""
        self.plan.unvalidated = []
        await self._to("completed")
        return self._result("completed", text, run_id)

    async def _ask_planner(self, text: str) -> RunResult:
        context, self._context = self._context, None
        result = await self._prompt(
            self.planner,
            text,
            run=self._planner_run("required", self._submit.name),
            context=context,
        )
        self._account(result)
        return result

    async def _aborted(self, result: RunResult, text: str = "") -> RunResult:
        """An aborted run keeps the plan's state: the next message resumes it."""
        await self._save()
        return self._result("aborted", text, result.run_id, result.error, result)

    # ------------------------------------------------------------------ run

    @property
    def waiting(self) -> bool:
        return self.plan.state == "waiting"

    def abort(self, reason: str) -> bool:
        """Abort the flow: its running Agent's run, or (between two runs,
        while the flow saves or changes state) the next run it would start.
        False when the flow is not running."""
        if not self._active:
            return False
        self._abort_reason = self._abort_reason or reason
        self.planner.abort(reason)
        self.executor.abort(reason)
        return True

    async def _prompt(
        self, agent: Agent, text: str, run: RunOptions, context: str | None = None
    ) -> RunResult:
        """``agent.prompt``, unless an abort came between runs: then the run
        does not start and its result is "aborted". ``context``: a bootstrap
        message before ``text`` (not the run's prompt: ``run_start`` names
        ``text``)."""
        if self._abort_reason is not None:
            return RunResult(run_id=new_run_id(), status="aborted", error=self._abort_reason)
        if context is None:
            return await agent.prompt(text, run=run)
        messages = [UserMessage(content=context, origin="bootstrap"), UserMessage(content=text)]
        return await agent.prompt_messages(messages, run=run)

    async def run(self, text: str, context: str | None = None) -> RunResult:
        """The person's message ``text``; ``context``: the session's
        bootstrap context (a fresh session's), which the planner reads
        before its first task and which is not part of the plan's task."""
        self._active, self._abort_reason = True, None
        if context is not None:
            self._context = context
        try:
            return await self._run(text)
        finally:
            self._active = False

    async def _run(self, text: str) -> RunResult:
        """A new task, or (in any unfinished state) the message that resumes
        the same plan: planning asks for the plan again, executing and
        waiting continue the step, updating asks for the revision first,
        summarizing asks for the summary again. A resumed plan first says
        where it stands (a ``plan_state`` whose ``previous`` is the same
        state), so a panel that reconnected after a restart shows it."""
        state = self.plan.state
        if self._resumable:
            self.emit(PlanState(state=state, previous=state))
        if state in ("waiting", "executing") and self.plan.steps:
            return await self._execute(resume_text=text)
        if state == "updating" and self.plan.steps:
            return await self._resume_updating(text)
        if state == "summarizing" and self.plan.steps:
            return await self._finish(None, note=text)
        if state == "planning" and self.plan.task:
            return await self._make_plan(note=text)
        # A new task; changes an earlier plan left unvalidated stay the plan's.
        self.plan = PlanSnapshot(task=text, unvalidated=self.plan.unvalidated)
        if state != "planning":
            self.plan.state = state  # its first plan_state names where the last one stood
        return await self._make_plan(note=None)

    @property
    def _resumable(self) -> bool:
        """Does the next message go on with the plan (not a new task)?"""
        state = self.plan.state
        if state in ("waiting", "executing", "updating", "summarizing"):
            return bool(self.plan.steps)
        return state == "planning" and bool(self.plan.task)

    async def _make_plan(self, note: str | None) -> RunResult:
        if self.plan.state != "planning":
            await self._to("planning")
        text = self.plan.task
        prompt = f"Task: {text}\n\nMake the plan now and submit it with submit_plan."
        if note is not None:
            prompt = f"The person adds: {note}\n\n{prompt}"
        result = await self._ask_planner(prompt)
        if result.status == "aborted":
            return await self._aborted(result)
        if result.status != "completed" or result.output is None:
            await self._to("failed")
            return self._result(
                "failed",
                "",
                result.run_id,
                f"planning failed: {result.error or 'no plan was submitted'}",
                result,
            )
        plan = output_of(result.output, PlanArgs)
        self.plan.steps = [PlanStep(id=s.id, description=s.description) for s in plan.steps]
        self.plan.index = 0
        self._plan_event("planned")
        if not self.plan.steps:
            return await self._completed("Nothing to do: the plan is empty.", result.run_id)
        await self._to("executing")
        return await self._execute(resume_text=None)

    async def _resume_updating(self, text: str) -> RunResult:
        """Interrupted while the planner revised the plan: ask for the
        revision again, then go on with the revised steps."""
        failed = self.plan.steps[self.plan.index]
        reason = failed.summary or "the step did not finish"
        revised = await self._ask_revision(failed, reason, note=text)
        if revised is not None:
            return revised
        return await self._execute(resume_text=None)

    async def _execute(self, resume_text: str | None) -> RunResult:
        if self.plan.state != "executing":
            await self._to("executing")
        last: RunResult | None = None
        while self.plan.index < len(self.plan.steps):
            i = self.plan.index
            step = self.plan.steps[i]
            final_step = i == len(self.plan.steps) - 1
            run = self._executor_run(final_step)
            if resume_text is not None and self.executor.waiting_for is not None:
                last = await self._prompt(self.executor, resume_text, run=run)
            elif resume_text is not None and step.status == "running":
                # Interrupted inside the step: go on in its transcript.
                last = await self._prompt(
                    self.executor,
                    f"{resume_text}\n\n(Continue step {step.id}: {step.description}; "
                    "finish it with complete_step.)",
                    run=run,
                )
            else:
                self._set_step(i, status="running")
                self.plan.step_work = []
                self._plan_event("step_started")
                await self._save()
                done = [s for s in self.plan.steps[:i] if s.status == "done"]
                text = _step_prompt(step, i, len(self.plan.steps), done)
                if resume_text is not None:  # interrupted between steps
                    text = f"The person adds: {resume_text}\n\n{text}"
                last = await self._prompt(self.executor, text, run=run)
            resume_text = None
            self._account(last)
            self.plan.step_work.extend(work_done(last.tools_succeeded))
            if final_step:
                self._after_final_step()
            if last.status == "waiting":
                await self._to("waiting")
                return self._result("waiting", last.text, last.run_id, last.error, last)
            if last.status == "aborted":
                return await self._aborted(last, last.text)
            answer = output_of(last.output, CompleteStepArgs) if last.output else None
            if last.status == "completed" and answer is not None and answer.success:
                self._set_step(i, status="done", summary=answer.summary)
                self._plan_event("step_done")
                self.plan.index += 1
                await self._save()
                continue
            reason = (answer.summary if answer else None) or last.error or "the step did not finish"
            self._set_step(i, status="failed", summary=reason)
            self._plan_event("step_failed")
            if last.blockers:  # the gates' repair budget ran out on the last step
                await self._to("failed")
                return self._result("failed", last.text, last.run_id, last.error, last)
            if self.plan.replans >= self.max_replans:
                await self._to("failed")
                return self._result(
                    "failed",
                    last.text,
                    last.run_id,
                    f"step {step.id} failed and the plan was revised {self.max_replans} times: {reason}",
                    last,
                )
            self.plan.replans += 1
            await self._to("updating")
            revised = await self._ask_revision(step, reason, note=None)
            if revised is not None:
                return revised
        return await self._finish(last)

    async def _ask_revision(
        self, failed: PlanStep, reason: str, note: str | None
    ) -> RunResult | None:
        """Ask the planner to revise the remaining steps (in *updating*).
        None when the plan was revised and execution goes on."""
        done = [s for s in self.plan.steps if s.status == "done"]
        remaining = [s for s in self.plan.steps[self.plan.index :]]
        text = (
            f"Step {failed.id} failed: {reason}\n\n"
            "Done so far:\n"
            + ("\n".join(f"- {s.id}: {s.summary}" for s in done) or "(nothing)")
            + "\n\n"
            "Remaining (including the failed step):\n"
            + "\n".join(f"- {s.id}: {s.description}" for s in remaining)
            + "\n\nSubmit the revised remaining steps with submit_plan (only what is still to do)."
        )
        if note is not None:
            text = f"The person adds: {note}\n\n{text}"
        result = await self._ask_planner(text)
        if result.status == "aborted":
            return await self._aborted(result)
        if result.status != "completed" or result.output is None:
            await self._to("failed")
            return self._result(
                "failed", "", result.run_id, f"revising the plan failed: {result.error}", result
            )
        plan = output_of(result.output, PlanArgs)
        kept = self.plan.steps[: self.plan.index]
        self.plan.steps = kept + [PlanStep(id=s.id, description=s.description) for s in plan.steps]
        self._plan_event("revised")
        await self._to("executing")
        return None

    async def _finish(self, last: RunResult | None, note: str | None = None) -> RunResult:
        """The summary (skipped for a single successful step and an empty
        revised plan). A summary that fails, or says nothing, fails the run
        with the reason; ``note`` is the person's message on resume."""
        run_id = last.run_id if last else "run_plan"
        done = [s for s in self.plan.steps if s.status == "done"]
        if not self.plan.steps:  # the revision left nothing to do
            return await self._completed("Nothing to do: the revised plan is empty.", run_id)
        if len(self.plan.steps) == 1 and done:
            return await self._completed(done[0].summary or "", run_id)
        if self.plan.state != "summarizing":
            await self._to("summarizing")
        steps = "\n".join(f"- {s.id}: {s.summary}" for s in done)
        prompt = (
            f"All steps are done:\n{steps}\n\nWrite the final answer for the person: what was "
            "done and anything they should know. Plain text, short."
        )
        if note is not None:
            prompt = f"The person adds: {note}\n\n{prompt}"
        system = summariser_prompt(toolkit_overview(self.executor.tools), self.project_instructions)
        run = self._planner_run("none", None, system_prompt=system)
        summary = await self._prompt(self.planner, prompt, run=run)
        self._account(summary)
        if summary.status == "aborted":
            return await self._aborted(summary, summary.text)
        if summary.status != "completed" or not summary.text.strip():
            await self._to("failed")
            why = summary.error or "the planner wrote no final answer"
            return self._result(
                "failed", summary.text, summary.run_id, f"the final summary failed: {why}", summary
            )
        return await self._completed(summary.text, summary.run_id)
