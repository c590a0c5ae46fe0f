"""The default tool set and the prompt sections of tools.

``default_tools(settings)`` builds the registry a session uses; the settings
(the same ``ToolEnvironment.settings`` dict the tools read at run time) may
hold:

* ``disabled_tools``: names of tools to leave out;
* ``grep_backend``: "auto" (ripgrep when on PATH), "rg" or "python".

Settings the tools read at run time: ``deny_globs``, ``approval`` (see
:mod:`rein.tools.sandbox` and :mod:`rein.tools.approval`) and
``max_tool_result_chars`` (read_file's page size).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, get_args

from rein.harness.tools import Tool, ToolRegistry
from rein.tools.ask_user import AskUserTool
from rein.tools.command import RunCommandTool
from rein.tools.diagnostics import GetDiagnosticsTool
from rein.tools.edit import EditFileTool, WriteFileTool
from rein.tools.grep import GrepBackend, GrepTool
from rein.tools.listing import GlobTool, ListDirTool
from rein.tools.read import ReadFileTool

__all__ = ["READ_ONLY_TOOLS", "default_tools", "tool_sections"]

log = logging.getLogger(__name__)

#: The tools that change nothing (plan and explain modes).
READ_ONLY_TOOLS = ("read_file", "list_dir", "glob", "grep", "get_diagnostics", "ask_user")


def _grep_backend(settings: Mapping[str, Any]) -> GrepBackend:
    value = settings.get("grep_backend", "auto")
    if value in get_args(GrepBackend):
        backend: GrepBackend = value
        return backend
    log.warning("grep_backend is %r; expected auto, rg or python. Using auto.", value)
    return "auto"


def default_tools(
    settings: Mapping[str, Any] | None = None, *, read_only: bool = False
) -> ToolRegistry:
    """The standard tools, in the order the system prompt lists them.
    ``read_only`` keeps only :data:`READ_ONLY_TOOLS`."""
    settings = settings or {}
    tools: list[Tool[Any]] = [
        ReadFileTool(),
        ListDirTool(),
        GlobTool(),
        GrepTool(_grep_backend(settings)),
        EditFileTool(),
        WriteFileTool(),
        RunCommandTool(),
        GetDiagnosticsTool(),
        AskUserTool(),
    ]
    disabled = settings.get("disabled_tools") or ()
    if not isinstance(disabled, list | tuple | set | frozenset):
        disabled = ()
    return ToolRegistry(
        t for t in tools if t.name not in disabled and (not read_only or t.name in READ_ONLY_TOOLS)
    )


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
        section = getattr(tool, "prompt_section", "") if tool is not None else ""
        if tool is not None and isinstance(section, str) and section:
            sections[tool.name] = section
    return sections
