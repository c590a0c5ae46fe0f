"""Approvals that stick and cost in sight, over the real server: "always
allow" in ``rein/confirm`` keeps the offered rules (the workspace's in the
store, across a restart), compound commands need every part allowed,
``rein/approvals`` lists and ``rein/approvals/revoke`` drops them; the prompt
result and ``$/progress`` carry the cost and the context share."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e

PRICES = {"priced": {"input": 1.0, "output": 10.0}}


def model(tmp_path: Path) -> dict[str, Any]:
    return {
        "provider": "replay",
        "script": str(tmp_path / "script.yaml"),
        "model": "priced",
        "prices": PRICES,
    }


def command_turn(command: str) -> dict[str, Any]:
    return {
        "tool_calls": [{"name": "run_command", "arguments": {"command": command}}],
        "usage": {"input_tokens": 1000, "output_tokens": 100},
    }


DONE = {"text": "done", "usage": {"input_tokens": 2000, "output_tokens": 10}}


async def request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(editor.client.protocol.send_request_async(method, params), 60)


async def test_always_allow_sticks_for_compound_commands_and_is_revocable(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            command_turn("echo one && echo two"),
            DONE,
            command_turn("echo two; echo one | cat"),
            DONE,
            command_turn("echo one"),
            DONE,
        ],
    )
    async with running_server(workspace, tmp_path, model=model(tmp_path)) as editor:
        editor.confirm_remember = "workspace"
        first = await request(editor, "rein/prompt", {"text": "run them"})
        assert first["status"] == "completed", first
        (asked,) = editor.confirms
        assert asked["rule"] == {"kind": "command", "pattern": "echo one"}
        assert asked["rules"] == [
            {"kind": "command", "pattern": "echo one"},
            {"kind": "command", "pattern": "echo two"},
        ]
        # Cost and context in the result: 1000/100 then 2000/10 tokens.
        assert first["cost"] == pytest.approx((3000 * 1.0 + 110 * 10.0) / 1_000_000)
        assert first["context"]["used"] == 2000

        editor.confirm_remember = None
        second = await request(
            editor, "rein/prompt", {"text": "again", "sessionId": first["sessionId"]}
        )
        assert second["status"] == "completed", second
        # "cat" is not allowed: asked about the missing part only.
        assert len(editor.confirms) == 2
        assert editor.confirms[-1]["rules"] == [{"kind": "command", "pattern": "cat"}]

        listed = await request(editor, "rein/approvals", {"sessionId": first["sessionId"]})
        rules = {r["pattern"]: r for r in listed["rules"]}
        assert set(rules) == {"echo one", "echo two"}
        assert {r["scope"] for r in rules.values()} == {"workspace"}

        revoked = await request(editor, "rein/approvals/revoke", {"id": rules["echo one"]["id"]})
        assert revoked == {"revoked": True}
        third = await request(
            editor, "rein/prompt", {"text": "once more", "sessionId": first["sessionId"]}
        )
        assert third["status"] == "completed", third
        assert len(editor.confirms) == 3  # asked again after the revoke
        with pytest.raises(JsonRpcException, match="id: no rule"):
            await request(editor, "rein/approvals/revoke", {"id": rules["echo one"]["id"]})
        with pytest.raises(JsonRpcException, match="sessionId"):
            await request(editor, "rein/approvals", {"sessionId": 5})

    # The workspace's rules are in the store: a new server still has them.
    async with running_server(workspace, tmp_path, model=model(tmp_path)) as editor:
        listed = await request(editor, "rein/approvals", {})
        assert [(r["scope"], r["pattern"]) for r in listed["rules"]] == [("workspace", "echo two")]


async def test_the_wider_rule_is_kept_only_when_chosen_and_extra_paths_still_ask(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    write_script(
        tmp_path,
        [
            command_turn("git status --short"),
            DONE,
            command_turn("git status"),
            DONE,
            command_turn(f"git status {outside}"),
            DONE,
        ],
    )
    async with running_server(workspace, tmp_path, model=model(tmp_path)) as editor:
        editor.confirm_remember = "session"
        editor.confirm_prefix = True
        first = await request(editor, "rein/prompt", {"text": "status"})
        assert first["status"] == "completed", first
        (asked,) = editor.confirms
        assert asked["rules"] == [{"kind": "command", "pattern": "git status --short"}]
        assert asked["prefixRules"] == [{"kind": "command", "pattern": "git status *"}]
        editor.confirm_remember = editor.confirm_prefix = None
        session = {"sessionId": first["sessionId"]}
        second = await request(editor, "rein/prompt", {"text": "again", **session})
        assert second["status"] == "completed", second
        assert len(editor.confirms) == 1  # git status * covers it
        third = await request(editor, "rein/prompt", {"text": "outside", **session})
        assert third["status"] == "completed", third
        assert len(editor.confirms) == 2  # a path outside the workspace asks
        assert editor.confirms[-1]["rules"] == [
            {"kind": "command", "pattern": f"git status {outside}"}
        ]
        listed = await request(editor, "rein/approvals", session)
        assert [r["pattern"] for r in listed["rules"]] == ["git status *"]


async def test_session_rules_stay_in_their_session(workspace: Path, tmp_path: Path) -> None:
    write_script(tmp_path, [command_turn("echo hi"), DONE])
    async with running_server(workspace, tmp_path, model=model(tmp_path)) as editor:
        editor.confirm_remember = "session"
        first = await request(editor, "rein/prompt", {"text": "hi"})
        assert first["status"] == "completed", first
        mine = await request(editor, "rein/approvals", {"sessionId": first["sessionId"]})
        assert [(r["scope"], r["pattern"], r["sessionId"]) for r in mine["rules"]] == [
            ("session", "echo hi", first["sessionId"])
        ]
        other = await request(editor, "rein/approvals", {"sessionId": "ses_other"})
        assert other["rules"] == []


async def test_progress_reports_show_tokens_context_and_cost(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(tmp_path, [DONE])
    async with running_server(workspace, tmp_path, model=model(tmp_path)) as editor:
        editor.client.progress_reports.setdefault("tok-c", [])
        result = await request(editor, "rein/prompt", {"text": "hi", "workDoneToken": "tok-c"})
        assert result["status"] == "completed", result
        messages = [
            getattr(r, "message", "") or "" for r in editor.client.progress_reports["tok-c"]
        ]
        # 2000 in / 10 out of the default 100k window; $0.0021.
        assert "turn 1 · 2.0k in / 10 out · 2% of context · $0.0021" in messages


async def test_a_budget_ends_the_run_with_its_reason(workspace: Path, tmp_path: Path) -> None:
    write_script(tmp_path, [command_turn("echo a"), command_turn("echo b"), DONE])
    settings = {"harness": {"maxTokensPerRun": 1500}, "approval": {"command": "allow"}}
    async with running_server(
        workspace, tmp_path, model=model(tmp_path), settings=settings
    ) as editor:
        result = await request(editor, "rein/prompt", {"text": "go"})
        assert result["status"] == "failed"
        assert result["error"].startswith("budget: the run processed 2,200 tokens")
        kinds = [e["event"]["type"] for e in editor.events]
        assert "budget_exceeded" in kinds
