"""The real ``rein serve`` with an editor that applies the edits: a run's
checkpoint holds what the editor showed before each change (an unsaved
buffer included) and what the edit made, for created, modified, deleted
and renamed files; the ``rein/prompt`` result lists the changes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from rein.harness.checkpoints import CheckpointChange, FileChange, FileVersion
from rein.store.checkpoints import SqliteCheckpointStore
from tests.fakes import Editor
from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e


async def request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(editor.client.protocol.send_request_async(method, params), 60)


def text(value: str) -> FileVersion:
    return FileVersion.of_text(value)


async def test_a_run_through_the_editor_records_each_file_before_and_after(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "draft.py").write_text("d = 1\n")
    original = (workspace / "app.py").read_text()
    notes = (workspace / "notes.txt").read_text()
    typed = "# typed, not saved\n" + original
    edited = typed.replace("hello {name}", "hi {name}")
    # One call a turn: the order of the changes is the script's.
    calls = [
        (
            "edit_file",
            {"path": "app.py", "old_string": "hello {name}", "new_string": "hi {name}"},
        ),
        ("write_file", {"path": "new.py", "content": "n = 1\n"}),
        ("delete_file", {"path": "notes.txt"}),
        ("move_file", {"path": "draft.py", "new_path": "pkg/final.py"}),
    ]
    write_script(
        tmp_path,
        [{"tool_calls": [{"name": n, "arguments": a}]} for n, a in calls] + [{"text": "done"}],
    )
    # No analyzer gate: the checkpoint is the subject here.
    settings = {"gates": {"analyzer": {"enabled": False}}}
    async with running_server(workspace, tmp_path, settings=settings) as editor:
        editor.open("app.py")
        editor.type("app.py", typed)
        result = await request(editor, "rein/prompt", {"text": "tidy up\nsecond line"})
        assert result["status"] == "completed", result
        assert result["changes"] == [
            {"path": "app.py", "change": "modified"},
            {"path": "new.py", "change": "created"},
            {"path": "notes.txt", "change": "deleted"},
            {"path": "draft.py", "change": "deleted"},
            {"path": "pkg/final.py", "change": "renamed", "renamedFrom": "draft.py"},
        ]
        assert editor.docs["app.py"][1] == edited
        # The server has the file open meanwhile: WAL lets a reader in.
        store = SqliteCheckpointStore.open(tmp_path / "storage")
        try:
            [run] = await store.runs(result["sessionId"])
            changes: list[CheckpointChange] = await store.changes(result["sessionId"])
            texts = {
                v: await store.get_text(text(v).blob or "")
                for v in (typed, edited, "n = 1\n", notes, "d = 1\n")
            }
        finally:
            store.close()
    assert (run.run_id, run.title, run.workspace) == (result["runId"], "tidy up", str(workspace))
    assert [(c.turn, c.origin, list(c.files)) for c in changes] == [
        # What the editor showed (the person's unsaved buffer), not the disk.
        (1, "tool", [FileChange("app.py", text(typed), text(edited))]),
        (2, "tool", [FileChange("new.py", FileVersion.absent(), text("n = 1\n"))]),
        (3, "tool", [FileChange("notes.txt", text(notes), FileVersion.absent())]),
        (
            4,
            "tool",
            [
                FileChange("draft.py", text("d = 1\n"), FileVersion.absent()),
                FileChange("pkg/final.py", FileVersion.absent(), text("d = 1\n"), "draft.py"),
            ],
        ),
    ]
    assert texts == {k: k for k in texts}
