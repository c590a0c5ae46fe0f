"""An isolated session over the real ``rein acp`` (stdio, a real git
repository, the mock model over HTTP): ``session/new`` with ``_meta.rein.
isolated`` runs in a worktree the editor's buffers never see, and
``_rein/applyIsolated`` "keep" writes the change into the editor's buffer of
the folder's file and removes the worktree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest
from acp import RequestError
from acp.helpers import text_block

from rein.providers.mock_server import MockServer
from tests.acp.conftest import (
    REQUEST_S,
    Home,
    call,
    load_scenario,
    rein_config,
    running_agent,
    tool_turn,
    write_config,
)
from tests.fakes.acp_client import FakeAcpClient

pytestmark = pytest.mark.e2e

APP = "def greet(name: str) -> str:\n    return name\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=30
    ).stdout


async def test_an_isolated_acp_session_is_kept_into_the_editors_buffer(
    tmp_path: Path, home: Home, mock: MockServer
) -> None:
    # The analyzer gate with isolated runs is tests/e2e/test_isolated_cli.py's.
    write_config(
        home.config_file, rein_config(home.path, mock.url, gates={"analyzer": {"enabled": False}})
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "app.py").write_text(APP)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    await load_scenario(
        mock,
        "isolated",
        [
            tool_turn(
                call("edit_file", path="app.py", old_string="return name", new_string="return 1")
            ),
            {"text": "done"},
        ],
    )
    editor = FakeAcpClient(repo)
    # The rein of this checkout, wherever the test runs from.
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
    async with running_agent(editor, home, env=env) as agent:
        await agent.initialize()
        with pytest.raises(RequestError, match=r"_meta\.rein\.isolated"):
            await agent.raw(
                "session/new",
                {"cwd": str(repo), "mcpServers": [], "_meta": {"rein": {"isolated": "yes"}}},
            )
        made = await agent.raw(
            "session/new",
            {"cwd": str(repo), "mcpServers": [], "_meta": {"rein": {"isolated": True}}},
        )
        session_id = made["sessionId"]
        tree = Path(made["_meta"]["rein"]["worktree"])
        assert tree.is_relative_to(home.storage)
        with anyio.fail_after(REQUEST_S):
            answer = await agent.conn.prompt(session_id=session_id, prompt=[text_block("x")])
        assert answer.stop_reason == "end_turn"
        assert (tree / "app.py").read_text() == APP.replace("return name", "return 1")
        assert (repo / "app.py").read_text() == APP
        assert str(repo / "app.py") not in editor.buffers  # nothing reached the editor

        # Its hunks, against the editor's view of the folder; the person keeps
        # the one and applies it into their open session of the folder.
        listed = await agent.raw("_rein/isolatedHunks", {"sessionId": session_id})
        assert [
            (f["path"], [(h["id"].split("~")[0], h["status"]) for h in f["hunks"]])
            for f in listed["files"]
        ] == [("app.py", [("app.py#0", "clean")])]
        (hunk,) = listed["files"][0]["hunks"]
        mine = (await agent.raw("session/new", {"cwd": str(repo), "mcpServers": []}))["sessionId"]
        for bad, field in (
            ({"hunks": ["app.py#3~000000"]}, "hunks: no such hunk"),
            ({"hunks": ["app.py#0~000000"]}, "hunks: .* changed since it was listed"),
            ({"hunks": []}, "hunks: a non-empty list"),
            ({"intoSessionId": "nosuch"}, "intoSessionId"),
            ({"intoSessionId": session_id}, "intoSessionId"),
        ):
            with pytest.raises(RequestError, match=field):
                await agent.raw(
                    "_rein/applyIsolated", {"sessionId": session_id, "action": "keep", **bad}
                )
        assert (repo / "app.py").read_text() == APP
        kept = await agent.raw(
            "_rein/applyIsolated",
            {
                "sessionId": session_id,
                "action": "keep",
                "hunks": [hunk["id"]],
                "intoSessionId": mine,
            },
        )
        assert kept["applied"] == ["app.py"] and kept["conflicts"] == []
        assert kept["leftAside"] == []
        assert editor.buffers[str(repo / "app.py")] == APP.replace("return name", "return 1")
        assert not await anyio.Path(tree).exists()
        assert git(repo, "worktree", "list").count("\n") == 1
        # Recorded as one run of the person's open session, its gates'
        # verdict in the answer (the analyzer gate is off here).
        # With no gate that looks, the verdict says so (it said "passed").
        assert kept["gates"] == {
            "status": "unverified",
            "blockers": [],
            "reason": "no gate of the folder ran",
        }
        assert kept["sessionId"] == mine and kept["runId"].startswith("run_")


async def test_an_apply_into_a_session_whose_prompt_starts_is_refused(tmp_path: Path) -> None:
    """The open session an apply goes into is refused while a prompt of it
    is starting (the manager's in_use), at into() and again when the
    apply takes the session, for a prompt that started in between: nothing
    of the apply is done. (In process: the race cannot be timed over stdio.)"""
    from types import SimpleNamespace
    from typing import Any

    from rein.acp.isolated import AcpIsolation

    in_use: set[str] = set()
    mine: Any = SimpleNamespace(id="mine", busy=False, restoring=False)
    folder = SimpleNamespace(
        manager=SimpleNamespace(sessions={"mine": mine}, in_use=in_use.__contains__)
    )

    class _Hosts:
        async def host(self, root: Path, client_view: bool = True) -> Any:
            return folder

    isolation = AcpIsolation(_Hosts(), tmp_path)  # type: ignore[arg-type]
    isolation.records["iso"] = SimpleNamespace(folder=str(tmp_path), session_id="iso")  # type: ignore[assignment]
    assert await isolation.into("iso", "mine", mine) is mine
    in_use.add("mine")  # a prompt of it starts
    with pytest.raises(RequestError, match="intoSessionId: the session 'mine' is running"):
        await isolation.into("iso", "mine", mine)

    async def applied(*args: object) -> dict[str, Any]:
        raise AssertionError("the apply went on")

    isolation._bring_back = applied  # type: ignore[method-assign]
    with pytest.raises(RequestError, match="session mine is running a task"):
        await isolation.bring_back("iso", {"action": "keep"}, None, mine)
    assert not mine.restoring


async def test_hunks_of_a_running_isolated_session_are_refused(tmp_path: Path) -> None:
    """``_rein/isolatedHunks`` stages the copy's index: while the isolated
    session's run runs it is refused and nothing is read; idle, the
    session is held while the listing reads. (In process, as above.)"""
    from types import SimpleNamespace
    from typing import Any

    from rein.acp.isolated import AcpIsolation

    copy: Any = SimpleNamespace(id="iso", busy=True, restoring=False, touch=lambda: None)
    isolation = AcpIsolation(None, tmp_path)  # type: ignore[arg-type]
    isolation.records["iso"] = SimpleNamespace(folder=str(tmp_path), session_id="iso")  # type: ignore[assignment]
    held: list[bool] = []

    async def listed(session_id: str, record: object) -> dict[str, Any]:
        held.append(copy.restoring)
        return {"sessionId": session_id, "files": []}

    isolation._hunks = listed  # type: ignore[method-assign]
    with pytest.raises(RequestError, match="session iso is running a task"):
        await isolation.hunks("iso", copy)
    assert held == []
    copy.busy = False
    assert await isolation.hunks("iso", copy) == {"sessionId": "iso", "files": []}
    assert held == [True] and not copy.restoring
