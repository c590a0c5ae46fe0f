"""``task``: run a subagent on a self-contained subtask."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from rein.flows.subagent_kinds import SubagentKind
from rein.flows.subagents import run_task
from rein.harness.tools import Tool, ToolContext, ToolResult

__all__ = ["TaskArgs", "TaskTool"]


class TaskArgs(BaseModel):
    description: str = Field(
        description="A short name for the subtask (3-6 words), shown to the person"
    )
    prompt: str = Field(description="The complete, self-contained instructions for the subagent")
    tools: list[str] | None = Field(
        None, description="Tool names the subagent may use (default: read-only tools)"
    )
    max_turns: int = Field(20, ge=1, le=50, description="The subagent's model-turn budget")
    agent: str | None = Field(
        None,
        description="The name of one of the agents listed with this tool: the subagent is that "
        "agent, with its own tools and instructions (tools is then ignored)",
    )


class TaskTool(Tool[TaskArgs]):
    name = "task"
    description = (
        "Run a subagent with its own fresh context on a self-contained subtask, such as "
        "researching how something is used across many files, and get back its final answer. "
        "Use it to keep your own context small; give it everything it needs in the prompt."
    )
    args_model = TaskArgs
    tool_class = "other"
    prompt_section: str = (
        "`task` runs a subagent on a self-contained subtask (its own context and budget) and "
        "returns its answer; use it for broad searches so your context stays small."
    )

    def __init__(self, kinds: Sequence[SubagentKind] = ()) -> None:
        if kinds:
            listed = "\n".join(f"  - {k.name}: {k.description}" for k in kinds)
            self.prompt_section = (
                f"{TaskTool.prompt_section} Start one of these agents with task(agent=<name>) "
                f"when the subtask matches its description:\n{listed}"
            )

    async def execute(self, args: TaskArgs, ctx: ToolContext) -> ToolResult:
        return await run_task(
            ctx, args.description, args.prompt, args.tools, args.max_turns, args.agent
        )
