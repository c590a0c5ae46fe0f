"""EditorWorkspace.before_change: the editor host offers the hook the
analyzer gate captures per-file baselines with (as the headless
TrackedWorkspace does): awaited with the paths before the edit is applied,
on the text before it; a raising callback does not stop the change."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from rein.harness.generations import MutationLog
from rein.lsp.channel import ClientChannel
from rein.lsp.editor import EditorWorkspace


class ApplyingChannel(ClientChannel):
    """Applies whole-file TextDocumentEdits, deletes and renames to disk."""

    def __init__(self, root: Path, log: list[str]) -> None:
        self._unsupported = {"rein/saveDocuments"}
        self.root = root
        self.log = log
        #: Set to refuse every edit, as an editor whose document moved on.
        self.refuse = False

    async def apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> Any:
        return self._apply(params)

    def _apply(self, params: lsp.ApplyWorkspaceEditParams) -> Any:
        if self.refuse:
            return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="busy")
        for change in params.edit.document_changes or []:
            if isinstance(change, lsp.TextDocumentEdit):
                path = Path(change.text_document.uri.removeprefix("file://"))
                path.write_text(change.edits[0].new_text)
                self.log.append(f"applied {path.name}")
            elif isinstance(change, lsp.RenameFile):
                Path(change.old_uri.removeprefix("file://")).rename(
                    change.new_uri.removeprefix("file://")
                )
                self.log.append("renamed")
            elif isinstance(change, lsp.DeleteFile):
                Path(change.uri.removeprefix("file://")).unlink()
                self.log.append("deleted")
        return lsp.ApplyWorkspaceEditResult(applied=True)

    def document(self, uri: str) -> Any:
        return None


def test_callbacks_see_the_file_before_each_change(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("old\n")
    log: list[str] = []
    workspace = EditorWorkspace(ApplyingChannel(tmp_path, log), tmp_path, MutationLog())

    async def capture(paths: tuple[str, ...]) -> None:
        texts = [(tmp_path / p).read_text() if (tmp_path / p).exists() else None for p in paths]
        log.append(f"before {paths} {texts}")

    async def main() -> None:
        remove = workspace.before_change(capture)
        await workspace.write_text("app.py", "new\n")
        await workspace.rename("app.py", "main.py")
        await workspace.delete("main.py")
        remove()
        (tmp_path / "other.py").write_text("x\n")
        await workspace.write_text("other.py", "y\n")

    asyncio.run(main())
    assert log == [
        "before ('app.py',) ['old\\n']",
        "applied app.py",
        "before ('app.py', 'main.py') ['new\\n', None]",
        "renamed",
        "before ('main.py',) ['new\\n']",
        "deleted",
        "applied other.py",
    ]


def test_a_raising_callback_does_not_stop_the_change(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("old\n")
    log: list[str] = []
    workspace = EditorWorkspace(ApplyingChannel(tmp_path, log), tmp_path, MutationLog())

    async def broken(paths: tuple[str, ...]) -> None:
        raise RuntimeError("baseline capture failed")

    async def main() -> int:
        workspace.before_change(broken)
        mutation = await workspace.write_text("app.py", "new\n")
        return mutation.generation

    assert asyncio.run(main()) == 1
    assert (tmp_path / "app.py").read_text() == "new\n"


def test_after_change_gets_each_applied_change_with_the_text_written(tmp_path: Path) -> None:
    from rein.harness.generations import AppliedChange

    (tmp_path / "app.py").write_text("old\n")
    log: list[str] = []
    workspace = EditorWorkspace(ApplyingChannel(tmp_path, log), tmp_path, MutationLog())
    seen: list[AppliedChange] = []

    async def after(change: AppliedChange) -> None:
        seen.append(change)

    async def broken(change: AppliedChange) -> None:
        raise RuntimeError("a checkpoint store that fails")

    async def main() -> None:
        workspace.after_change(broken)
        remove = workspace.after_change(after)
        await workspace.write_text("app.py", "new\n")
        await workspace.rename("app.py", "main.py")
        await workspace.delete("main.py")
        remove()
        await workspace.write_text("other.py", "y\n")

    asyncio.run(main())
    assert [(c.kind, c.mutation.paths, c.mutation.generation, c.text) for c in seen] == [
        ("write", ("app.py",), 1, "new\n"),
        ("rename", ("app.py", "main.py"), 2, None),
        ("delete", ("main.py",), 3, None),
    ]
    assert (tmp_path / "other.py").read_text() == "y\n"  # the raising callback stopped nothing


def test_a_refused_edit_gets_no_after_change(tmp_path: Path) -> None:
    from rein.harness.errors import ToolError
    from rein.harness.generations import AppliedChange

    channel = ApplyingChannel(tmp_path, [])
    channel.refuse = True
    workspace = EditorWorkspace(channel, tmp_path, MutationLog())
    seen: list[AppliedChange] = []

    async def after(change: AppliedChange) -> None:
        seen.append(change)

    async def main() -> None:
        workspace.after_change(after)
        await workspace.write_text("app.py", "new\n")

    with pytest.raises(ToolError, match="refused"):
        asyncio.run(main())
    assert seen == []
