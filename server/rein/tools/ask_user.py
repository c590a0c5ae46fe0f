"""``ask_user``: a question to the person through the UserChannel port."""

from __future__ import annotations

from pydantic import BaseModel, Field

from rein.harness.tools import Tool, ToolContext, ToolResult

__all__ = ["AskUserArgs", "AskUserTool"]


class AskUserArgs(BaseModel):
    question: str = Field(
        min_length=1,
        description="One clear question, with the options when there are some.",
    )


class AskUserTool(Tool[AskUserArgs]):
    name = "ask_user"
    description = (
        "Ask the person a question and wait for the answer. Use it only when you cannot go "
        "on without their decision (ambiguous requirements, a choice with real trade-offs, "
        "missing information you cannot find in the workspace)."
    )
    args_model = AskUserArgs
    tool_class = "other"
    prompt_section: str = (
        "`ask_user` asks the person; use it only for decisions you cannot make from the "
        "code and the task."
    )

    async def execute(self, args: AskUserArgs, ctx: ToolContext) -> ToolResult:
        channel = ctx.env.user
        question = args.question.strip()
        if channel is None:
            return ToolResult(
                "No one can answer questions in this session. Decide yourself using the "
                "most reasonable assumption, and state it in your final answer.",
                details={"no_channel": True, "question": question},
            )
        answer = await channel.ask(question)
        if answer is None or not answer.strip():
            return ToolResult(
                "The person did not answer. Do not ask again now: continue with the most "
                "reasonable assumption and say which one in your final answer, or stop and "
                "explain what you need.",
                details={"no_answer": True, "question": question},
            )
        return ToolResult(f"The person answered: {answer.strip()}", details={"answer": answer})
