"""The default tool set and the prompt sections of tools.

``default_tools(settings)`` builds the registry a session uses from its
:class:`~rein.tools.settings.ToolSettings` (the same object the tools read
at run time through ``ToolEnvironment.settings``): ``tools.disabled`` leaves
tools out (so they are neither offered to the model nor described in its
prompt), ``tools.grepBackend`` picks grep's backend, and the toolkits of
``tools.toolkits`` and of ``rein.toolkits`` entry points
(:mod:`rein.tools.toolkit`) come after the standard tools. The tools read the
approval policy, the deny globs and ``max_tool_result_chars`` at run time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rein.harness.errors import ConfigError
from rein.harness.tools import Tool, ToolRegistry
from rein.tools.ask_user import AskUserTool
from rein.tools.command import RunCommandTool
from rein.tools.diagnostics import GetDiagnosticsTool
from rein.tools.edit import EditFileTool, WriteFileTool
from rein.tools.file_ops import DeleteFileTool, MoveFileTool
from rein.tools.grep import GrepTool
from rein.tools.listing import GlobTool, ListDirTool
from rein.tools.navigation import (
    NAVIGATION_READ_TOOLS,
    FindDefinitionTool,
    FindReferencesTool,
    HoverTool,
    SymbolsTool,
)
from rein.tools.read import ReadFileTool
from rein.tools.rename import RenameSymbolTool
from rein.tools.settings import DEFAULT_TOOL_SETTINGS, DISABLEABLE_TOOL_NAMES, ToolSettings
from rein.tools.toolkit import TOOLKITS_KEY, configured_toolkits

__all__ = [
    "NAVIGATION_READ_TOOLS",
    "NAVIGATION_TOOLS",
    "READ_ONLY_TOOLS",
    "default_tools",
    "navigation_tools",
    "tool_sections",
]

#: The tools that change nothing (plan and explain modes).
READ_ONLY_TOOLS = ("read_file", "list_dir", "glob", "grep", "get_diagnostics", "ask_user")


#: The navigation tools, offered when the session has a language server to
#: ask (a :class:`~rein.harness.navigation_ports.Navigator`).
NAVIGATION_TOOLS = (*NAVIGATION_READ_TOOLS, "rename_symbol")


#: Names a toolkit's tool cannot take: the standard tools, ``task`` and plan
#: mode's output tools.
_RESERVED = frozenset({*DISABLEABLE_TOOL_NAMES, *NAVIGATION_TOOLS, "complete_step", "submit_plan"})


def navigation_tools(*, read_only: bool = False) -> list[Tool[Any]]:
    """The navigation tools, in the order the system prompt lists them
    (``rename_symbol`` only outside ``read_only``)."""
    tools: list[Tool[Any]] = [
        FindDefinitionTool(),
        FindReferencesTool(),
        HoverTool(),
        SymbolsTool(),
    ]
    if not read_only:
        tools.append(RenameSymbolTool())
    return tools


def default_tools(settings: ToolSettings | None = None, *, read_only: bool = False) -> ToolRegistry:
    """The standard tools, in the order the system prompt lists them, less
    the disabled ones, then the configured toolkits' tools. ``read_only``
    keeps only :data:`READ_ONLY_TOOLS` and the toolkits' ``read`` tools.
    A toolkit that does not load, or whose tool's name is taken, is a
    :class:`~rein.harness.errors.ConfigError` naming ``tools.toolkits``."""
    settings = settings or DEFAULT_TOOL_SETTINGS
    tools: list[Tool[Any]] = [
        ReadFileTool(),
        ListDirTool(),
        GlobTool(),
        GrepTool(settings.grep_backend),
        EditFileTool(),
        WriteFileTool(),
        DeleteFileTool(),
        MoveFileTool(),
        RunCommandTool(sandboxed=settings.approval.command == "sandboxed"),
        GetDiagnosticsTool(),
        AskUserTool(),
    ]
    disabled = settings.disabled_tools
    registry = ToolRegistry(
        t for t in tools if t.name not in disabled and (not read_only or t.name in READ_ONLY_TOOLS)
    )
    for kit in configured_toolkits(settings.toolkits):
        for tool in kit.tools():
            if read_only and tool.tool_class != "read":
                continue
            if tool.name in registry or tool.name in _RESERVED:
                raise ConfigError(
                    f"{TOOLKITS_KEY}: toolkit {kit.name!r} has a tool named {tool.name!r}, "
                    "which another tool already has",
                    TOOLKITS_KEY,
                )
            registry.register(tool)
    return registry


def tool_sections(tools: ToolRegistry | Iterable[Tool[Any]] | None = None) -> dict[str, str]:
    """Each tool's paragraph for the system prompt, by tool name (tools
    without one are left out). Defaults to :func:`default_tools`."""
    if tools is None:
        tools = default_tools()
    items: Iterable[Tool[Any] | None]
    if isinstance(tools, ToolRegistry):
        items = (tools.get(name) for name in tools.names())
    else:
        items = tools
    sections: dict[str, str] = {}
    for tool in items:
        if tool is not None and tool.prompt_section:
            sections[tool.name] = tool.prompt_section
    return sections
