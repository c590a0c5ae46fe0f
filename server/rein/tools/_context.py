"""Helpers every tool shares: the ports from the context, path resolution,
and the per-run records (read stamps, mutations) in ``ctx.run_state``."""

from __future__ import annotations

from dataclasses import dataclass

from rein.harness.errors import ToolError
from rein.harness.ports import FileContent, Mutation, Workspace
from rein.harness.tools import ToolContext
from rein.tools.sandbox import Sandbox
from rein.tools.settings import settings_of

__all__ = [
    "MUTATIONS_KEY",
    "READ_STAMPS_KEY",
    "ReadStamp",
    "record_mutation",
    "record_read",
    "require_workspace",
    "sandbox_of",
]

#: ``ctx.run_state`` keys.
READ_STAMPS_KEY = "read_stamps"
MUTATIONS_KEY = "mutations"


@dataclass(frozen=True, slots=True)
class ReadStamp:
    """What a path looked like when the model last saw its text."""

    generation: int
    #: The editor's document version (None for text from the disk).
    version: int | None = None


def require_workspace(ctx: ToolContext) -> Workspace:
    workspace = ctx.env.workspace
    if workspace is None:
        raise ToolError(f"{ctx.name} needs a workspace, and this session has none.")
    return workspace


def sandbox_of(ctx: ToolContext) -> tuple[Workspace, Sandbox]:
    workspace = require_workspace(ctx)
    return workspace, Sandbox.for_root(workspace.root, settings_of(ctx))


def record_read(ctx: ToolContext, content: FileContent) -> None:
    stamps: dict[str, ReadStamp] = ctx.run_state.setdefault(READ_STAMPS_KEY, {})
    stamps[content.path] = ReadStamp(content.generation, content.version)


def record_mutation(ctx: ToolContext, mutation: Mutation) -> None:
    mutations: list[Mutation] = ctx.run_state.setdefault(MUTATIONS_KEY, [])
    mutations.append(mutation)
    # The model knows what it wrote: its view of these paths is current.
    stamps: dict[str, ReadStamp] = ctx.run_state.setdefault(READ_STAMPS_KEY, {})
    for path in mutation.paths:
        stamps[path] = ReadStamp(mutation.generation, None)
