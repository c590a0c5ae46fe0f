"""The tool ``rein bench core`` measures the loop with; the tests use it too
(tests/fakes/tools.py re-exports it), so there is one definition."""

from __future__ import annotations

from pydantic import BaseModel

from rein.harness.tools import Tool, ToolContext, ToolResult

__all__ = ["FixedReadArgs", "FixedReadTool"]


class FixedReadArgs(BaseModel):
    path: str


class FixedReadTool(Tool[FixedReadArgs]):
    """``read_file`` returning a fixed string at once, whatever the path."""

    name = "read_file"
    description = "Read a file."
    args_model = FixedReadArgs
    tool_class = "read"

    def __init__(self, content: str = "x" * 2000) -> None:
        self.content = content

    async def execute(self, args: FixedReadArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(self.content)
