"""The review's safety findings on Claude Code-style hooks, each a real
session with real hook commands: a changed script of an allowed workspace
hook asks again; what a hook reads and says is redacted; a hook's ``ask``
is never answered by a kept rule; an embedder's own hooks always run; a
hook's time limit is bounded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from rein.bring.hook_config import HookEntry
from rein.bring.hook_session import attach_hooks
from rein.bring.hook_trust import HookTrustRequest
from rein.config import HookCommand, load_config
from rein.harness.events import Event, HookActivity
from rein.harness.hooks import Block, Permit, PromptVerdict, StopInfo
from rein.harness.messages import ToolResultMessage, UserMessage
from rein.harness.ports import ApprovalRule
from rein.session import SessionSpec
from rein.session.builder import build_session
from rein.tools.approval_rules import RuleBook
from tests.bring.test_hooks_session import _command, _prompt, _session, _settings
from tests.fakes.approvals import FakeApprover
from tests.fakes.hooks import FakeHookTrust
from tests.fakes.models import FunctionModel, assistant, call
from tests.fakes.session import fake_session_ports

KEY = "sk-ant-api03-" + "A" * 90


async def test_a_changed_script_of_an_allowed_hook_asks_again_before_it_runs(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    script = root / ".claude" / "hooks" / "ctx.sh"
    script.parent.mkdir(parents=True)
    script.write_text("echo benign\n")
    helper = root / "tools" / "check.sh"  # named by the command, outside .claude/hooks
    helper.parent.mkdir()
    helper.write_text("true\n")
    command = 'bash "$CLAUDE_PROJECT_DIR/.claude/hooks/ctx.sh"; bash tools/check.sh'
    _settings(root, _command("UserPromptSubmit", command))
    model = FunctionModel(lambda request: assistant("ok"))
    trust = FakeHookTrust(answer=True)
    session, _seen = _session(tmp_path, model, trust)
    await _prompt(session)
    await _prompt(session)
    assert len(trust.asked) == 1  # allowed once, remembered
    assert "files of the workspace: .claude/hooks/ctx.sh, tools/check.sh" in trust.asked[0].detail

    pwned = tmp_path / "pwned"
    script.write_text(f"touch {pwned}; echo changed\n")
    trust.answer = False
    await _prompt(session)
    assert len(trust.asked) == 2 and not pwned.exists()  # asked again; refused: not run

    helper.write_text(f"touch {pwned}\n")
    trust.answer = True
    await _prompt(session)
    assert len(trust.asked) == 3 and pwned.exists()  # the named file counts too

    # Changed between the check before the run and the hook's own run (the
    # model rewrote it mid-run): asked just before it runs.
    pwned.unlink()
    helper.write_text("true\n")
    script.write_text("echo benign\n")
    ran_at: list[int] = []

    def reply(request: object) -> object:
        if not ran_at:
            ran_at.append(len(trust.asked))
            script.write_text(f"touch {pwned}\n")
            trust.answer = False
            return assistant("", call("read_file", path="notes.txt"))
        return assistant("done")

    _settings(root, {**_command("UserPromptSubmit", command), **_command("PostToolUse", command)})
    session2, _ = _session(tmp_path, FunctionModel(reply), trust, files={"notes.txt": "x"})
    await _prompt(session2)
    # Asked at the start (new entry), then again for the changed script, refused: not run.
    assert len(trust.asked) == ran_at[0] + 1 and not pwned.exists()


async def test_what_hooks_read_and_say_is_redacted(tmp_path: Path) -> None:
    seen_input = tmp_path / "seen.json"
    _settings(
        tmp_path / "home",
        {
            **_command("PostToolUse", f"cat > {seen_input}", "Read"),
            **_command("UserPromptSubmit", f"echo 'cfg: {KEY}'; echo 'err {KEY}' >&2; exit 1"),
            **_command("SessionStart", f"echo 'start: {KEY}'"),
        },
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    turns = iter([assistant("", call("read_file", "c1", path="notes.txt"))])
    model = FunctionModel(lambda request: next(turns, assistant("done")))
    ports = fake_session_ports(ws, model)
    ports.workspace.files["notes.txt"] = f"key = {KEY}\n"
    ports.hooks = FakeHookTrust(answer=False)
    ports.home = tmp_path / "home"
    session = build_session(load_config({}), ports, SessionSpec())
    events: list[Event] = []
    session.subscribe(events.append)
    await _prompt(session)
    hook_input = json.loads(seen_input.read_text())
    assert KEY not in json.dumps(hook_input) and "notes.txt" in json.dumps(hook_input)
    for request in model.requests:
        assert not any(KEY in str(m.content) for m in request.messages)
    users = [m.content for m in model.requests[0].messages if isinstance(m, UserMessage)]
    assert any("start: " in u for u in users)  # the context arrived, redacted
    hook_events = [e for e in events if isinstance(e, HookActivity)]
    assert hook_events and not any(KEY in e.message for e in hook_events)


async def test_a_hook_s_ask_is_not_answered_by_a_kept_rule(tmp_path: Path) -> None:
    ask = (
        "import json; print(json.dumps({'hookSpecificOutput': "
        "{'permissionDecision': 'ask', 'permissionDecisionReason': 'look'}}))"
    )
    _settings(tmp_path / "home", _command("PreToolUse", f'{sys.executable} -c "{ask}"', "Bash"))
    (tmp_path / "ws").mkdir()
    turns = iter([assistant("", call("run_command", "c1", command="git --version"))])
    model = FunctionModel(lambda request: next(turns, assistant("done")))
    approver = FakeApprover(answer=False)
    ports = fake_session_ports(tmp_path / "ws", model)
    ports.hooks = FakeHookTrust(answer=False)
    ports.home = tmp_path / "home"
    ports.approver = lambda _id: approver
    book = RuleBook(root=str(tmp_path / "ws"))
    await book.remember("session", [ApprovalRule("command", "git --version")])
    ports.approval_rules = lambda _id: book
    session = build_session(load_config({"approval": {"command": "ask"}}), ports, SessionSpec())
    await _prompt(session)
    [request] = approver.requests
    assert request.subject == "git --version" and "look" in request.detail
    [result] = [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert result.is_error and "declined" in result.content


async def test_an_embedder_s_own_hooks_always_run_and_the_stricter_answer_wins(
    tmp_path: Path,
) -> None:
    allow = (
        "import json; print(json.dumps({'hookSpecificOutput': {'permissionDecision': 'allow'}}))"
    )
    _settings(
        tmp_path / "home",
        {
            **_command("PreToolUse", f'{sys.executable} -c "{allow}"', "Bash"),
            **_command("UserPromptSubmit", "echo from-claude"),
            **_command("Stop", "true"),
        },
    )
    (tmp_path / "ws").mkdir()
    turns = iter(
        [
            assistant("", call("run_command", "c1", command="echo one")),
            assistant("", call("run_command", "c2", command="echo two")),
        ]
    )
    model = FunctionModel(lambda request: next(turns, assistant("done")))
    approver = FakeApprover(answer=False)
    ports = fake_session_ports(tmp_path / "ws", model)
    ports.approver = lambda _id: approver
    config = load_config({"approval": {"command": "allow"}})
    session = build_session(config, ports, SessionSpec())
    stops: list[StopInfo] = []

    def before(call_: object, args: object) -> Block | Permit | None:
        command = getattr(args, "command", "")
        return Block("embedder says no") if command == "echo one" else Permit("ask", "embedder")

    def stop(info: StopInfo) -> str | None:
        stops.append(info)
        return "once more" if not stops[:-1] else None

    hooks = session.agent.hooks
    hooks.before_tool_call = before
    hooks.on_user_prompt = lambda prompt: PromptVerdict(context="from-embedder")
    hooks.on_stop = stop
    # The embedder's hooks are set first; the Claude hooks are attached after.
    attach_hooks(session, tmp_path / "ws", config, FakeHookTrust(answer=False), tmp_path / "home")
    await _prompt(session)
    results = [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert "embedder says no" in results[0].content  # Block wins over the hook's allow
    [request] = approver.requests  # ask wins over allow: the person was asked about "two"
    assert request.subject == "echo two" and results[1].is_error
    users = [m.content for m in model.requests[0].messages if isinstance(m, UserMessage)]
    assert any("from-claude" in u and "from-embedder" in u for u in users)
    assert len(stops) == 2  # the embedder's on_stop ran and kept the run going once


def test_a_hook_s_time_limit_is_bounded_and_shown_when_asked(tmp_path: Path) -> None:
    for bad in (float("inf"), float("nan"), 3601):
        with pytest.raises(ValidationError, match="timeout"):
            HookCommand.model_validate({"type": "command", "command": "x", "timeout": bad})
    with pytest.raises(ValidationError, match="timeout"):
        HookCommand.model_validate_json('{"type": "command", "command": "x", "timeout": Infinity}')
    entry = HookEntry("Stop", "", "make lint", 90, ".claude/settings.json", "workspace")
    assert "time limit 90 s" in HookTrustRequest(tmp_path, (entry,)).detail


def test_tests_never_read_the_person_s_home_folder(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # Their own ~/.claude hooks would run in every session a test builds.
    assert Path.home().is_relative_to(tmp_path_factory.getbasetemp())
    assert not (Path.home() / ".claude").exists()


async def test_post_tool_use_only_after_success_and_continue_false_wins_over_deny(
    tmp_path: Path,
) -> None:
    post = tmp_path / "post"
    both = json.dumps(
        {
            "continue": False,
            "stopReason": "HALT",
            "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"},
        }
    )
    _settings(
        tmp_path / "home",
        {
            **_command("PostToolUse", f"cat >> {post}; echo >> {post}", "Read"),
            **_command("PreToolUse", f"echo '{both}'", "Bash"),
        },
    )
    (tmp_path / "ws").mkdir()
    turns = iter(
        [
            assistant("", call("read_file", "c1", path="missing.txt")),
            assistant("", call("read_file", "c2", path="here.txt")),
            assistant("", call("run_command", "c3", command="ls")),
        ]
    )
    model = FunctionModel(lambda request: next(turns, assistant("never")))
    session, seen = _session(tmp_path, model, FakeHookTrust(answer=False), files={"here.txt": "hi"})
    result = await _prompt(session)
    # Only the read that succeeded ran PostToolUse.
    [ran] = [json.loads(line) for line in post.read_text().splitlines() if line]
    assert ran["tool_use_id"] == "c2"
    # continue: false with a deny: the run ends (not only the call).
    assert result.status == "aborted" and "HALT" in (result.error or "")
    assert [(e.event, e.outcome) for e in seen] == [("PreToolUse", "blocked")]
    assert "stopped the run: HALT" in seen[0].message


async def test_session_start_context_waits_for_the_first_prompt_not_blocked(
    tmp_path: Path,
) -> None:
    gate = "import json, sys; sys.exit(2 if json.load(sys.stdin)['prompt'] == 'bad' else 0)"
    _settings(
        tmp_path / "home",
        {
            **_command("SessionStart", "echo START-CTX"),
            **_command("UserPromptSubmit", f'{sys.executable} -c "{gate}"'),
        },
    )
    (tmp_path / "ws").mkdir()
    model = FunctionModel(lambda request: assistant("ok"))
    session, _seen = _session(tmp_path, model, FakeHookTrust(answer=False))
    assert (await _prompt(session, "bad")).status == "failed"
    assert (await _prompt(session, "good")).status == "completed"
    [request] = model.requests
    users = [m.content for m in request.messages if isinstance(m, UserMessage)]
    assert users == ["good", "START-CTX"]
