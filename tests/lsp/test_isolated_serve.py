"""An isolated session over the real ``rein serve`` (stdio, a real git
repository): rein/newSession with ``isolated: true`` runs in a worktree
under the storage folder, the folder and the editor untouched, and
rein/applyIsolated "keep" brings the change back through the editor's
workspace/applyEdit and removes the worktree."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e

APP = "def greet(name: str) -> str:\n    return name\n"
#: The analyzer gate is tested with isolated runs by tests/e2e/test_isolated_cli.py.
NO_GATE = {"gates": {"analyzer": {"enabled": False}}}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=30
    ).stdout


async def request(client: Any, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(method, params), 60)


async def test_an_isolated_session_runs_in_its_worktree_and_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q")
    (root / "app.py").write_text(APP)
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "app.py",
                            "old_string": "return name",
                            "new_string": "return name.upper()",
                        },
                    }
                ]
            },
            {"text": "done"},
        ],
    )
    async with running_server(root, tmp_path, settings=NO_GATE) as ed:
        client = ed.client
        made = await request(client, "rein/newSession", {"isolated": True, "title": "t"})
        assert made["isolated"] is True
        tree = Path(made["worktree"])
        assert tree.is_relative_to(tmp_path / "storage") and (tree / "app.py").read_text() == APP

        result = await request(client, "rein/prompt", {"sessionId": made["sessionId"], "text": "x"})
        assert result["status"] == "completed" and result["sessionId"] == made["sessionId"]
        assert "name.upper()" in (tree / "app.py").read_text()
        assert (root / "app.py").read_text() == APP  # the folder untouched until kept
        listed = await request(client, "rein/isolatedSessions", {})
        assert [(s["sessionId"], s["live"], s["worktree"]) for s in listed["sessions"]] == [
            (made["sessionId"], True, str(tree))
        ]
        # What the panel's list shows of it: its title, its last run, its changed files.
        (shown,) = listed["sessions"]
        assert (shown["title"], shown["runStatus"], shown["changed"]) == (
            "t",
            "completed",
            ["app.py"],
        )
        assert "changedError" not in shown
        # Its gates are its own (the analyzer gate is off here, and says so).
        assert shown["analyzers"] == "analyzers: off (gates.analyzer.enabled is false)"
        # The panel opens it: its transcript, as for any session.
        opened = await request(client, "rein/session", {"sessionId": made["sessionId"]})
        assert opened["id"] == made["sessionId"] and opened["status"] == "completed"
        assert any(m["role"] == "assistant" for m in opened["messages"])
        runs = [e for e in ed.events if e["sessionId"] == made["sessionId"]]
        assert any(e["event"]["type"] == "run_end" for e in runs)

        with pytest.raises(JsonRpcInvalidParams, match="action"):
            await request(client, "rein/applyIsolated", {"sessionId": "x", "action": "take"})
        sid = made["sessionId"]
        with pytest.raises(JsonRpcInvalidParams, match="branch: a name is needed"):
            await request(client, "rein/applyIsolated", {"sessionId": sid, "action": "branch"})
        with pytest.raises(JsonRpcInvalidParams, match="branch: only with action 'branch'"):
            await request(
                client, "rein/applyIsolated", {"sessionId": sid, "action": "keep", "branch": "b"}
            )
        plain = await request(client, "rein/newSession", {"title": "plain"})
        with pytest.raises(JsonRpcInvalidParams, match=r"sessionId: .* is not isolated"):
            await request(
                client, "rein/applyIsolated", {"sessionId": plain["sessionId"], "action": "keep"}
            )
        # While the editor applies the kept hunks, no prompt of the session starts.
        release = asyncio.Event()
        ed.slow[lsp.WORKSPACE_APPLY_EDIT] = release
        keeping = asyncio.ensure_future(
            request(client, "rein/applyIsolated", {"sessionId": sid, "action": "keep"})
        )
        await asyncio.wait_for(ed.request_held.wait(), 30)
        with pytest.raises(JsonRpcException, match="is restoring files"):
            await request(client, "rein/prompt", {"sessionId": sid, "text": "again"})
        # Nor is its copy's index read for the list meanwhile.
        (held,) = (await request(client, "rein/isolatedSessions", {}))["sessions"]
        assert (held["changed"], held["changedError"]) == ([], "being brought back")
        release.set()
        kept = await keeping
        assert kept["applied"] == ["app.py"] and kept["conflicts"] == []
        assert (root / "app.py").read_text() == APP.replace("name\n", "name.upper()\n")
        assert not await anyio.Path(tree).exists()
        assert (await request(client, "rein/isolatedSessions", {}))["sessions"] == []
        assert git(root, "worktree", "list").count("\n") == 1
        # One applyEdit, recorded as a run of a session of the folder, judged
        # by its gates (the analyzer gate is off here: tests/e2e/
        # test_isolated_cli.py has a blocked one); restoring that run undoes it.
        assert [p.label for p in ed.applied][-1:] == ["Rein: bring back an isolated run"]
        # With no gate that looks, the verdict says so (it said "passed").
        assert kept["gates"] == {
            "status": "unverified",
            "blockers": [],
            "reason": "no gate of the folder ran",
        }
        restored = await request(
            client, "rein/restore", {"sessionId": kept["sessionId"], "runId": kept["runId"]}
        )
        assert [f["path"] for f in restored["restored"]] == ["app.py"], restored
        assert (root / "app.py").read_text() == APP


THREE = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"


def _edit(old: str, new: str) -> dict[str, Any]:
    return {
        "name": "edit_file",
        "arguments": {"path": "app.py", "old_string": old, "new_string": new},
    }


async def test_an_isolated_run_is_reviewed_by_hunk_and_applied_into_the_open_session(
    tmp_path: Path,
) -> None:
    """The folder changed one of the run's three places meanwhile: the list
    shows two clean hunks and a conflict with both sides; the person keeps
    one clean hunk and applies it into their open session (one run of it,
    undone by rein/restore); the other two are left aside, nothing of them
    written."""
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q")
    (root / "app.py").write_text(THREE)
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    edits = [_edit(f"return {n}", f"return {n}0") for n in (1, 2, 3)]
    write_script(tmp_path, [{"tool_calls": edits}, {"text": "done"}])
    async with running_server(root, tmp_path, settings=NO_GATE) as ed:
        client = ed.client
        made = await request(client, "rein/newSession", {"isolated": True, "title": "t"})
        sid = made["sessionId"]
        result = await request(client, "rein/prompt", {"sessionId": sid, "text": "x"})
        assert result["status"] == "completed"
        folder = THREE.replace("return 3", "return 300")
        (root / "app.py").write_text(folder)  # the person changed c() meanwhile
        plain = (await request(client, "rein/newSession", {"title": "mine"}))["sessionId"]

        listed = await request(client, "rein/isolatedHunks", {"sessionId": sid})
        (shown,) = listed["files"]
        assert (shown["path"], shown["change"], shown["notes"]) == ("app.py", "modified", [])
        ids = [h["id"] for h in shown["hunks"]]
        assert [
            (i.split("~")[0], h["status"], h["lines"])
            for i, h in zip(ids, shown["hunks"], strict=True)
        ] == [
            ("app.py#0", "clean", ["-    return 1", "+    return 10"]),
            ("app.py#1", "clean", ["-    return 2", "+    return 20"]),
            ("app.py#2", "conflict", ["-    return 3", "+    return 30"]),
        ]
        both = shown["hunks"][2]["conflict"]
        assert (both["id"], both["base"], both["ours"], both["theirs"]) == (
            ids[2],
            "    return 3\n",
            "    return 300\n",
            "    return 30\n",
        )
        assert (root / "app.py").read_text() == folder  # listing writes nothing

        for bad, field in (
            ({"hunks": ["app.py#7~000000"]}, "hunks: no such hunk"),
            (
                {"hunks": ["app.py#0~000000"]},
                "hunks: 'app.py#0~000000': changed since it was listed",
            ),
            ({"hunks": ids[0]}, "hunks"),
            ({"hunks": []}, "hunks: Tuple should have at least 1 item"),
            ({"intoSessionId": "nosuch"}, "intoSessionId: no session"),
            ({"intoSessionId": sid}, "intoSessionId: .* is isolated"),
            ({"action": "discard", "hunks": ids[:1]}, "hunks: only with action 'keep'"),
        ):
            with pytest.raises(JsonRpcInvalidParams, match=field):
                await request(
                    client, "rein/applyIsolated", {"sessionId": sid, "action": "keep", **bad}
                )
        with pytest.raises(JsonRpcInvalidParams, match=r"sessionId: .* is not isolated"):
            await request(client, "rein/isolatedHunks", {"sessionId": plain})
        assert (root / "app.py").read_text() == folder  # refused: nothing changed

        kept = await request(
            client,
            "rein/applyIsolated",
            {"sessionId": sid, "action": "keep", "hunks": ids[:1], "intoSessionId": plain},
        )
        assert (kept["applied"], kept["hunksApplied"], kept["leftAside"]) == (
            ["app.py"],
            1,
            ids[1:],
        )
        assert [c["id"] for c in kept["conflicts"]] == ids[2:]
        assert kept["sessionId"] == plain
        assert (root / "app.py").read_text() == folder.replace("return 1\n", "return 10\n")
        assert sorted(p.name for p in root.iterdir()) == [".git", "app.py"]  # no .rej, .orig
        assert [p.label for p in ed.applied][-1:] == ["Rein: bring back an isolated run"]
        # The open session's runs gain the apply, one checkpoint run; undoing it reverts it.
        runs = (await request(client, "rein/checkpoints", {"sessionId": plain}))["runs"]
        assert [(r["runId"], [f["path"] for f in r["files"]]) for r in runs] == [
            (kept["runId"], ["app.py"])
        ]
        restored = await request(
            client, "rein/restore", {"sessionId": plain, "runId": kept["runId"]}
        )
        assert [f["path"] for f in restored["restored"]] == ["app.py"], restored
        assert (root / "app.py").read_text() == folder
        # A conflict was left: the copy stays until it is discarded.
        assert [
            s["sessionId"] for s in (await request(client, "rein/isolatedSessions", {}))["sessions"]
        ] == [sid]
        await request(client, "rein/applyIsolated", {"sessionId": sid, "action": "discard"})
        assert git(root, "worktree", "list").count("\n") == 1
