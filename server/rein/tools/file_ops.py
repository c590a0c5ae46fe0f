"""``delete_file`` and ``move_file``: a file removed or renamed through the
Workspace port (in the editor a DeleteFile/RenameFile edit, headless on
disk), so the change is a mutation generation like an edit and its
checkpoint keeps the file's content (a ``rm`` or ``mv`` through
``run_command`` is seen only afterwards, without it)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from rein.harness.errors import ToolError
from rein.harness.ports import Workspace
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.tools._context import sandbox_of
from rein.tools.approval import check_approval
from rein.tools.secret_walk import secret_in_folder

__all__ = ["DeleteFileArgs", "DeleteFileTool", "MoveFileArgs", "MoveFileTool"]


def _file(ctx: ToolContext, path: str) -> tuple[Workspace, str]:
    workspace, sandbox = sandbox_of(ctx)
    rel = sandbox.resolve(path)
    if rel == ".":
        raise ToolError("The workspace root is a directory; give the path of a file.")
    sandbox.check_writable(rel)
    return workspace, rel


def _asked(held: str | None, detail: str) -> str:
    """A move's or delete's prompt, saying first which secret file a folder
    holds (:func:`~rein.tools.secret_walk.secret_in_folder`)."""
    return detail if held is None else f"Asked every time because {held}.\n\n{detail}"


class DeleteFileArgs(BaseModel):
    path: str = Field(description="File to delete, relative to the workspace root.")


class DeleteFileTool(Tool[DeleteFileArgs]):
    name = "delete_file"
    description = (
        "Delete a file (not a directory). Rein keeps its content, so the person can undo it."
    )
    args_model = DeleteFileArgs
    tool_class = "write"
    prompt_section: str = (
        "`delete_file` deletes a file; use it rather than a shell rm, so the deletion can "
        "be undone."
    )

    async def execute(self, args: DeleteFileArgs, ctx: ToolContext) -> ToolResult:
        workspace, rel = _file(ctx, args.path)
        if not await workspace.exists(rel):
            raise ToolError(f"File not found: {rel}")
        held = secret_in_folder(sandbox_of(ctx)[1], rel)
        denial = await check_approval(
            ctx,
            "write",
            title=f"Delete {rel}",
            detail=_asked(held, f"Delete {rel}"),
            action=f"delete {rel}",
            subject=("write", rel),
            force_ask=held is not None,
            why_ask=held or "",
            exact_only=held is not None,
        )
        if denial is not None:
            return denial
        mutation = await workspace.delete(rel)
        return ToolResult(
            f"Deleted {rel} (generation {mutation.generation}).",
            details={"path": rel, "generation": mutation.generation},
        )


class MoveFileArgs(BaseModel):
    path: str = Field(description="File to move, relative to the workspace root.")
    new_path: str = Field(description="Where it goes, relative to the workspace root.")


class MoveFileTool(Tool[MoveFileArgs]):
    name = "move_file"
    description = (
        "Rename or move a file. Missing parent directories are created; an existing file "
        "at new_path is not overwritten."
    )
    args_model = MoveFileArgs
    tool_class = "write"
    prompt_section: str = (
        "`move_file` renames or moves a file; use it rather than a shell mv, so the move "
        "can be undone."
    )

    async def execute(self, args: MoveFileArgs, ctx: ToolContext) -> ToolResult:
        workspace, old = _file(ctx, args.path)
        _, new = _file(ctx, args.new_path)
        if old == new:
            raise ToolError(f"{old} and new_path are the same file: there is nothing to move.")
        if not await workspace.exists(old):
            raise ToolError(f"File not found: {old}")
        if await workspace.exists(new):
            raise ToolError(
                f"Cannot move {old} to {new}: {new} already exists. Delete it first, or "
                "choose another path."
            )
        held = secret_in_folder(sandbox_of(ctx)[1], old, new)
        denial = await check_approval(
            ctx,
            "write",
            title=f"Move {old} to {new}",
            detail=_asked(held, f"Move {old} to {new}"),
            action=f"move {old} to {new}",
            about=old,
            writes=(new,),
            force_ask=held is not None,
            why_ask=held or "",
            exact_only=held is not None,
        )
        if denial is not None:
            return denial
        mutation = await workspace.rename(old, new)
        return ToolResult(
            f"Moved {old} to {new} (generation {mutation.generation}).",
            details={"path": old, "newPath": new, "generation": mutation.generation},
        )
