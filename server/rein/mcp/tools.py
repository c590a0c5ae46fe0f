"""One MCP server tool as a Rein :class:`~rein.harness.tools.Tool`.

The model sees the server's ``inputSchema`` as it is (checked by
:mod:`rein.mcp.schemas` first) under the name from :mod:`rein.mcp.names`.
Arguments are passed through; the server validates them. A call asks for
approval (class "mcp", ``rein.approval.mcp`` and ``rein.approval.mcpAllow``)
naming the server, the tool and the arguments, then goes through the
:class:`McpCaller` (the manager), whose failures are results the model reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from rein.harness.errors import ReinError
from rein.harness.ports import ToolSchema
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.mcp.names import mcp_tool_names
from rein.tools.approval import check_approval

__all__ = ["McpArgs", "McpCallFailed", "McpCaller", "McpTool", "McpToolInfo", "build_tools"]

_MAX_ARGS_SHOWN = 2000


class McpCallFailed(ReinError):
    """A call without a result: "timeout" (cancelled after the server's
    timeout), "closed" (the connection is gone: a crash) or "error" (a
    JSON-RPC error answer)."""

    def __init__(self, kind: Literal["timeout", "closed", "error"], message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class McpToolInfo:
    """A tool as a server lists it."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]


class McpArgs(BaseModel):
    """Any JSON object: the server checks the arguments against its schema."""

    model_config = ConfigDict(extra="allow")


class McpCaller(Protocol):
    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolResult: ...


class McpTool(Tool[McpArgs]):
    args_model: ClassVar[type[BaseModel]] = McpArgs
    tool_class = "other"

    def __init__(self, info: McpToolInfo, name: str, caller: McpCaller) -> None:
        self.info = info
        self.name = name  # type: ignore[misc]
        self.description = info.description or f"{info.name} (MCP server {info.server})"  # type: ignore[misc]
        first = self.description.split("\n\n")[0].replace("\n", " ")
        self.prompt_section = f"`{name}` (MCP server {info.server}): {first}"
        self._caller = caller
        self._schema = ToolSchema(
            name=name, description=self.description, parameters=info.input_schema
        )

    def start_details(self) -> dict[str, Any]:
        return {"mcpServer": self.info.server, "mcpTool": self.info.name}

    def schema(self) -> ToolSchema:
        assert self._schema is not None
        return self._schema

    async def execute(self, args: McpArgs, ctx: ToolContext) -> ToolResult:
        arguments = dict(args.model_extra or {})
        shown = json.dumps(arguments, ensure_ascii=False, indent=2)
        if len(shown) > _MAX_ARGS_SHOWN:
            shown = shown[:_MAX_ARGS_SHOWN] + "\n…"
        denied = await check_approval(
            ctx,
            "mcp",
            title=f"MCP: {self.info.server} / {self.info.name}",
            detail=f"Server: {self.info.server}\nTool: {self.info.name}\nArguments:\n{shown}",
            action=f"call the MCP tool {self.info.name} of server {self.info.server}",
            mcp=(self.info.server, self.info.name),
            subject=("mcp", f"{self.info.server}/{self.info.name}"),
        )
        if denied is not None:
            denied.details.update(mcpServer=self.info.server, mcpTool=self.info.name)
            return denied
        return await self._caller.call_tool(self.info.server, self.info.name, arguments)


def build_tools(
    infos: Iterable[McpToolInfo], caller: McpCaller, reserved: Iterable[str] = ()
) -> list[McpTool]:
    """The tools for ``infos``, named by :func:`~rein.mcp.names.mcp_tool_names`
    (none of them in ``reserved``: the built-in tools), sorted by name."""
    by_pair = {(i.server, i.name): i for i in infos}
    names = mcp_tool_names(by_pair, reserved)
    tools = [McpTool(by_pair[pair], name, caller) for pair, name in names.items()]
    return sorted(tools, key=lambda t: t.name)
