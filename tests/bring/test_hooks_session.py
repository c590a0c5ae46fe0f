"""Claude Code-style hooks in a real session (``build_session``) with real
hook commands: a workspace's hooks run only once the person allowed them,
remembered by content (a changed hook asks again); the person's own hooks
(``~/.claude``) run without asking; a hook over its time limit is stopped
and reported; Stop hooks are bounded; PostToolUse context reaches the model;
an invalid entry is reported, never dropped silently."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rein.config import ReinConfig, load_config
from rein.harness.events import Event, HookActivity
from rein.harness.messages import ToolResultMessage, UserMessage
from rein.harness.ports import ModelRequest
from rein.session import SessionSpec
from rein.session.builder import build_session
from rein.session.session import Session
from tests.fakes.approvals import FakeApprover
from tests.fakes.hooks import FakeHookTrust
from tests.fakes.models import FunctionModel, assistant, call
from tests.fakes.session import fake_session_ports


def _settings(root: Path, hooks: dict[str, Any], name: str = "settings.json") -> None:
    (root / ".claude").mkdir(parents=True, exist_ok=True)
    (root / ".claude" / name).write_text(json.dumps({"hooks": hooks}))


def _command(event: str, command: str, matcher: str = "", **extra: Any) -> dict[str, Any]:
    return {
        event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command, **extra}]}]
    }


def _session(
    tmp_path: Path,
    model: FunctionModel,
    trust: FakeHookTrust,
    config: ReinConfig | None = None,
    files: dict[str, str] | None = None,
) -> tuple[Session, list[HookActivity]]:
    ports = fake_session_ports(tmp_path / "ws", model)
    ports.workspace.files.update(files or {})
    ports.hooks = trust
    ports.home = tmp_path / "home"
    session = build_session(config or ReinConfig(), ports, SessionSpec())
    seen: list[HookActivity] = []

    def listen(event: Event) -> None:
        if isinstance(event, HookActivity):
            seen.append(event)

    session.subscribe(listen)
    return session, seen


async def _prompt(session: Session, text: str = "go") -> Any:
    return await session.run(lambda: session.agent.prompt(text))


async def test_workspace_hooks_run_once_allowed_and_a_changed_hook_asks_again(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    marker = tmp_path / "ran"
    _settings(root, _command("UserPromptSubmit", f"echo ran >> {marker}"))
    model = FunctionModel(lambda request: assistant("ok"))
    trust = FakeHookTrust(answer=False)
    session, seen = _session(tmp_path, model, trust)

    assert (await _prompt(session)).status == "completed"
    assert not marker.exists()  # refused: nothing of the workspace ran
    [question] = trust.asked
    assert f"echo ran >> {marker}" in question.detail
    assert [(e.outcome, e.source) for e in seen] == [("skipped", ".claude/settings.json")]
    await _prompt(session)
    assert len(trust.asked) == 1  # refused once: not asked again for the same hooks

    trust.answer = True
    _settings(root, _command("UserPromptSubmit", f"echo ran-again >> {marker}"))
    await _prompt(session)
    assert len(trust.asked) == 2  # changed: asked again, allowed
    assert marker.read_text() == "ran-again\n"
    await _prompt(session)
    assert len(trust.asked) == 2  # remembered by content
    assert marker.read_text() == "ran-again\n" * 2

    # Nobody to ask: they do not run, and the event says why.
    trust.answer = None
    _settings(root, _command("UserPromptSubmit", f"echo third >> {marker}"))
    await _prompt(session)
    assert "third" not in marker.read_text()
    assert seen[-1].outcome == "skipped" and "nobody to ask" in seen[-1].message


async def test_the_person_s_own_hooks_run_without_asking_and_time_limits_hold(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    _settings(
        home,
        {
            **_command("UserPromptSubmit", "echo from-home"),
            **_command("SessionStart", "sleep 30", timeout=0.3),
        },
    )
    (tmp_path / "ws").mkdir()
    model = FunctionModel(lambda request: assistant("ok"))
    trust = FakeHookTrust(answer=False)
    session, seen = _session(tmp_path, model, trust)
    assert (await _prompt(session)).status == "completed"
    assert trust.asked == []
    [request] = model.requests
    users = [m.content for m in request.messages if isinstance(m, UserMessage)]
    assert users == ["go", "from-home"]
    assert [(e.event, e.outcome) for e in seen] == [
        ("SessionStart", "failed"),
        ("UserPromptSubmit", "context"),
    ]
    assert "timed out after 0.3 s" in seen[0].message


async def test_stop_hooks_are_bounded_and_post_tool_use_context_reaches_the_model(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    context = {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "LINT OK"}
    }
    _settings(
        root,
        {
            **_command(
                "Stop",
                f'{sys.executable} -c "print(\'{{\\"decision\\": \\"block\\", \\"reason\\": \\"more\\"}}\')"',
            ),
            **_command("PostToolUse", f"echo '{json.dumps(context)}'", matcher="Read"),
            "Later": [],
        },
    )
    turns = iter([assistant("", call("read_file", path="src/a.py"))])

    def reply(request: ModelRequest) -> Any:
        return next(turns, assistant("done"))

    model = FunctionModel(reply)
    config = load_config({"hookOptions": {"maxStopContinuations": 2}})
    session, seen = _session(
        tmp_path, model, FakeHookTrust(answer=True), config, {"src/a.py": "x = 1\n"}
    )
    assert (await _prompt(session)).status == "completed"
    # The tool turn, the answer, then two continuations: the bound.
    assert len(model.requests) == 4
    result = next(m for m in model.requests[1].messages if isinstance(m, ToolResultMessage))
    assert "LINT OK" in result.content
    assert [m.content for m in model.requests[3].messages if isinstance(m, UserMessage)][-2:] == [
        "more",
        "more",
    ]
    outcomes = [(e.event, e.outcome) for e in seen]
    assert outcomes == [
        ("(configuration)", "failed"),
        ("PostToolUse", "context"),
        ("Stop", "continued"),
        ("Stop", "continued"),
    ]
    assert "hooks.Later" in seen[0].message


async def _commands_under(
    tmp_path: Path, policy: str, command: str
) -> tuple[FakeApprover, list[ToolResultMessage]]:
    turns = iter([assistant("", call("run_command", "c1", command=command))])
    model = FunctionModel(lambda request: next(turns, assistant("done")))
    approver = FakeApprover(answer=False)
    ports = fake_session_ports(tmp_path / "ws", model)
    ports.hooks = FakeHookTrust(answer=False)
    ports.home = tmp_path / "home"
    ports.approver = lambda _id: approver
    session = build_session(load_config({"approval": {"command": policy}}), ports, SessionSpec())
    assert (await _prompt(session)).status == "completed"
    results = [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]
    return approver, results


async def test_ask_routes_to_rein_s_approval_and_allow_skips_its_question(tmp_path: Path) -> None:
    # The person's own hook: "ask" for git, "allow" for anything else.
    decide = (
        "import json, sys; c = json.load(sys.stdin)['tool_input']['command']; "
        "d = 'ask' if c.startswith('git') else 'allow'; "
        "print(json.dumps({'hookSpecificOutput': {'permissionDecision': d, "
        "'permissionDecisionReason': 'git needs a look'}}))"
    )
    notified = tmp_path / "notified"
    idle = {"matcher": "idle_prompt", "hooks": [{"type": "command", "command": "echo x > idle"}]}
    notify = _command("Notification", f"cat >> {notified}", "permission_prompt")
    _settings(
        tmp_path / "home",
        {
            **_command("PreToolUse", f'{sys.executable} -c "{decide}"', "Bash"),
            "Notification": [*notify["Notification"], idle],
        },
    )
    (tmp_path / "ws").mkdir()
    # Commands ask, but the hook allowed echo: nobody is asked, it runs.
    approver, [result] = await _commands_under(tmp_path, "ask", "echo hi")
    assert approver.requests == []
    assert "hi" in result.content and not result.is_error
    # Commands are allowed, but the hook asks about git: the person is asked (and refuses).
    approver, [result] = await _commands_under(tmp_path, "allow", "git --version")
    [request] = approver.requests
    assert request.subject == "git --version"
    assert "git needs a look" in request.detail
    assert result.is_error and "declined" in result.content
    # Defect: under the default "sandboxed" the sandbox ran it without a
    # question, as if the hook had not asked.
    approver, [result] = await _commands_under(tmp_path, "sandboxed", "git --version")
    [sandboxed] = approver.requests
    assert sandboxed.subject == "git --version" and "git needs a look" in sandboxed.detail
    assert result.is_error and "declined" in result.content
    # The Notification hook heard of the questions, the first before it was asked.
    note, _end = json.JSONDecoder().raw_decode(notified.read_text())
    assert note["hook_event_name"] == "Notification"
    assert note["message"] == f"Rein needs your permission: {request.title}"
    assert note["notification_type"] == "permission_prompt"
    assert not (tmp_path / "ws" / "idle").exists()  # its matcher selects the other kind


async def test_a_subagent_s_end_runs_subagent_stop_not_stop(tmp_path: Path) -> None:
    again = "import json, sys; d = json.load(sys.stdin); print('' if d['stop_hook_active'] else json.dumps({'decision': 'block', 'reason': 'CHILD-AGAIN'}))"
    _settings(
        tmp_path / "home",
        {
            **_command("SubagentStop", f'{sys.executable} -c "{again}"'),
            **_command("Stop", "echo parent-stop-ran >&2; exit 1"),
        },
    )
    (tmp_path / "ws").mkdir()

    def reply(request: ModelRequest) -> Any:
        texts = [m.content for m in request.messages if isinstance(m, UserMessage)]
        if "SUBTASK" in texts[0]:
            return assistant(f"child answer {len(texts)}")
        if any(isinstance(m, ToolResultMessage) for m in request.messages):
            return assistant("parent done")
        return assistant("", call("task", description="look", prompt="SUBTASK: look around"))

    model = FunctionModel(reply)
    session, seen = _session(tmp_path, model, FakeHookTrust(answer=False))
    assert (await _prompt(session)).status == "completed"
    child = [r for r in model.requests if "SUBTASK" in str(r.messages[0].content)]
    assert len(child) == 2  # kept going once by SubagentStop
    assert child[1].messages[-1].content == "CHILD-AGAIN"
    assert [(e.event, e.outcome) for e in seen] == [
        ("SubagentStop", "continued"),
        ("Stop", "failed"),  # the parent's own Stop hook ran once, at the parent's end
    ]


async def test_continue_false_ends_the_run_with_the_stop_reason(tmp_path: Path) -> None:
    halt = json.dumps({"continue": False, "stopReason": "LINT FAILED HARD"})
    _settings(tmp_path / "home", _command("PostToolUse", f"echo '{halt}'", "Read"))
    (tmp_path / "ws").mkdir()
    turns = iter([assistant("", call("read_file", path="a.py"))])
    model = FunctionModel(lambda request: next(turns, assistant("never")))
    session, seen = _session(tmp_path, model, FakeHookTrust(answer=False), files={"a.py": "x"})
    result = await _prompt(session)
    assert result.status == "aborted"
    assert "LINT FAILED HARD" in (result.error or "")
    assert [(e.event, e.outcome, e.tool) for e in seen] == [("PostToolUse", "blocked", "Read")]


async def test_a_hook_that_cannot_block_is_reported_and_session_start_context_is_shown(
    tmp_path: Path,
) -> None:
    # Defect: a SessionStart (or PreCompact, Notification) hook's exit 2
    # was dropped with no word, and SessionStart's context was added with no
    # hook event, unlike every other hook's.
    context = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "CTX"}}
    )
    _settings(
        tmp_path / "home",
        {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "echo NO-START >&2; exit 2"}]},
                {"hooks": [{"type": "command", "command": f"echo '{context}'"}]},
            ],
            **_command("PreCompact", "echo NO-COMPACT >&2; exit 2"),
        },
    )
    (tmp_path / "ws").mkdir()
    model = FunctionModel(lambda request: assistant("ok"))
    session, seen = _session(tmp_path, model, FakeHookTrust(answer=False))
    assert (await _prompt(session)).status == "completed"
    users = [m.content for m in model.requests[-1].messages if isinstance(m, UserMessage)]
    assert users == ["go", "CTX"]
    session.agent.context_window_cap = 3000
    await _prompt(session, "x" * 40_000)  # over the window: the relief runs
    said = [(e.event, e.outcome, e.message) for e in seen]
    assert said == [
        ("SessionStart", "failed", "a SessionStart hook cannot block; it said: NO-START"),
        ("SessionStart", "context", "CTX"),
        ("PreCompact", "failed", "a PreCompact hook cannot block; it said: NO-COMPACT"),
    ]


async def test_a_guard_with_on_failure_block_fails_closed(tmp_path: Path) -> None:
    # Defect: Claude Code's onFailure (and statusMessage) made the entry
    # invalid, so the very guard meant to fail closed did not run at all.
    broken = {"type": "command", "command": "exit 1", "statusMessage": "Checking..."}
    slow = {"type": "command", "command": "sleep 30", "timeout": 0.3}
    _settings(
        tmp_path / "home",
        {
            "PreToolUse": [
                {"matcher": "Read", "hooks": [{**broken, "onFailure": "block"}]},
                {"matcher": "Grep", "hooks": [{**slow, "onFailure": "block"}]},
                {"matcher": "Glob", "hooks": [broken]},  # onFailure continue: fails open
            ]
        },
    )
    (tmp_path / "ws").mkdir()
    calls = [
        call("read_file", "c1", path="a.py"),
        call("grep", "c2", pattern="x"),
        call("glob", "c3", pattern="*.py"),
    ]
    turns = iter([assistant("", *calls)])
    model = FunctionModel(lambda request: next(turns, assistant("done")))
    session, seen = _session(tmp_path, model, FakeHookTrust(answer=False), files={"a.py": "x"})
    assert (await _prompt(session)).status == "completed"
    results = {
        m.tool_call_id: m.content
        for m in model.requests[-1].messages
        if isinstance(m, ToolResultMessage)
    }
    assert results["c1"].startswith("Tool call blocked: PreToolUse hook (~/.claude/settings.json)")
    assert "it failed (exit 1) and its onFailure is block" in results["c1"]
    assert "timed out after 0.3 s" in results["c2"] and "onFailure is block" in results["c2"]
    # Without it a failure of the guard lets the call go, as in Claude Code.
    assert not results["c3"].startswith("Tool call blocked")
    assert sorted((e.tool or "", e.outcome) for e in seen) == [
        ("Glob", "failed"),
        ("Grep", "blocked"),
        ("Read", "blocked"),
    ]


async def test_pre_compact_hooks_hear_of_a_compaction_first(tmp_path: Path) -> None:
    heard = tmp_path / "heard"
    _settings(tmp_path / "home", _command("PreCompact", f"cat > {heard}", "auto"))
    (tmp_path / "ws").mkdir()
    model = FunctionModel(lambda request: assistant("ok"))
    session, _seen = _session(tmp_path, model, FakeHookTrust(answer=False))
    session.agent.context_window_cap = 3000
    await _prompt(session, "x" * 40_000)  # over the window: the relief runs
    data = json.loads(heard.read_text())
    assert (data["hook_event_name"], data["trigger"]) == ("PreCompact", "auto")


async def test_a_pre_tool_use_rewrite_blocks_the_call_rather_than_run_the_original(
    tmp_path: Path,
) -> None:
    # Defect: Claude Code runs a call with a PreToolUse hook's updatedInput;
    # Rein ignored it silently and ran the original command.
    rewrite = (
        "import json, sys; c = json.load(sys.stdin)['tool_input']['command']; "
        "new = c.replace('ORIGINAL', 'REWRITTEN'); "
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', "
        "'permissionDecision': 'allow', 'updatedInput': {'command': new}}}))"
    )
    _settings(tmp_path / "home", _command("PreToolUse", f'{sys.executable} -c "{rewrite}"', "Bash"))
    (tmp_path / "ws").mkdir()
    turns = iter(
        [
            assistant("", call("run_command", "c1", command="echo ORIGINAL > out")),
            assistant("", call("run_command", "c2", command="echo same > same")),
        ]
    )
    model = FunctionModel(lambda request: next(turns, assistant("done")))
    session, seen = _session(tmp_path, model, FakeHookTrust(answer=False))
    assert (await _prompt(session)).status == "completed"
    first, second = [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert first.is_error
    assert first.content == (
        "Tool call blocked: PreToolUse hook (~/.claude/settings.json): it changes the call's "
        'input (command: {"command": "echo REWRITTEN > out"}) with updatedInput, which Rein '
        "does not apply, so the call was not run"
    )
    assert not (tmp_path / "ws" / "out").exists()
    # An updatedInput that repeats the input changes nothing: the call runs.
    assert not second.is_error
    assert (tmp_path / "ws" / "same").read_text() == "same\n"
    assert [(e.event, e.outcome, e.tool) for e in seen] == [("PreToolUse", "blocked", "Bash")]


async def test_a_pre_tool_use_answer_too_long_to_read_blocks_the_call(tmp_path: Path) -> None:
    # Defect: a hook's stdout was cut at 20,000 characters, so a longer JSON
    # deny (a reason quoting a big diff) no longer parsed, was read as plain
    # text, and the call ran: an answer Rein did not read passed for "allow".
    deny = (
        "import json; print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', "
        "'permissionDecision': 'deny', 'permissionDecisionReason': 'no ' + 'x' * SIZE}}))"
    )
    long_deny = deny.replace("SIZE", "30_000")
    _settings(
        tmp_path / "home", _command("PreToolUse", f'{sys.executable} -c "{long_deny}"', "Bash")
    )
    (tmp_path / "ws").mkdir()
    turns = iter([assistant("", call("run_command", "c1", command="echo ran > out"))])
    model = FunctionModel(lambda request: next(turns, assistant("done")))
    session, _seen = _session(tmp_path, model, FakeHookTrust(answer=False))
    assert (await _prompt(session)).status == "completed"
    (result,) = [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert result.is_error
    assert result.content.startswith(
        "Tool call blocked: PreToolUse hook (~/.claude/settings.json): no xxx"
    )
    assert not (tmp_path / "ws" / "out").exists()
    # Past what Rein reads of a hook's stdout (1 MiB), the answer is unread:
    # the call is blocked, saying so, never run.
    huge = deny.replace("SIZE", "1_100_000")
    _settings(tmp_path / "home", _command("PreToolUse", f'{sys.executable} -c "{huge}"', "Bash"))
    turns = iter([assistant("", call("run_command", "c2", command="echo ran > out2"))])
    model = FunctionModel(lambda request: next(turns, assistant("done")))
    session, _seen = _session(tmp_path, model, FakeHookTrust(answer=False))
    assert (await _prompt(session)).status == "completed"
    (result,) = [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert result.is_error
    assert result.content == (
        "Tool call blocked: PreToolUse hook (~/.claude/settings.json): its output was over "
        "1,048,576 bytes and was not read, so the call was not run"
    )
    assert not (tmp_path / "ws" / "out2").exists()


async def test_a_sandboxed_hook_cannot_read_rein_s_storage_folder(tmp_path: Path) -> None:
    # Defect: the hooks' sandbox hid Rein's storage only at its default
    # place; with a storage folder set (`--storage`, VS Code's storagePath)
    # a hook could read every session's transcript.
    store = tmp_path / "ws" / "store"
    store.mkdir(parents=True)
    (store / "sessions.txt").write_text("TRANSCRIPT\n")
    hook = f"cat {store / 'sessions.txt'} >&2; echo read-nothing >&2; exit 2"
    _settings(tmp_path / "home", _command("PreToolUse", hook, "Bash"))
    config = load_config({"sandbox": {"also": ["hooks"]}}, "test").model_copy(
        update={"storage_path": str(store)}
    )
    turns = iter([assistant("", call("run_command", "c1", command="echo hi"))])
    model = FunctionModel(lambda request: next(turns, assistant("done")))
    session, _seen = _session(tmp_path, model, FakeHookTrust(answer=False), config)
    assert (await _prompt(session)).status == "completed"
    (result,) = [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert result.is_error and "read-nothing" in result.content
    assert "TRANSCRIPT" not in result.content
