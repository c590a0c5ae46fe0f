"""The shapes of MCP configuration: a server as Rein starts it, an input
to ask for, a server that does not start and why."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["SOURCE_WHERE", "InputSpec", "McpServerSpec", "Skipped", "Source", "Transport"]

#: Where a server was configured ("acp": the ACP client gave it with session/new).
Source = Literal["vscode", "mcp.json", "settings", "acp"]
Transport = Literal["stdio", "http"]

#: Where each source is written, as the person knows it (``rein doctor``).
SOURCE_WHERE: dict[str, str] = {
    "vscode": ".vscode/mcp.json",
    "mcp.json": ".mcp.json",
    "settings": "rein.mcp.servers",
    "acp": "the ACP client",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerSpec:
    """One MCP server as Rein starts it (values substituted)."""

    name: str
    source: Source
    transport: Transport
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
    trusted: bool
    #: The command line (or URL) as written, variables and inputs not put
    #: in ("": as :meth:`command_line`): what listings show, since a value
    #: put in (a token, a DSN) is never printed.
    written: str = ""

    def command_line(self) -> str:
        """What the trust question shows: the command line, or the URL."""
        if self.transport == "http":
            return self.url or ""
        return shlex.join([self.command or "", *self.args])

    def shown_line(self) -> str:
        """What ``rein mcp list`` and ``rein doctor`` show: :attr:`written`."""
        return self.written or self.command_line()


@dataclass(frozen=True, slots=True)
class Skipped:
    """A configured server that does not start, and why."""

    name: str
    source: Source
    reason: str


@dataclass(frozen=True, slots=True)
class InputSpec:
    """An entry of ``inputs`` in ``.vscode/mcp.json``."""

    id: str
    type: Literal["promptString", "pickString"]
    description: str = ""
    #: promptString: hide what is typed.
    password: bool = False
    #: pickString: the choices.
    options: tuple[str, ...] = ()
    default: str | None = None
