"""Review before keeping (approval.write "review") through the real server
over stdio: the test client plays the editor (it applies the edits, the
person types in it) with a real analyzer (ruff) behind the gates."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e

REVIEW = {"approval": {"write": "review", "command": "ask"}}
#: The analyzer gate's bound is generous: the machine may be busy, and the
#: verdict must be the analyzer's, not "unverified" for want of time.
GATES = {"gates": {"analyzer": {"quietPeriodMs": 100, "maxWaitMs": 30000}}}
#: Without an analyzer the analyzer gate would only wait out its bound.
NO_GATE = {"gates": {"analyzer": {"enabled": False}}}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": path, "old_string": old, "new_string": new},
            }
        ]
    }


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


async def until(editor: Editor, seen: Callable[[], bool], timeout_s: float = 10) -> None:
    """Wait (bounded) until the events the editor received make ``seen`` true."""

    async def wait() -> None:
        while not seen():
            editor.event_arrived.clear()
            await editor.event_arrived.wait()

    try:
        await asyncio.wait_for(wait(), timeout_s)
    except TimeoutError:
        raise AssertionError(f"not seen in {timeout_s} s: {editor.event_types()}") from None


def events_of(editor: Editor, kind: str) -> list[dict[str, Any]]:
    return [e["event"] for e in editor.events if e["event"]["type"] == kind]


async def request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(editor.client.protocol.send_request_async(method, params), 30)


async def test_a_reviewed_run_is_kept_and_undone_per_hunk_and_file(
    workspace: Path, tmp_path: Path
) -> None:
    before = (workspace / "app.py").read_text()
    hunk0 = ('    return f"hello {name}"\n', '    return f"hi {name}"\n')
    hunk1 = ("    return greet(name).upper()\n", '    return greet(name).upper() + "!"\n')
    write_script(
        tmp_path,
        [
            edit("app.py", hunk0[0].strip(), hunk0[1].strip()),
            edit("app.py", hunk1[0].strip(), hunk1[1].strip()),
            write("new.py", 'print("new")\n'),
            {"text": "done"},
            edit("notes.txt", "Nothing", "NOTHING"),
            {"text": "done again"},
        ],
    )
    async with running_server(
        workspace, tmp_path, analyzer=True, settings=REVIEW | GATES
    ) as editor:
        editor.open("app.py")
        result = await request(editor, "rein/prompt", {"text": "make the greetings friendlier"})
        assert result["status"] == "completed", result
        sid, run_id = result["sessionId"], result["runId"]
        # Applied (in the editor's buffer, on disk for the new file) and pending.
        after = before.replace(hunk0[0], hunk0[1]).replace(hunk1[0], hunk1[1])
        assert editor.docs["app.py"][1] == after
        assert (workspace / "new.py").exists()
        assert result["changes"] == [
            {"path": "app.py", "change": "modified", "review": "pending"},
            {"path": "new.py", "change": "created", "review": "pending"},
        ], result
        # The gates ran on the pending edits.
        gates = [g for g in events_of(editor, "gate_result") if g["gate"] == "analyzer"]
        assert gates and gates[-1]["status"] == "passed", gates
        await until(editor, lambda: bool(events_of(editor, "review_pending")))
        assert events_of(editor, "review_pending") == [
            {
                "type": "review_pending",
                "session_id": sid,
                "run_id": run_id,
                "paths": ["app.py", "new.py"],
            }
        ]

        review = await request(editor, "rein/review", {"sessionId": sid})
        [run] = review["runs"]
        assert run["runId"] == run_id
        app, new = run["files"]
        assert (app["path"], app["change"], app["status"]) == ("app.py", "modified", "pending")
        assert [h["header"] for h in app["hunks"]] == ["@@ -5,1 +5,1 @@", "@@ -9,1 +9,1 @@"]
        assert app["hunks"][0]["lines"] == [f"-{hunk0[0].rstrip()}", f"+{hunk0[1].rstrip()}"]
        assert {h["status"] for h in app["hunks"]} == {"pending"}
        assert (new["path"], new["change"], len(new["hunks"])) == ("new.py", "created", 1)

        # Undo hunk 0, keep hunk 1: exactly before-hunk-0 + after-hunk-1.
        undone = await request(
            editor,
            "rein/reviewDecide",
            {"sessionId": sid, "runId": run_id, "decision": "undo", "path": "app.py", "hunk": 0},
        )
        assert undone["decided"] == [{"path": "app.py", "hunk": 0, "status": "undone"}]
        assert undone["restoreId"].startswith("restore-")
        kept = await request(
            editor,
            "rein/reviewDecide",
            {"sessionId": sid, "runId": run_id, "decision": "keep", "path": "app.py", "hunk": 1},
        )
        assert kept["decided"] == [{"path": "app.py", "hunk": 1, "status": "kept"}]
        assert editor.docs["app.py"][1] == before.replace(hunk1[0], hunk1[1])

        # The person types inside hunk 1's region: its undo is refused.
        typed = editor.docs["app.py"][1].replace('+ "!"', '+ "!!"')
        editor.type("app.py", typed)
        refused = await request(
            editor,
            "rein/reviewDecide",
            {"sessionId": sid, "runId": run_id, "decision": "undo", "path": "app.py", "hunk": 1},
        )
        assert refused["decided"] == []
        [why] = refused["refused"]
        assert (why["path"], why["hunk"]) == ("app.py", 1)
        assert why["reason"].startswith("the person changed this region")
        assert editor.docs["app.py"][1] == typed

        # Undo of the created file deletes it.
        gone = await request(
            editor,
            "rein/reviewDecide",
            {"sessionId": sid, "runId": run_id, "decision": "undo", "path": "new.py"},
        )
        assert gone["decided"] == [{"path": "new.py", "status": "undone"}]
        assert not (workspace / "new.py").exists()
        review = await request(editor, "rein/review", {"sessionId": sid, "runId": run_id})
        statuses = {f["path"]: f["status"] for f in review["runs"][0]["files"]}
        assert statuses == {"app.py": "mixed", "new.py": "undone"}
        await until(editor, lambda: len(events_of(editor, "review_decided")) == 3)
        assert [
            (e["path"], e["hunk"], e["decision"], e["status"])
            for e in events_of(editor, "review_decided")
        ] == [
            ("app.py", 0, "undo", "undone"),
            ("app.py", 1, "keep", "kept"),
            ("new.py", None, "undo", "undone"),
        ]

        # A second run in the session; Keep all keeps every file.
        second = await request(editor, "rein/prompt", {"text": "shout the notes", "sessionId": sid})
        assert second["changes"] == [
            {"path": "notes.txt", "change": "modified", "review": "pending"}
        ], second
        keep_all = await request(
            editor,
            "rein/reviewDecide",
            {"sessionId": sid, "runId": second["runId"], "decision": "keep"},
        )
        assert keep_all["decided"] == [{"path": "notes.txt", "status": "kept"}]
        review = await request(editor, "rein/review", {"sessionId": sid})
        assert [r["runId"] for r in review["runs"]] == [run_id, second["runId"]]
        assert review["runs"][1]["files"][0]["status"] == "kept"
        assert (workspace / "notes.txt").read_text().startswith("NOTHING")


async def test_a_keystroke_between_read_and_undo_makes_the_editor_refuse(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [edit("app.py", 'f"hello {name}"', 'f"hi {name}"'), {"text": "done"}],
    )
    async with running_server(workspace, tmp_path, settings=REVIEW | NO_GATE) as editor:
        editor.open("app.py")
        result = await request(editor, "rein/prompt", {"text": "friendlier"})
        sid, run_id = result["sessionId"], result["runId"]
        pending = editor.docs["app.py"][1]
        # The person types (elsewhere) just before the undo's edit arrives.
        elsewhere = pending.replace("def shout", "def shout_loud")
        editor.type_before_next_apply = ("app.py", elsewhere)
        answer = await request(
            editor,
            "rein/reviewDecide",
            {"sessionId": sid, "runId": run_id, "decision": "undo", "path": "app.py"},
        )
        assert answer["decided"] == []
        [why] = answer["refused"]
        assert why["reason"].startswith("the edit was refused")
        assert editor.docs["app.py"][1] == elsewhere
        review = await request(editor, "rein/review", {"sessionId": sid})
        assert review["runs"][0]["files"][0]["status"] == "pending"


#: Bad rein/reviewDecide params ("SID", "RUN": the run's own ids), the
#: error's code and what its message says.
BAD_DECISIONS = [
    pytest.param(
        {"sessionId": "ses_nope", "runId": "r", "decision": "keep"},
        -32602,
        "rein/reviewDecide: invalid params: sessionId: no session 'ses_nope'",
        id="unknown-session",
    ),
    pytest.param(
        {"runId": "r", "decision": "keep"},
        -32602,
        "sessionId: Field required",
        id="no-session",
    ),
    pytest.param(
        {"sessionId": "SID", "runId": "run_nope", "decision": "undo"},
        -32803,
        "no checkpoint run 'run_nope'",
        id="unknown-run",
    ),
    pytest.param(
        {"sessionId": "SID", "runId": "RUN", "decision": "undo", "path": "../etc/passwd"},
        -32803,
        "../etc/passwd is not under review",
        id="path-outside",
    ),
    pytest.param(
        {"sessionId": "SID", "runId": "RUN", "decision": "undo", "path": "app.py", "hunk": 7},
        -32803,
        "there is no hunk 7",
        id="unknown-hunk",
    ),
    pytest.param(
        {"sessionId": "SID", "runId": "RUN", "decision": "maybe"},
        -32602,
        "decision: Input should be 'keep' or 'undo'",
        id="bad-decision",
    ),
]


async def test_bad_review_requests_are_clear_errors_and_change_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    """Every case after one run, its file and review checked after each (a
    refused decision changes nothing): one server rather than one per case."""
    from pygls.exceptions import JsonRpcException

    write_script(tmp_path, [edit("app.py", 'f"hello {name}"', 'f"hi {name}"'), {"text": "done"}])
    async with running_server(workspace, tmp_path, settings=REVIEW | NO_GATE) as editor:
        result = await request(editor, "rein/prompt", {"text": "friendlier"})
        text = (workspace / "app.py").read_text()
        ids = {"SID": result["sessionId"], "RUN": result["runId"]}
        for case in BAD_DECISIONS:
            params, code, message = case.values
            assert isinstance(params, dict)
            sent = {k: ids.get(v, v) if isinstance(v, str) else v for k, v in params.items()}
            with pytest.raises(JsonRpcException) as caught:
                await request(editor, "rein/reviewDecide", sent)
            assert caught.value.code == code, case.id
            assert isinstance(message, str) and message in str(caught.value), case.id
            assert (workspace / "app.py").read_text() == text, case.id
            review = await request(editor, "rein/review", {"sessionId": result["sessionId"]})
            assert review["runs"][0]["files"][0]["status"] == "pending", case.id


async def test_reviews_survive_a_restart_and_are_decided_after_it(
    workspace: Path, tmp_path: Path
) -> None:
    before = (workspace / "app.py").read_text()
    write_script(
        tmp_path,
        [
            edit("app.py", 'f"hello {name}"', 'f"hi {name}"'),
            edit("app.py", "greet(name).upper()", "greet(name).title()"),
            {"text": "done"},
        ],
    )
    async with running_server(workspace, tmp_path, settings=REVIEW | NO_GATE) as editor:
        result = await request(editor, "rein/prompt", {"text": "friendlier"})
        sid, run_id = result["sessionId"], result["runId"]
        await request(
            editor,
            "rein/reviewDecide",
            {"sessionId": sid, "runId": run_id, "decision": "undo", "path": "app.py", "hunk": 0},
        )
    async with running_server(workspace, tmp_path, settings=REVIEW | NO_GATE) as editor:
        review = await request(editor, "rein/review", {"sessionId": sid})
        [file] = review["runs"][0]["files"]
        assert (file["status"], [h["status"] for h in file["hunks"]]) == (
            "pending",
            ["undone", "pending"],
        )
        done = await request(
            editor,
            "rein/reviewDecide",
            {"sessionId": sid, "runId": run_id, "decision": "undo", "path": "app.py", "hunk": 1},
        )
        assert done["decided"] == [{"path": "app.py", "hunk": 1, "status": "undone"}]
        assert (workspace / "app.py").read_text() == before


async def test_without_checkpoints_there_is_nothing_to_review(
    workspace: Path, tmp_path: Path
) -> None:
    from pygls.exceptions import JsonRpcException

    write_script(tmp_path, [edit("app.py", 'f"hello {name}"', 'f"hi {name}"'), {"text": "done"}])
    off = REVIEW | {"checkpoints": {"enabled": False}}
    async with running_server(workspace, tmp_path, settings=off | NO_GATE) as editor:
        result = await request(editor, "rein/prompt", {"text": "friendlier"})
        assert result["changes"] == []
        with pytest.raises(JsonRpcException) as caught:
            await request(editor, "rein/review", {"sessionId": result["sessionId"]})
        assert caught.value.code == -32803
        assert "keeps no checkpoints (checkpoints.enabled is false)" in str(caught.value)


async def test_an_undo_is_told_to_the_model_undoable_and_refused_during_a_run(
    workspace: Path, tmp_path: Path
) -> None:
    from pygls.exceptions import JsonRpcException

    before = (workspace / "app.py").read_text()
    write_script(
        tmp_path,
        [
            edit("app.py", 'f"hello {name}"', 'f"hi {name}"'),
            {"text": "done"},
            # The second prompt's model is slow: the person decides meanwhile.
            {"delay": 60, "text": "never seen"},
        ],
    )
    async with running_server(workspace, tmp_path, settings=REVIEW | NO_GATE) as editor:
        result = await request(editor, "rein/prompt", {"text": "friendlier"})
        sid, run_id = result["sessionId"], result["runId"]
        after = (workspace / "app.py").read_text()
        undo = {"sessionId": sid, "runId": run_id, "decision": "undo", "path": "app.py"}
        undone = await request(editor, "rein/reviewDecide", undo)
        assert (workspace / "app.py").read_text() == before
        # The model is told, in the transcript its next request carries.
        session = await request(editor, "rein/session", {"sessionId": sid})
        notes = [m for m in session["messages"] if m.get("origin") == "restore"]
        assert len(notes) == 1
        assert "undid: app.py" in notes[0]["content"]
        # The undo is undoable: rein/restore of it brings the agent's text
        # back, and the hunk is pending again.
        redo = await request(
            editor, "rein/restore", {"sessionId": sid, "runId": undone["restoreId"]}
        )
        assert [r["path"] for r in redo["restored"]] == ["app.py"]
        assert (workspace / "app.py").read_text() == after
        review = await request(editor, "rein/review", {"sessionId": sid, "runId": run_id})
        assert review["runs"][0]["files"][0]["status"] == "pending"

        # While a run of the session is active an undo is refused, a keep is not.
        running = asyncio.ensure_future(
            request(editor, "rein/prompt", {"text": "more", "sessionId": sid})
        )
        await editor.wait_event(
            lambda e: e["event"]["type"] == "run_start" and e["event"]["run_id"] != run_id
        )
        with pytest.raises(JsonRpcException) as caught:
            await request(editor, "rein/reviewDecide", undo)
        assert caught.value.code == -32803
        assert "is running a task; abort or wait for the run" in str(caught.value)
        assert (workspace / "app.py").read_text() == after
        kept = await request(editor, "rein/reviewDecide", {**undo, "decision": "keep"})
        assert kept["decided"] == [{"path": "app.py", "status": "kept"}]
        assert (await request(editor, "rein/abort", {"sessionId": sid}))["aborted"]
        assert (await asyncio.wait_for(running, 30))["status"] == "aborted"
