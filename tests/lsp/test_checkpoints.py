"""rein/checkpoints, rein/restore and rein/checkpointContent with the real
`rein serve` and the test client applying its edits as the editor does."""

from __future__ import annotations

import asyncio
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from rein.store.checkpoints import SqliteCheckpointStore
from tests.checkpoint_scenario import BEFORE, NOTE, THREE_FILES, THREE_TURNS
from tests.checkpoint_scenario import script_call as call
from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server, write_script

#: No analyzer runs here: the analyzer gate would only wait out its bound.
NO_GATE: dict[str, Any] = {"gates": {"analyzer": {"enabled": False}}}

pytestmark = pytest.mark.e2e


def files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    for name, text in BEFORE.items():
        (root / name).write_text(text)
    return root


async def request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(editor.client.protocol.send_request_async(method, params), 60)


async def refused(editor: Editor, method: str, params: dict[str, Any], code: int) -> str:
    with pytest.raises(JsonRpcException) as info:
        await request(editor, method, params)
    assert info.value.code == code, info.value
    return str(info.value)


async def run_three(editor: Editor) -> dict[str, Any]:
    result = await request(editor, "rein/prompt", {"text": "change three files"})
    assert result["status"] == "completed", result
    assert {(c["path"], c["change"]) for c in result["changes"]} == {
        ("mod.py", "modified"),
        ("new.py", "created"),
        ("gone.py", "deleted"),
    }
    return result


async def test_a_run_is_listed_undone_exactly_and_the_undo_undone(ws: Path, tmp_path: Path) -> None:
    before = files(ws)
    write_script(
        tmp_path,
        [
            *THREE_FILES,
            {"expect": {"messages_contain": [NOTE, "new.py (deleted again)"]}, "text": "noted"},
        ],
    )
    async with running_server(ws, tmp_path, settings=NO_GATE) as editor:
        run = await run_three(editor)
        sid, run_id = run["sessionId"], run["runId"]
        after = files(ws)

        listing = await request(editor, "rein/checkpoints", {"sessionId": sid})
        (entry,) = listing["runs"]
        assert entry["runId"] == run_id and entry["kind"] == "run" and listing["bytes"] > 0
        assert {f["path"]: f["change"] for f in entry["files"]} == {
            "mod.py": "modified",
            "new.py": "created",
            "gone.py": "deleted",
        }
        assert [t["turn"] for t in entry["turns"]] == [1, 2]
        content = await request(
            editor,
            "rein/checkpointContent",
            {"sessionId": sid, "runId": run_id, "path": "mod.py", "side": "before"},
        )
        assert content == {"path": "mod.py", "state": "text", "text": "a = 1\nb = 2\n"}

        restored = await request(editor, "rein/restore", {"sessionId": sid, "runId": run_id})
        assert files(ws) == before
        assert {(f["path"], f["change"]) for f in restored["restored"]} == {
            ("mod.py", "modified"),
            ("new.py", "deleted"),
            ("gone.py", "created"),
        }
        assert restored["conflicts"] == [] and restored["skipped"] == []
        event = await editor.wait_event(lambda e: e["event"]["type"] == "files_restored")
        assert event["sessionId"] == sid and event["event"]["restore_id"] == restored["restoreId"]

        # The next model turn is told (the script checks the request).
        noted = await request(editor, "rein/prompt", {"text": "go on", "sessionId": sid})
        assert noted["status"] == "completed", noted

        undo = await request(
            editor, "rein/restore", {"sessionId": sid, "runId": restored["restoreId"]}
        )
        assert files(ws) == after
        assert {(f["path"], f["change"]) for f in undo["restored"]} == {
            ("mod.py", "modified"),
            ("new.py", "created"),
            ("gone.py", "deleted"),
        }
        kinds = [
            r["kind"]
            for r in (await request(editor, "rein/checkpoints", {"sessionId": sid}))["runs"]
        ]
        assert kinds == ["run", "restore", "restore"]


async def test_a_restore_to_a_turn_undoes_only_the_later_turns(ws: Path, tmp_path: Path) -> None:
    write_script(tmp_path, THREE_TURNS)
    async with running_server(ws, tmp_path, settings=NO_GATE) as editor:
        run = await request(editor, "rein/prompt", {"text": "three turns"})
        result = await request(
            editor,
            "rein/restore",
            {"sessionId": run["sessionId"], "runId": run["runId"], "turn": 2},
        )
        assert sorted(f["path"] for f in result["restored"]) == ["mod.py", "new.py"]
        assert (ws / "mod.py").read_text() == "a = 2\nb = 2\n"
        assert not (ws / "new.py").exists()


