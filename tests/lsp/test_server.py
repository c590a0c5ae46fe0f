"""The LSP contract through the real server over stdio."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.fakes.editor import Editor, paired
from tests.lsp.conftest import write_script

#: The real server over stdio with a real analyzer (ruff) behind the editor.
pytestmark = pytest.mark.e2e

SLOW = {"text": "thinking it over", "delay": 0.6}


async def prompt(editor: Editor, **params: Any) -> dict[str, Any]:
    return await asyncio.wait_for(
        editor.client.protocol.send_request_async("rein/prompt", params), 60
    )


async def session_messages(editor: Editor, session_id: str) -> list[dict[str, Any]]:
    found = await editor.client.protocol.send_request_async(
        "rein/session", {"sessionId": session_id}
    )
    return found["messages"]


async def started(editor: Editor) -> str:
    """Wait until the first model call is under way; the session's id."""
    event = await editor.wait_event(lambda e: e["event"]["type"] == "turn_start")
    return event["sessionId"]


def _command_file(root: Path) -> None:
    """A slash command of the workspace: ``/short ARGS``."""
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "commands" / "short.md").write_text("Be brief and $ARGUMENTS\n")


async def test_steering_mid_run_reaches_the_model(editor: Editor, tmp_path: Path) -> None:
    _command_file(editor.root)
    write_script(
        tmp_path,
        [
            {**SLOW, "tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
            {
                "expect": {"last_message_contains": "Be brief and use pathlib"},
                "text": "switching to pathlib",
            },
        ],
    )
    task = asyncio.ensure_future(prompt(editor, text="read app.py"))
    session_id = await started(editor)
    # A /command steers as rein/prompt would run it: expanded.
    answer = await editor.client.protocol.send_request_async(
        "rein/steer", {"sessionId": session_id, "text": "/short use pathlib"}
    )
    assert answer == {"queued": True}
    result = await task
    assert result["status"] == "completed", result.get("error")
    assert result["text"] == "switching to pathlib"
    assert "steering_applied" in editor.event_types(session_id)


async def test_a_follow_up_runs_after_the_first_run(editor: Editor, tmp_path: Path) -> None:
    write_script(
        tmp_path,
        [SLOW, {"expect": {"last_message_contains": "and the tests"}, "text": "tests done"}],
    )
    _command_file(editor.root)
    task = asyncio.ensure_future(prompt(editor, text="first"))
    session_id = await started(editor)
    with pytest.raises(JsonRpcException) as unknown:
        await editor.client.protocol.send_request_async(
            "rein/followUp", {"sessionId": session_id, "text": "/nope and the tests"}
        )
    assert "rein/followUp: invalid params: text: unknown command /nope" in str(unknown.value)
    assert "/short" in str(unknown.value)  # the known ones are listed
    answer = await editor.client.protocol.send_request_async(
        "rein/followUp", {"sessionId": session_id, "text": "and the tests"}
    )
    assert answer == {"queued": True}
    result = await task
    assert result["status"] == "completed" and result["text"] == "tests done"
    types = editor.event_types(session_id)
    assert types.count("run_start") == 2 and "follow_up_started" in types


async def test_abort_via_rein_abort_leaves_a_valid_transcript(
    editor: Editor, tmp_path: Path
) -> None:
    write_script(
        tmp_path, [{"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 30"}}]}]
    )
    task = asyncio.ensure_future(prompt(editor, text="wait"))
    await editor.wait_event(
        lambda e: e["event"]["type"] == "tool_call_start" and e["event"]["name"] == "run_command"
    )
    session_id = editor.events[-1]["sessionId"]
    assert await editor.client.protocol.send_request_async(
        "rein/abort", {"sessionId": session_id}
    ) == {"aborted": True}
    result = await task
    assert result["status"] == "aborted" and "aborted by the user" in result["error"]
    messages = await session_messages(editor, session_id)
    assert paired(messages)
    assert messages[-1]["role"] == "tool" and messages[-1]["tool_name"] == "run_command"
    assert messages[-1]["content"] == "Tool call aborted: aborted by the user"


