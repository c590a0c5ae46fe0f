"""Helpers every tool shares: the ports from the context, path resolution,
and what the model read (``ctx.record``'s read stamps). Changes need no
helper: the workspace layer counts them in the run's record."""

from __future__ import annotations

from rein.harness.errors import ToolError
from rein.harness.ports import FileContent, Workspace
from rein.harness.tools import ToolContext
from rein.tools.sandbox import Sandbox
from rein.tools.settings import settings_of

__all__ = [
    "record_read",
    "require_workspace",
    "sandbox_of",
]


def require_workspace(ctx: ToolContext) -> Workspace:
    workspace = ctx.env.workspace
    if workspace is None:
        raise ToolError(f"{ctx.name} needs a workspace, and this session has none.")
    return workspace


def sandbox_of(ctx: ToolContext) -> tuple[Workspace, Sandbox]:
    workspace = require_workspace(ctx)
    return workspace, Sandbox.for_root(workspace.root, settings_of(ctx))


def record_read(ctx: ToolContext, content: FileContent) -> None:
    """The model saw ``content``: stamp its path in the run's record."""
    ctx.record.note_read(content)
