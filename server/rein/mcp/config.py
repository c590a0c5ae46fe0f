"""MCP server specs (stub of the shared shape; the mcp-config branch owns
this file and replaces it on merge)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["McpServerSpec"]


@dataclass(frozen=True, slots=True)
class McpServerSpec:
    name: str
    source: Literal["vscode", "mcp.json", "settings"]
    transport: Literal["stdio", "http"]
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    timeout_s: float = 60.0
    trusted: bool = True

    def command_line(self) -> str:
        if self.transport == "http":
            return self.url or ""
        return " ".join([self.command or "", *self.args]).strip()