async def test_cancel_request_aborts_the_run(editor: Editor, tmp_path: Path) -> None:
    write_script(tmp_path, [{"text": "never finished", "delay": 30}])
    future = editor.client.protocol.send_request("rein/prompt", {"text": "slow"}, msg_id="prompt-1")
    session_id = await started(editor)
    editor.client.protocol.notify("$/cancelRequest", lsp.CancelParams(id="prompt-1"))
    with pytest.raises(JsonRpcException) as info:
        await asyncio.wait_for(asyncio.wrap_future(future), 20)
    assert info.value.code == -32800
    await editor.wait_event(
        lambda e: e["sessionId"] == session_id and e["event"]["type"] == "run_end"
    )
    end = [
        e for e in editor.events if e["sessionId"] == session_id and e["event"]["type"] == "run_end"
    ][0]
    assert end["event"]["status"] == "aborted"
    sessions = await editor.client.protocol.send_request_async("rein/sessions", {})
    assert sessions["sessions"][0]["status"] == "aborted"
    assert paired(await session_messages(editor, session_id))


async def test_an_edit_refused_because_the_person_typed_loses_nothing(
    editor: Editor, tmp_path: Path
) -> None:
    editor.open("app.py")
    person_text = (tmp_path / "ws" / "app.py").read_text() + "\n# the person is typing here\n"
    editor.type_before_next_apply = ("app.py", person_text)
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {"path": "app.py", "old_string": "hello", "new_string": "hi"},
                    }
                ]
            },
            {
                "expect": {"last_message_contains": "read the file again"},
                "text": "I will re-read first",
            },
        ],
    )
    result = await prompt(editor, text="change greeting")
    assert result["status"] == "completed", result.get("error")
    assert editor.refused == ["app.py"]
    assert editor.docs["app.py"][1] == person_text  # what the person typed is intact
    assert result["generations"] == []


async def test_code_action_then_execute_command_starts_a_run(
    editor: Editor, tmp_path: Path
) -> None:
    editor.open("app.py")
    write_script(tmp_path, [{"text": "that function greets someone"}])
    diagnostic = lsp.Diagnostic(
        range=lsp.Range(lsp.Position(4, 4), lsp.Position(4, 10)),
        message="something odd",
        severity=lsp.DiagnosticSeverity.Warning,
        code="X1",
        source="test",
    )
    actions = await editor.client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=editor.uri("app.py")),
            range=lsp.Range(lsp.Position(3, 0), lsp.Position(5, 0)),
            context=lsp.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    titles = {a.title: a for a in actions or []}
    assert {"Fix with Rein", "Explain with Rein", "Ask Rein about this selection"} <= set(titles)
    assert titles["Fix with Rein"].kind == lsp.CodeActionKind.QuickFix
    assert titles["Explain with Rein"].kind == lsp.CodeActionKind.RefactorRewrite
    command = titles["Explain with Rein"].command
    assert command is not None and command.command == "rein.explain"
    answer = await editor.client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    )
    session_id = answer["sessionId"]
    end = await editor.wait_event(
        lambda e: e["sessionId"] == session_id and e["event"]["type"] == "run_end"
    )
    assert end["event"]["status"] == "completed"
    messages = await session_messages(editor, session_id)
    prompt_text = [m for m in messages if m["role"] == "user" and m.get("origin") == "prompt"][0][
        "content"
    ]
    assert "Explain this code in app.py" in prompt_text and "def greet" in prompt_text


async def test_explain_runs_without_write_tools(editor: Editor, tmp_path: Path) -> None:
    write_script(
        tmp_path,
        [
            {
                "expect": {
                    "tools_exclude": ["edit_file", "write_file", "run_command"],
                    "tools_include": ["read_file"],
                },
                "text": "explained",
            }
        ],
    )
    result = await prompt(editor, text="explain app.py", mode="explain")
    assert result["status"] == "completed", result.get("error")


async def test_a_client_without_rein_confirm_gets_a_denial_the_model_can_read(
    editor: Editor, tmp_path: Path
) -> None:
    # A client that does not implement rein/confirm: it answers MethodNotFound.
    editor.client.protocol.fm.features.pop("rein/confirm")
    editor.client.report_server_error = lambda error, source: None  # the expected MethodNotFound
    write_script(
        tmp_path,
        [
            {"tool_calls": [{"name": "run_command", "arguments": {"command": "echo hi"}}]},
            {
                "expect": {"last_message_contains": "does not support rein/confirm"},
                "tool_calls": [{"name": "run_command", "arguments": {"command": "echo again"}}],
            },
            {
                "expect": {"last_message_contains": "does not support rein/confirm"},
                "text": "ok, no commands",
            },
        ],
    )
    result = await prompt(editor, text="run something")
    assert result["status"] == "completed", result.get("error")
    assert editor.confirms == []
    # The server remembered: the second command was denied without asking again.
    messages = await session_messages(editor, result["sessionId"])
    denials = [m["content"] for m in messages if m["role"] == "tool"]
    assert len(denials) == 2 and all("rein/confirm" in d for d in denials)


