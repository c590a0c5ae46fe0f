"""The real ``rein serve`` with an editor that applies the edits: a run's
checkpoint holds what the editor showed before each change (an unsaved
buffer included) and what the edit made, for created, modified, deleted
and renamed files; the ``rein/prompt`` result lists the changes."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from rein.checkpoints.model import CheckpointChange, FileChange, FileVersion
from rein.store.checkpoints import SqliteCheckpointStore
from tests.fakes.editor import Editor
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
        # The server's disk watcher sees what a command changes.
        ("run_command", {"command": "sed -i 's/n = 1/n = 2/' new.py"}),
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
            {"path": "new.py", "change": "created"},  # then changed by the command
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
                for v in (typed, edited, "n = 1\n", "n = 2\n", notes, "d = 1\n")
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
        # The session stored new.py's content itself: that is the command's before.
        (5, "command", [FileChange("new.py", text("n = 1\n"), text("n = 2\n"))]),
    ]
    assert texts == {k: k for k in texts}


def _noise(seed: int, size: int) -> str:
    """``size`` random characters of 28 (random bytes mapped onto them: a
    random choice per character was most of the test's own time)."""
    alphabet = b"abcdefghijklmnopqrstuvwxyz \n"
    table = bytes(alphabet[b % len(alphabet)] for b in range(256))
    return random.Random(seed).randbytes(size).translate(table).decode()


async def test_the_limits_drop_the_oldest_run_and_the_editor_is_told(
    workspace: Path, tmp_path: Path
) -> None:
    """Two prompts each edit a large file (~0.58 MB compressed before and
    after); under checkpoints.maxMb 1 the second prompt's pruning drops the
    first run's content, with a checkpoint_dropped event."""
    for i, name in enumerate(("a.txt", "b.txt")):
        (workspace / name).write_text(f"line {i} to change\n" + _noise(i, 450_000))
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": name,
                            "old_string": f"line {i} to change",
                            "new_string": "changed",
                        },
                    }
                ]
            }
            if step == 0
            else {"text": f"edited {name}"}
            for i, name in enumerate(("a.txt", "b.txt"))
            for step in (0, 1)
        ],
    )
    settings = {"gates": {"analyzer": {"enabled": False}}, "checkpoints": {"maxMb": 1}}
    async with running_server(workspace, tmp_path, settings=settings) as editor:
        first = await request(editor, "rein/prompt", {"text": "edit a"})
        assert first["status"] == "completed", first
        second = await request(
            editor, "rein/prompt", {"text": "edit b", "sessionId": first["sessionId"]}
        )
        assert second["status"] == "completed", second
        dropped = await editor.wait_event(lambda e: e["event"]["type"] == "checkpoint_dropped")
    event = dropped["event"]
    assert (event["session_id"], event["run_id"]) == (first["sessionId"], first["runId"])
    assert event["bytes"] > 400_000
    assert event["reason"] == "over the size limit of 1 MB (checkpoints.maxMb)"
    assert [e["event"]["type"] for e in editor.events].count("checkpoint_dropped") == 1
    store = SqliteCheckpointStore.open(tmp_path / "storage")
    try:
        runs = await store.runs(first["sessionId"])
        assert [(r.run_id, r.pruned_at is not None) for r in runs] == [
            (first["runId"], True),
            (second["runId"], False),
        ]
        assert await store.size(str(workspace)) <= 1024 * 1024
    finally:
        store.close()
