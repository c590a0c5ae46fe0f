"""The Plan-Act flow's tools and its planner's view of the work tools.

* ``submit_plan`` (the Planner's output tool) takes the steps, with unique
  ids; an empty plan is a plan.
* ``complete_step`` (the Executor's output tool, one per step) is rejected
  with success=true unless a work tool (any but :data:`NON_WORK_TOOLS`)
  succeeded during the step, in this run or the step's earlier ones.
* :func:`toolkit_overview` is all the Planner knows of the work tools: a
  name and one line each, so their schemas stay out of its context.

The flow that uses them is :class:`~rein.flows.plan_act.PlanActFlow`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from rein.harness.errors import ToolError
from rein.harness.prompts import planner_prompt
from rein.harness.run.output import OutputTool
from rein.harness.tools import Tool, ToolContext, ToolRegistry

__all__ = [
    "NON_WORK_TOOLS",
    "CompleteStepArgs",
    "PlanArgs",
    "StepSpec",
    "complete_step_tool",
    "planner_system_prompt",
    "submit_plan_tool",
    "toolkit_overview",
    "work_done",
]

#: Tools that do not count as work for complete_step(success=true).
NON_WORK_TOOLS = frozenset({"complete_step", "submit_plan", "ask_user"})


class StepSpec(BaseModel):
    id: str = Field(description="A short unique id, e.g. 's1'")
    description: str = Field(description="What to do in this step, concretely")


class PlanArgs(BaseModel):
    steps: list[StepSpec] = Field(description="The steps in order; empty if nothing needs doing")


class CompleteStepArgs(BaseModel):
    step_id: str = Field(description="The id of the step you finished")
    success: bool = Field(description="True when the step is done; False when it cannot be done")
    summary: str = Field(description="What you did, or why the step failed")


def submit_plan_tool() -> OutputTool[PlanArgs]:
    def summary(args: PlanArgs) -> str:
        return f"Plan recorded: {len(args.steps)} step(s)."

    def check(args: PlanArgs, ctx: ToolContext) -> None:
        ids = [s.id for s in args.steps]
        if len(set(ids)) != len(ids):
            raise ToolError("Step ids must be unique; send the plan again with distinct ids.")

    return OutputTool(
        "submit_plan",
        "Submit the plan: the steps the executor will carry out, in order.",
        PlanArgs,
        check=check,
        summary=summary,
    )


def work_done(names: Sequence[str]) -> list[str]:
    """The work tools among ``names`` (tools that succeeded)."""
    return [name for name in names if name not in NON_WORK_TOOLS]


def complete_step_tool(
    earlier_work: Callable[[], Sequence[str]] = lambda: (),
) -> OutputTool[CompleteStepArgs]:
    """``complete_step``: success=true is rejected unless a work tool
    succeeded during the step, in this run or in the step's earlier runs
    (``earlier_work``: before an ask_user wait or a restart)."""

    def check(args: CompleteStepArgs, ctx: ToolContext) -> None:
        if args.success and not work_done([*earlier_work(), *ctx.record.tools_succeeded]):
            raise ToolError(
                "complete_step(success=true) was rejected: no work tool ran during this step "
                "(or every one failed). Do the work first (read, search, edit, write, run a "
                "command), then call complete_step again; or call it with success=false and "
                "the reason."
            )

    return OutputTool(
        "complete_step",
        "Finish the current step: success=true once it is done (after doing the work), "
        "success=false with the reason when it cannot be done.",
        CompleteStepArgs,
        check=check,
        summary=lambda a: f"Step {a.step_id} {'done' if a.success else 'failed'}: {a.summary}",
        # A failed step is revised or fails the plan: its changes are
        # validated by the gates of the step that finishes the plan.
        validates=lambda a: a.success,
    )


def toolkit_overview(tools: ToolRegistry | Sequence[Tool[Any]]) -> str:
    """Names and one line each: what the planner knows of the work tools."""
    items = (
        [tools.get(n) for n in tools.names()] if isinstance(tools, ToolRegistry) else list(tools)
    )
    lines = []
    for tool in items:
        if tool is None or tool.name in NON_WORK_TOOLS:
            continue
        first = tool.description.strip().split(". ")[0].split("\n")[0].rstrip(".")
        lines.append(f"- `{tool.name}`: {first}")
    return "\n".join(lines)


def planner_system_prompt(overview: str, project_instructions: str | None = None) -> str:
    """The planner's system prompt: see :func:`rein.harness.prompts.planner_prompt`
    (its summary run's is :func:`rein.harness.prompts.summariser_prompt`)."""
    return planner_prompt(overview, project_instructions)