async def test_two_sessions_run_at_once(editor: Editor, tmp_path: Path) -> None:
    write_script(tmp_path, [{"text": "answer", "delay": 0.5}])
    first, second = await asyncio.gather(prompt(editor, text="one"), prompt(editor, text="two"))
    assert first["status"] == second["status"] == "completed"
    assert first["sessionId"] != second["sessionId"]
    order = [
        (e["sessionId"], e["event"]["type"])
        for e in editor.events
        if e["event"]["type"] in ("run_start", "run_end")
    ]
    # Both started before either ended: they ran concurrently.
    assert [t for _, t in order[:2]] == ["run_start", "run_start"]
    sessions = await editor.client.protocol.send_request_async("rein/sessions", {})
    assert {s["id"] for s in sessions["sessions"]} >= {first["sessionId"], second["sessionId"]}


async def test_a_prompt_on_a_busy_session_points_to_steer(editor: Editor, tmp_path: Path) -> None:
    write_script(tmp_path, [{"text": "slow", "delay": 1.0}])
    task = asyncio.ensure_future(prompt(editor, text="one"))
    session_id = await started(editor)
    with pytest.raises(JsonRpcException) as info:
        await prompt(editor, text="two", sessionId=session_id)
    assert "rein/steer" in str(info.value) and "rein/followUp" in str(info.value)
    assert (await task)["status"] == "completed"


async def test_text_deltas_are_coalesced_and_seq_is_gap_free(
    editor: Editor, tmp_path: Path
) -> None:
    text = "".join(f"word{i} " for i in range(300))
    write_script(tmp_path, [{"text": text, "chunk_size": 1}])
    result = await prompt(editor, text="talk")
    deltas = [e["event"]["delta"] for e in editor.events if e["event"]["type"] == "message_delta"]
    assert "".join(deltas) == text
    assert len(deltas) < len(text) / 10  # thousands of chunks, few notifications
    seqs = [e["seq"] for e in editor.events if e["sessionId"] == result["sessionId"]]
    assert seqs == list(range(1, len(seqs) + 1))
    assert all(
        e["runId"] == result["runId"]
        for e in editor.events
        if e["event"]["type"] not in ("agent_start", "agent_end")
    )


async def test_work_done_progress_begin_report_end(editor: Editor, tmp_path: Path) -> None:
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}],
                "usage": {"input_tokens": 100, "output_tokens": 10},
            },
            {"text": "read", "usage": {"input_tokens": 200, "output_tokens": 20}},
        ],
    )
    await editor.client.window_work_done_progress_create_async(
        lsp.WorkDoneProgressCreateParams(token="tok-1")
    ) if False else None
    editor.client.progress_reports.setdefault("tok-1", [])
    result = await prompt(editor, text="read", workDoneToken="tok-1")
    assert result["status"] == "completed"
    reports = editor.client.progress_reports["tok-1"]
    kinds = [type(r).__name__ for r in reports]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    messages = [getattr(r, "message", "") or "" for r in reports]
    # The run's tokens so far (turn_end.run_usage), not the turn's alone.
    # No price for the replay model: no cost in the line.
    assert "turn 1 · 100 in / 10 out · 0% of context" in messages
    assert "turn 2 · 300 in / 30 out · 0% of context" in messages


async def test_invalid_configuration_is_reported_once_and_the_last_good_one_kept(
    editor: Editor, tmp_path: Path
) -> None:
    for _ in range(2):
        editor.client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(
                settings={"rein": {"harness": {"maxModelTurnsPerRun": "lots"}}}
            )
        )
    write_script(tmp_path, [{"text": "still working"}])
    result = await prompt(editor, text="hello")  # also makes sure the notifications were handled
    assert result["status"] == "completed"
    messages = [m.message for m in editor.client.messages]
    bad = [m for m in messages if "harness.maxModelTurnsPerRun" in m]
    assert len(bad) == 1, messages


#: Invalid requests: (method, params, the field the error must name).
INVALID_PARAMS = [
    ("rein/prompt", {}, "text"),
    ("rein/prompt", {"text": "x", "mode": "yolo"}, "mode"),
    ("rein/prompt", {"text": "x", "sessionId": "nope"}, "sessionId"),
    ("rein/steer", {"text": "x"}, "sessionId"),
    ("rein/followUp", {"sessionId": "s"}, "text"),
    ("rein/abort", {"sessionId": 5}, "sessionId"),
    ("rein/sessions", {"unexpected": 1}, "unexpected"),
    ("rein/session", {}, "sessionId"),
]


