"""Sessions that survive: restart, kill -9, ask-user waiting, a storage
folder that cannot be used. Real `rein serve` subprocesses."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.editor import Editor, paired
from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e


async def request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(editor.client.protocol.send_request_async(method, params), 60)


async def kill_during_run_command(workspace: Path, tmp_path: Path, params: dict[str, Any]) -> str:
    """Start a prompt on a real server and SIGKILL the server while the
    scripted run_command runs; the session's id."""
    async with running_server(workspace, tmp_path) as editor:
        task = asyncio.ensure_future(request(editor, "rein/prompt", params))
        started = await editor.wait_event(
            lambda e: (
                e["event"]["type"] == "tool_call_start" and e["event"]["name"] == "run_command"
            )
        )
        os.kill(editor.client._server.pid, signal.SIGKILL)  # type: ignore[union-attr]
        with pytest.raises(RuntimeError, match="exited"):
            await asyncio.wait_for(task, 10)
    return str(started["sessionId"])


async def test_a_session_survives_a_restart_and_continues_with_its_transcript(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
            {"text": "greet() says hello"},
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        first = await request(editor, "rein/prompt", {"text": "what does greet do?"})
        assert first["status"] == "completed"
    write_script(
        tmp_path,
        [
            {
                "expect": {
                    "messages_contain": ["what does greet do?", "greet() says hello", "def greet"]
                },
                "text": "and shout() shouts it",
            }
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        listed = await request(editor, "rein/sessions", {})
        [summary] = listed["sessions"]
        assert summary["id"] == first["sessionId"] and summary["title"] == "what does greet do?"
        assert summary["status"] == "completed" and summary["turns"] == 2
        session = await request(editor, "rein/session", {"sessionId": first["sessionId"]})
        assert [m["role"] for m in session["messages"]] == [
            "user",
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        second = await request(
            editor, "rein/prompt", {"text": "and shout?", "sessionId": first["sessionId"]}
        )
        assert second["status"] == "completed", second.get("error")
        assert second["text"] == "and shout() shouts it"
        [after] = (await request(editor, "rein/sessions", {}))["sessions"]
        # Turns and usage add up over the runs, across the restart, in camelCase.
        assert after["turns"] == 3
        total_out = first["usage"]["outputTokens"] + second["usage"]["outputTokens"]
        assert after["usage"]["outputTokens"] == total_out > 0
        assert set(after["usage"]) == {
            "inputTokens",
            "outputTokens",
            "cacheReadTokens",
            "cacheWriteTokens",
        }


async def test_kill_9_mid_run_keeps_every_committed_message_and_rolls_back(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            {
                "text": "Running the slow command.",
                "tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 60"}}],
            }
        ],
    )
    session_id = await kill_during_run_command(workspace, tmp_path, {"text": "run the slow thing"})
    db = sqlite3.connect(tmp_path / "storage" / "sessions.db")
    assert (
        db.execute("SELECT status FROM sessions WHERE id=?", (session_id,)).fetchone()[0]
        == "running"
    )
    committed = db.execute(
        "SELECT count(*) FROM messages WHERE session_id=?", (session_id,)
    ).fetchone()[0]
    assert (
        committed == 3
    )  # bootstrap, prompt, the assistant's call: all committed before the tool ran
    db.close()
    write_script(
        tmp_path,
        [
            {
                "expect": {"messages_contain": ["Interrupted: the session stopped"]},
                "text": "I will not rerun it blindly.",
            }
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        [summary] = (await request(editor, "rein/sessions", {}))["sessions"]
        assert summary["status"] == "interrupted"
        session = await request(editor, "rein/session", {"sessionId": session_id})
        assert paired(session["messages"])
        assert session["messages"][-1]["content"].startswith("Interrupted")
        result = await request(
            editor, "rein/prompt", {"text": "what happened?", "sessionId": session_id}
        )
        assert result["status"] == "completed", result.get("error")


async def test_an_unanswered_question_waits_and_the_next_prompt_answers_it_even_after_a_restart(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [{"tool_calls": [{"name": "ask_user", "arguments": {"question": "Tabs or spaces?"}}]}],
    )
    async with running_server(workspace, tmp_path) as editor:
        editor.ask_answer = None  # the person dismisses the question
        waiting = await request(editor, "rein/prompt", {"text": "format the file"})
        assert waiting["status"] == "waiting"
        assert "Tabs or spaces?" in waiting["error"]
        [summary] = (await request(editor, "rein/sessions", {}))["sessions"]
        assert summary["status"] == "waiting"
    write_script(
        tmp_path,
        [
            {
                "expect": {
                    "last_role": "tool",
                    "last_message_contains": "The person answered: spaces",
                },
                "text": "Using spaces.",
            }
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        result = await request(
            editor, "rein/prompt", {"text": "spaces", "sessionId": waiting["sessionId"]}
        )
        assert result["status"] == "completed", result.get("error")
        session = await request(editor, "rein/session", {"sessionId": waiting["sessionId"]})
        assert [m["role"] for m in session["messages"]] == [
            "user",
            "user",
            "assistant",
            "tool",
            "assistant",
        ]


async def test_a_subagents_unanswered_question_waits_and_resumes_the_subagent_after_a_restart(
    workspace: Path, tmp_path: Path
) -> None:
    """Issue 16: the child's question reaches the client (rein/askUser); the
    person dismisses it; the parent run waits; a new server resumes the
    child with the next prompt's text, then the parent goes on."""
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "task",
                        "arguments": {
                            "description": "pick the style",
                            "prompt": "ask tabs or spaces",
                            "tools": ["ask_user"],
                        },
                    }
                ]
            },
            {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Tabs or spaces?"}}]},
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        editor.ask_answer = None  # the person dismisses the question
        waiting = await request(editor, "rein/prompt", {"text": "format the file"})
        assert waiting["status"] == "waiting", waiting.get("error")
        assert "Tabs or spaces?" in waiting["error"]
        [end] = [
            e["event"]
            for e in editor.events
            if e["event"]["type"] == "tool_call_end" and e["event"]["name"] == "task"
        ]
        assert end["details"]["subagent_waiting"] is True
    write_script(
        tmp_path,
        [
            {  # the child, from the store
                "expect": {"last_role": "tool", "last_message_contains": "answered: spaces"},
                "text": "the person wants spaces",
            },
            {  # the parent
                "expect": {"last_role": "tool", "last_message_contains": "wants spaces"},
                "text": "Using spaces.",
            },
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        result = await request(
            editor, "rein/prompt", {"text": "spaces", "sessionId": waiting["sessionId"]}
        )
        assert result["status"] == "completed", result.get("error")
        assert result["text"] == "Using spaces."
        session = await request(editor, "rein/session", {"sessionId": waiting["sessionId"]})
        assert paired(session["messages"])
        assert session["messages"][-2]["content"] == "the person wants spaces"


async def test_an_unusable_storage_folder_is_reported_and_prompts_still_work(
    workspace: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "storage"
    blocker.write_text("a file where the folder should be")
    write_script(tmp_path, [{"text": "still here"}])
    async with running_server(workspace, tmp_path) as editor:
        result = await request(editor, "rein/prompt", {"text": "hello"})
        assert result["status"] == "completed"
        errors = [m.message for m in editor.client.messages if "session folder" in m.message]
        assert len(errors) == 1 and str(blocker) in errors[0] and "in memory" in errors[0]
        listed = await request(editor, "rein/sessions", {})
        assert [s["id"] for s in listed["sessions"]] == [result["sessionId"]]
    assert blocker.read_text() == "a file where the folder should be"


async def test_a_plan_act_session_waits_and_resumes_after_a_restart(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "submit_plan",
                        "arguments": {"steps": [{"id": "s1", "description": "ask the person"}]},
                    }
                ]
            },
            {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Which greeting?"}}]},
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        editor.ask_answer = None
        waiting = await request(
            editor, "rein/prompt", {"text": "change the greeting", "mode": "plan"}
        )
        assert waiting["status"] == "waiting", waiting.get("error")
    write_script(
        tmp_path,
        [
            {
                "expect": {"last_message_contains": "The person answered: hi"},
                "tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}],
            },
            {
                "tool_calls": [
                    {
                        "name": "complete_step",
                        "arguments": {"step_id": "s1", "success": True, "summary": "use hi"},
                    }
                ]
            },
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        result = await request(
            editor, "rein/prompt", {"text": "hi", "sessionId": waiting["sessionId"]}
        )
        assert result["status"] == "completed", result.get("error")
        assert result["text"] == "use hi"
        states = [e["event"]["state"] for e in editor.events if e["event"]["type"] == "plan_state"]
        assert states[-1] == "completed"
    db = sqlite3.connect(tmp_path / "storage" / "sessions.db")
    keys = {
        row[0]
        for row in db.execute(
            "SELECT DISTINCT memory_key FROM messages WHERE session_id=?", (waiting["sessionId"],)
        )
    }
    assert keys == {"planner:memory", "executor:memory"}


async def test_a_killed_plan_act_session_rolls_back_and_continues(
    workspace: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "submit_plan",
                        "arguments": {"steps": [{"id": "s1", "description": "run the slow check"}]},
                    }
                ]
            },
            {"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 60"}}]},
        ],
    )
    session_id = await kill_during_run_command(
        workspace, tmp_path, {"text": "check it", "mode": "plan"}
    )
    write_script(
        tmp_path,
        [
            {
                "expect": {"messages_contain": ["Interrupted: the session stopped"]},
                "tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}],
            },
            {
                "tool_calls": [
                    {
                        "name": "complete_step",
                        "arguments": {
                            "step_id": "s1",
                            "success": True,
                            "summary": "checked by reading",
                        },
                    }
                ]
            },
        ],
    )
    async with running_server(workspace, tmp_path) as editor:
        [summary] = (await request(editor, "rein/sessions", {}))["sessions"]
        assert summary["status"] == "interrupted"
        result = await request(editor, "rein/prompt", {"text": "go on", "sessionId": session_id})
        assert result["status"] == "completed", result.get("error")
        assert result["text"] == "checked by reading"
    db = sqlite3.connect(tmp_path / "storage" / "sessions.db")
    for memory in ("planner:memory", "executor:memory"):
        rows = [
            r[0]
            for r in db.execute(
                "SELECT body FROM messages WHERE session_id=? AND memory_key=? ORDER BY seq",
                (session_id, memory),
            )
        ]
        messages = [json.loads(r) for r in rows]
        assert paired(messages), memory
