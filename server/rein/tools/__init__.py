"""The tools: read/list/glob/grep/edit/write/run_command/diagnostics/ask_user,
the path sandbox, approvals and the session's bootstrap context.

Tools reach the workspace only through the ports in ``ctx.env`` (Workspace,
DiagnosticsSource, Approver, UserChannel), so the same tools work in the
editor and headless. Listing, globbing and grep read the disk under the
workspace root (the Workspace port has no listing).
"""

from rein.tools.approval import check_approval
from rein.tools.ask_user import AskUserTool
from rein.tools.bootstrap import (
    bootstrap_message,
    project_instructions,
    workspace_summary,
)
from rein.tools.command import RunCommandTool
from rein.tools.diagnostics import GetDiagnosticsTool
from rein.tools.edit import EditFileTool, WriteFileTool
from rein.tools.grep import GrepTool
from rein.tools.listing import GlobTool, ListDirTool
from rein.tools.read import ReadFileTool
from rein.tools.registry import READ_ONLY_TOOLS, default_tools, tool_sections
from rein.tools.sandbox import Sandbox
from rein.tools.settings import (
    DEFAULT_DENY_GLOBS,
    ApprovalSettings,
    GrepBackend,
    Policy,
    ToolOptions,
    ToolSettings,
    WritePolicy,
)

__all__ = [
    "DEFAULT_DENY_GLOBS",
    "READ_ONLY_TOOLS",
    "ApprovalSettings",
    "AskUserTool",
    "EditFileTool",
    "GetDiagnosticsTool",
    "GlobTool",
    "GrepBackend",
    "GrepTool",
    "ListDirTool",
    "Policy",
    "ReadFileTool",
    "RunCommandTool",
    "Sandbox",
    "ToolOptions",
    "ToolSettings",
    "WriteFileTool",
    "WritePolicy",
    "bootstrap_message",
    "check_approval",
    "default_tools",
    "project_instructions",
    "tool_sections",
    "workspace_summary",
]