async def test_a_file_the_person_typed_in_is_kept_and_reported_with_a_diff(
    ws: Path, tmp_path: Path
) -> None:
    write_script(tmp_path, THREE_FILES)
    async with running_server(ws, tmp_path, settings=NO_GATE) as editor:
        editor.open("mod.py")
        run = await run_three(editor)
        assert editor.docs["mod.py"][1] == "a = 10\nb = 2\n"
        editor.type("mod.py", "a = 10\nb = 2\nmine = 3\n")
        # rein/checkpoints answers after the didChange was handled (in order).
        await request(editor, "rein/checkpoints", {"sessionId": run["sessionId"]})
        result = await request(
            editor, "rein/restore", {"sessionId": run["sessionId"], "runId": run["runId"]}
        )
        (conflict,) = result["conflicts"]
        assert conflict["path"] == "mod.py"
        assert conflict["checkpointText"] == "a = 10\nb = 2\n"
        assert conflict["currentText"] == "a = 10\nb = 2\nmine = 3\n"
        assert "+mine = 3" in conflict["diff"]
        assert editor.docs["mod.py"][1] == "a = 10\nb = 2\nmine = 3\n"
        assert sorted(f["path"] for f in result["restored"]) == ["gone.py", "new.py"]
        assert (ws / "gone.py").read_text() == "old\n" and not (ws / "new.py").exists()


async def test_bad_requests_are_refused_and_change_nothing(ws: Path, tmp_path: Path) -> None:
    (ws / "data.bin").write_bytes(b"\xff\xfe\x00binary")
    (ws / "big.txt").write_text("B" * 3000)
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    call("write_file", path="data.bin", content="now text\n"),
                    call("write_file", path="big.txt", content="small\n"),
                    call("edit_file", path="mod.py", old_string="a = 1", new_string="a = 5"),
                ]
            },
            {"text": "done"},
        ],
    )
    async with running_server(
        ws, tmp_path, settings=NO_GATE | {"checkpoints": {"maxFileKb": 1}}
    ) as editor:
        run = await request(editor, "rein/prompt", {"text": "overwrite"})
        sid, run_id = run["sessionId"], run["runId"]
        after = files(ws)

        message = await refused(
            editor, "rein/restore", {"sessionId": "ses_nope", "runId": run_id}, -32602
        )
        assert "rein/restore: invalid params: sessionId: no session 'ses_nope'" in message
        message = await refused(
            editor, "rein/restore", {"sessionId": sid, "runId": run_id, "turn": 0}, -32602
        )
        assert "turn" in message
        cases = [
            ({"runId": "run_nope"}, "no checkpoint of run 'run_nope'"),
            ({"runId": run_id, "paths": ["../outside.py"]}, "outside the workspace"),
            ({"runId": run_id, "paths": [str(tmp_path / "elsewhere.py")]}, "outside the workspace"),
            ({"runId": run_id, "paths": ["data.bin"]}, "data.bin cannot be restored: binary"),
            ({"runId": run_id, "paths": ["big.txt"]}, "big.txt cannot be restored: too large"),
            ({"runId": run_id, "turn": 5}, "changed no files in turn 5"),
        ]
        for params, expected in cases:
            message = await refused(editor, "rein/restore", {"sessionId": sid, **params}, -32803)
            assert expected in message, message
            assert files(ws) == after
        await refused(
            editor,
            "rein/checkpointContent",
            {"sessionId": sid, "runId": "run_nope", "path": "mod.py", "side": "after"},
            -32803,
        )
        await refused(editor, "rein/checkpoints", {"sessionId": "ses_nope"}, -32602)
        message = await refused(
            editor,
            "rein/checkpointContent",
            {"sessionId": sid, "runId": run_id, "path": "mod.py", "side": "middle"},
            -32602,
        )
        assert "side" in message
        message = await refused(
            editor, "rein/restore", {"sessionId": sid, "runId": run_id, "paths": []}, -32602
        )
        assert "paths" in message
        assert files(ws) == after

        # The whole run: the unstored files are skipped, mod.py is restored.
        listing = await request(editor, "rein/checkpoints", {"sessionId": sid})
        reasons = {f["path"]: f.get("reason") for f in listing["runs"][0]["files"]}
        assert reasons["data.bin"] == "binary" and "too large" in reasons["big.txt"]

        store = SqliteCheckpointStore.open(tmp_path / "storage")
        try:
            dropped = await store.prune(str(ws), max_bytes=0, max_age_s=0, now=time.time())
        finally:
            store.close()
        assert [r.run_id for r in dropped] == [run_id]
        message = await refused(editor, "rein/restore", {"sessionId": sid, "runId": run_id}, -32803)
        assert "was dropped" in message
        assert files(ws) == after