async def test_invalid_params_name_the_field(editor: Editor) -> None:
    """Every case against one server (a refused request changes nothing,
    and the server must go on answering after each): one start per editor
    profile rather than one per case."""
    for method, params, field in INVALID_PARAMS:
        with pytest.raises(JsonRpcException) as info:
            await editor.client.protocol.send_request_async(method, params)
        assert info.value.code == -32602, (method, params)
        assert field in str(info.value) and method in str(info.value), (method, params)
        # The server is still alive and answering.
        assert "sessions" in await editor.client.protocol.send_request_async("rein/sessions", {})


BROKEN = 'def greet(name: str) -> str:\n    return f"hello {nmae}"\n'


async def enable_auto_repair(editor: Editor, tmp_path: Path) -> None:
    from tests.lsp.conftest import _settings

    settings = {**_settings(tmp_path), "autoRepair": "onSave"}
    editor.client.set_configuration(settings, section="rein")
    # Pushed with the notification, so it applies before the next message.
    editor.client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"rein": settings})
    )


async def test_auto_repair_on_save_fixes_the_file(editor: Editor, tmp_path: Path) -> None:
    await enable_auto_repair(editor, tmp_path)
    write_script(
        tmp_path,
        [
            {
                "expect": {"last_message_contains": "nmae"},
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "app.py",
                            "old_string": "{nmae}",
                            "new_string": "{name}",
                        },
                    }
                ],
            },
            {"text": "fixed the typo"},
        ],
    )
    editor.open("app.py")
    editor.type("app.py", BROKEN)
    editor.save("app.py")
    started_event = await editor.wait_event(
        lambda e: e["event"]["type"] == "auto_repair" and e["event"]["phase"] == "started"
    )
    finished = await editor.wait_event(
        lambda e: e["event"]["type"] == "auto_repair" and e["event"]["phase"] == "finished"
    )
    assert finished["event"]["status"] == "completed"
    assert started_event["sessionId"] == finished["sessionId"]
    assert editor.docs["app.py"][1] == 'def greet(name: str) -> str:\n    return f"hello {name}"\n'
    sessions = await editor.client.protocol.send_request_async("rein/sessions", {})
    assert sessions["sessions"][0]["origin"] == "autoRepair"


async def test_typing_cancels_auto_repair_and_the_same_errors_do_not_trigger_twice(
    editor: Editor, tmp_path: Path
) -> None:
    await enable_auto_repair(editor, tmp_path)
    write_script(tmp_path, [{"text": "looking", "delay": 30}])
    editor.open("app.py")
    editor.type("app.py", BROKEN)
    editor.save("app.py")
    await editor.wait_event(lambda e: e["event"]["type"] == "turn_start")
    editor.type("app.py", BROKEN + "# the person keeps typing\n")
    cancelled = await editor.wait_event(
        lambda e: e["event"]["type"] == "auto_repair" and e["event"]["phase"] == "cancelled"
    )
    assert "edited" in cancelled["event"]["reason"]
    end = await editor.wait_event(lambda e: e["event"]["type"] == "run_end")
    assert end["event"]["status"] == "aborted"
    editor.type("app.py", BROKEN)
    editor.save("app.py")  # the same errors again
    skipped = await editor.wait_event(
        lambda e: e["event"]["type"] == "auto_repair" and e["event"]["phase"] == "skipped"
    )
    assert "already tried" in skipped["event"]["reason"]


async def test_auto_repair_is_off_by_default(editor: Editor, tmp_path: Path) -> None:
    write_script(tmp_path, [{"text": "hello"}])
    editor.open("app.py")
    editor.type("app.py", BROKEN)
    editor.save("app.py")
    result = await prompt(editor, text="hi")  # after the save was handled
    assert result["status"] == "completed"
    # The witness: switch auto-repair on and save another broken file. Every
    # save waits the same debounce, so a repair of app.py, had its save
    # scheduled one, would have reported before this repair finishes.
    (editor.root / "other.py").write_text(BROKEN)
    editor.open("other.py")
    await enable_auto_repair(editor, tmp_path)
    editor.save("other.py")
    finished = await editor.wait_event(
        lambda e: e["event"]["type"] == "auto_repair" and e["event"]["phase"] == "finished"
    )
    assert finished["event"]["status"] == "completed"
    repairs = [
        (e["event"]["phase"], e["event"]["uri"])
        for e in editor.events
        if e["event"]["type"] == "auto_repair"
    ]
    other = editor.uri("other.py")
    assert repairs == [("started", other), ("finished", other)]