async def test_a_restore_while_the_run_is_active_is_refused(ws: Path, tmp_path: Path) -> None:
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    call("edit_file", path="mod.py", old_string="a = 1", new_string="a = 7")
                ]
            },
            {"tool_calls": [call("ask_user", question="and now?")]},
            {"text": "done"},
        ],
    )
    async with running_server(ws, tmp_path, settings=NO_GATE) as editor:
        editor.silent.add("rein/askUser")
        task = asyncio.ensure_future(request(editor, "rein/prompt", {"text": "ask me"}))
        await asyncio.wait_for(editor.request_held.wait(), 30)
        started = await editor.wait_event(lambda e: e["event"]["type"] == "run_start")
        sid, run_id = started["sessionId"], started["runId"]
        after = files(ws)
        message = await refused(editor, "rein/restore", {"sessionId": sid, "runId": run_id}, -32803)
        assert "abort or wait for the run" in message
        assert files(ws) == after
        await request(editor, "rein/abort", {"sessionId": sid})
        await asyncio.wait_for(task, 30)


async def test_a_rename_and_a_delete_by_the_tools_are_undone(ws: Path, tmp_path: Path) -> None:
    (ws / "gone.py").chmod(0o755)  # the editor's undo gives the mode back too
    (ws / "mod.py").chmod(0o750)
    before = files(ws)
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    call("move_file", path="mod.py", new_path="moved.py"),
                    call("delete_file", path="gone.py"),
                ]
            },
            {"text": "done"},
        ],
    )
    async with running_server(ws, tmp_path, settings=NO_GATE) as editor:
        run = await request(editor, "rein/prompt", {"text": "move and delete"})
        sid = run["sessionId"]
        (entry,) = (await request(editor, "rein/checkpoints", {"sessionId": sid}))["runs"]
        by_path = {f["path"]: f for f in entry["files"]}
        assert by_path["moved.py"]["change"] == "renamed"
        assert by_path["moved.py"]["renamedFrom"] == "mod.py"
        assert by_path["mod.py"]["change"] == "deleted"
        assert by_path["gone.py"]["change"] == "deleted"
        result = await request(editor, "rein/restore", {"sessionId": sid, "runId": run["runId"]})
        assert files(ws) == before
        assert {(f["path"], f["change"], f.get("detail")) for f in result["restored"]} == {
            ("moved.py", "deleted", None),
            ("mod.py", "created", "mode 750"),
            ("gone.py", "created", "mode 755"),
        }
        assert stat.S_IMODE((ws / "gone.py").stat().st_mode) == 0o755
        assert stat.S_IMODE((ws / "mod.py").stat().st_mode) == 0o750


async def test_typing_between_the_check_and_the_edit_makes_a_conflict_not_a_loss(
    ws: Path, tmp_path: Path
) -> None:
    write_script(tmp_path, THREE_FILES)
    async with running_server(ws, tmp_path, settings=NO_GATE) as editor:
        editor.open("mod.py")
        run = await run_three(editor)
        # The person types just before the restore's first edit reaches the editor:
        # mod.py's versioned edit no longer matches its version and is refused
        # (by the editor, or by the server once the didChange arrived first).
        editor.type_before_next_apply = ("mod.py", "typed meanwhile\n")
        result = await request(
            editor, "rein/restore", {"sessionId": run["sessionId"], "runId": run["runId"]}
        )
        (conflict,) = result["conflicts"]
        assert conflict["path"] == "mod.py" and "refused" in conflict["reason"]
        assert conflict["currentText"] == "typed meanwhile\n"
        assert editor.docs["mod.py"][1] == "typed meanwhile\n"
        assert sorted(f["path"] for f in result["restored"]) == ["gone.py", "new.py"]