async def test_plan_mode_streams_plan_events_and_completes(editor: Editor, tmp_path: Path) -> None:
    write_script(
        tmp_path,
        [
            {
                "expect": {
                    "tools_include": ["submit_plan"],
                    "tools_exclude": ["read_file"],
                    "tool_choice": "required",
                    "system_contains": "- `read_file`:",
                },
                "tool_calls": [
                    {
                        "name": "submit_plan",
                        "arguments": {
                            "steps": [
                                {"id": "s1", "description": "read app.py"},
                                {"id": "s2", "description": "explain greet"},
                            ]
                        },
                    }
                ],
            },
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
            {
                "tool_calls": [
                    {
                        "name": "complete_step",
                        "arguments": {"step_id": "s1", "success": True, "summary": "read it"},
                    }
                ]
            },
            {"tool_calls": [{"name": "grep", "arguments": {"pattern": "def greet"}}]},
            {
                "tool_calls": [
                    {
                        "name": "complete_step",
                        "arguments": {
                            "step_id": "s2",
                            "success": True,
                            "summary": "greet says hello",
                        },
                    }
                ]
            },
            {"text": "greet() returns a greeting."},
        ],
    )
    result = await prompt(editor, text="explain greet", mode="plan")
    assert result["status"] == "completed", result.get("error")
    assert result["text"] == "greet() returns a greeting."
    session_id = result["sessionId"]
    states = [
        e["event"]["state"]
        for e in editor.events
        if e["sessionId"] == session_id and e["event"]["type"] == "plan_state"
    ]
    assert states == ["planning", "executing", "summarizing", "completed"]
    last_plan = [e["event"] for e in editor.events if e["event"]["type"] == "plan_updated"][-1]
    assert [s["status"] for s in last_plan["steps"]] == ["done", "done"]
    seqs = [e["seq"] for e in editor.events if e["sessionId"] == session_id]
    assert seqs == list(range(1, len(seqs) + 1))


async def test_the_task_tool_forwards_subagent_activity(editor: Editor, tmp_path: Path) -> None:
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "task",
                        "arguments": {"description": "look around", "prompt": "list the files"},
                    }
                ]
            },
            {
                # Read-only by default; task too while harness.subagentMaxDepth
                # (default 2) allows a child of the child.
                "expect": {"tools_exclude": ["edit_file"], "tools_include": ["task"]},
                "tool_calls": [{"name": "list_dir", "arguments": {}}],
            },
            {"text": "app.py and notes.txt"},
            {
                "expect": {"last_message_contains": "app.py and notes.txt"},
                "text": "The project has two files.",
            },
        ],
    )
    result = await prompt(editor, text="what is in the project?")
    assert result["status"] == "completed", result.get("error")
    activity = [e["event"] for e in editor.events if e["event"]["type"] == "subagent_activity"]
    assert activity and {a["name"] for a in activity} == {"look around"}
    assert "tool_call_start" in [a["event"]["type"] for a in activity]
    # The child's text reaches the panel's box (joined deltas, then its message_end).
    deltas = [a["event"]["delta"] for a in activity if a["event"]["type"] == "message_delta"]
    assert "".join(deltas) == "app.py and notes.txt"


async def test_a_client_without_rein_save_documents_still_gets_its_edits(
    editor: Editor, tmp_path: Path
) -> None:
    editor.client.protocol.fm.features.pop("rein/saveDocuments")
    editor.client.report_server_error = lambda error, source: None  # the expected MethodNotFound
    editor.open("app.py")
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {"path": "app.py", "old_string": "hello", "new_string": "hi"},
                    }
                ]
            },
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {"path": "app.py", "old_string": "hi", "new_string": "hey"},
                    }
                ]
            },
            {"text": "done"},
        ],
    )
    result = await prompt(editor, text="greet")
    assert result["status"] == "completed", result.get("error")
    assert "hey {name}" in editor.docs["app.py"][1]
    assert editor.saved == []


async def test_a_huge_unknown_session_id_is_refused_with_a_bounded_message(editor: Editor) -> None:
    with pytest.raises(JsonRpcException) as info:
        await editor.client.protocol.send_request_async(
            "rein/session", {"sessionId": "x" * 100_000}
        )
    assert info.value.code == -32602
    assert "no session" in str(info.value) and len(str(info.value)) < 300
