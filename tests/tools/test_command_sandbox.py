"""``run_command`` under ``approval.command: "sandboxed"`` (the default):
in the sandbox without asking; asked to leave it, asked every time with the
reason and never covered by a kept rule; no sandbox, asked every time with
why; a failure the sandbox may have caused gets its note. The sandbox is the
port's fake here; the real one is tested in tests/sandboxing and, escapes
and all, over ``rein run`` in tests/e2e/test_sandbox.py. A host the proxy refused
is named and asked about (the real proxy: tests/sandboxing/test_session_hosts.py)."""

from __future__ import annotations

from pathlib import Path

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.ports import ApprovalRule
from rein.harness.tools import ToolEnvironment
from rein.tools import ApprovalSettings, RunCommandTool, ToolSettings
from rein.tools.approval_rules import RuleBook
from rein.tools.registry import default_tools, tool_sections
from rein.tools.sandbox_hosts import MAX_HOSTS_ASKED
from tests.fakes.approvals import FakeApprover
from tests.fakes.sandbox import FakeSandbox
from tests.fakes.tools import ToolCallRecorder


def _calls(
    root: Path,
    sandbox: FakeSandbox | None,
    approver: FakeApprover | None = None,
    rules: RuleBook | None = None,
    command: str = "sandboxed",
) -> ToolCallRecorder:
    settings = ToolSettings(approval=ApprovalSettings.model_validate({"command": command}))
    env = ToolEnvironment(
        workspace=DiskWorkspace(root),
        approver=approver,
        approval_rules=rules,
        settings=settings,
        sandbox=sandbox,
    )
    return ToolCallRecorder(env)


async def test_a_sandboxed_command_runs_without_asking(root: Path) -> None:
    sandbox, approver = FakeSandbox(), FakeApprover(False)
    result = await _calls(root, sandbox, approver).run(
        RunCommandTool(), command='echo "in=$FAKE_SANDBOX" > ran.txt'
    )
    assert not result.is_error, result.content
    assert approver.requests == []
    assert (root / "ran.txt").read_text() == "in=1\n"
    assert sandbox.wrapped == [["bash", "-c", 'echo "in=$FAKE_SANDBOX" > ran.txt']]
    assert result.details["sandboxed"] is True


async def test_a_failure_the_sandbox_may_cause_gets_its_note(root: Path) -> None:
    sandbox = FakeSandbox(note="[The command ran in Rein's sandbox: ...]")
    calls = _calls(root, sandbox)
    failed = await calls.run(RunCommandTool(), command="echo nope >&2; exit 3")
    assert failed.is_error
    assert failed.content.endswith("[exit code 3]\n[The command ran in Rein's sandbox: ...]")
    assert sandbox.outputs == ["nope\n"]
    assert failed.details["sandbox_note"] is True
    ok = await calls.run(RunCommandTool(), command="true")
    assert not ok.is_error and "sandbox" not in ok.content and len(sandbox.outputs) == 1


async def test_leaving_the_sandbox_asks_every_time_with_the_reason_and_no_rule(
    root: Path,
) -> None:
    rules = RuleBook()
    await rules.remember("session", [ApprovalRule("command", "touch out.txt")])
    sandbox, approver = FakeSandbox(), FakeApprover(True)
    calls = _calls(root, sandbox, approver, rules)
    for _ in range(2):
        result = await calls.run(
            RunCommandTool(),
            command="touch out.txt",
            unsandboxed=True,
            reason="it writes to ~/.cache",
        )
        assert not result.is_error, result.content
        assert result.details["sandboxed"] is False
    assert len(approver.requests) == 2 and sandbox.wrapped == []
    request = approver.requests[0]
    assert request.title == "Run unsandboxed: touch out.txt"
    assert request.detail.startswith(
        "Outside the sandbox (your files and the network), because: it writes to ~/.cache"
    )
    # Never offered as an "always allow" rule, and the kept one does not apply.
    assert request.rules == () and request.prefix_rules == ()
    # The same command in the sandbox: the kept rule is not even needed.
    inside = await calls.run(RunCommandTool(), command="touch out.txt")
    assert not inside.is_error and len(approver.requests) == 2


async def test_leaving_the_sandbox_needs_a_reason(root: Path) -> None:
    approver = FakeApprover(True)
    result = await _calls(root, FakeSandbox(), approver).run(
        RunCommandTool(), command="touch x", unsandboxed=True
    )
    assert result.is_error and "give the `reason`" in result.content
    assert approver.requests == [] and not (root / "x").exists()


async def test_without_a_working_sandbox_every_command_asks_and_says_why(root: Path) -> None:
    approver = FakeApprover(False)
    sandbox = FakeSandbox(why_not="bubblewrap (bwrap) is not installed")
    result = await _calls(root, sandbox, approver).run(RunCommandTool(), command="touch x")
    assert result.is_error and "the person declined" in result.content
    (request,) = approver.requests
    assert request.title == "Run unsandboxed: touch x"
    assert request.detail.startswith("Not sandboxed: bubblewrap (bwrap) is not installed.")
    assert sandbox.wrapped == [] and not (root / "x").exists()


async def test_without_a_sandbox_kept_rules_do_not_skip_the_question(root: Path) -> None:
    # Issue 38 item 2: unsandboxed, asked every time; a kept rule never
    # answers, so none is offered to keep (it would never be consulted).
    rules = RuleBook()
    await rules.remember("session", [ApprovalRule("command", "git log *")])
    approver = FakeApprover(False)
    result = await _calls(root, FakeSandbox(why_not="no"), approver, rules).run(
        RunCommandTool(), command="git log -1"
    )
    assert result.is_error and "the person declined" in result.content
    (request,) = approver.requests
    assert request.rules == () and request.prefix_rules == ()


async def test_every_command_gets_the_sessions_tmpdir_and_the_removal_note(
    root: Path, tmp_path: Path
) -> None:
    temp = tmp_path / "session-temp"
    temp.mkdir()
    removed = "[The command created .git, which the sandbox protects; Rein moved it aside.]"
    sandbox = FakeSandbox(temp=str(temp), removed=removed)
    calls = _calls(root, sandbox, FakeApprover(True))
    inside = await calls.run(RunCommandTool(), command="echo $TMPDIR > in.txt")
    outside = await calls.run(
        RunCommandTool(), command="echo $TMPDIR > out.txt", unsandboxed=True, reason="r"
    )
    assert (root / "in.txt").read_text() == (root / "out.txt").read_text() == f"{temp}\n"
    assert inside.content.endswith(removed) and inside.details["sandbox_removed"] is True
    assert removed not in outside.content


async def test_ask_and_allow_ignore_the_sandbox(root: Path) -> None:
    sandbox = FakeSandbox()
    approver = FakeApprover(True)
    asked = await _calls(root, sandbox, approver, command="ask").run(
        RunCommandTool(), command="true"
    )
    allowed = await _calls(root, sandbox, approver, command="allow").run(
        RunCommandTool(), command="true", unsandboxed=True, reason="r"
    )
    assert not asked.is_error and not allowed.is_error
    assert len(approver.requests) == 1 and sandbox.wrapped == []


def test_the_prompt_speaks_of_the_sandbox_only_when_commands_run_in_it() -> None:
    def section(command: str) -> str:
        settings = ToolSettings(approval=ApprovalSettings.model_validate({"command": command}))
        return tool_sections(default_tools(settings))["run_command"]

    assert "`unsandboxed: true`" in section("sandboxed") and "$TMPDIR" in section("sandboxed")
    for command in ("ask", "allow"):
        assert "sandbox" not in section(command)


async def test_refused_hosts_are_named_and_asked_about_up_to_the_cap(root: Path) -> None:
    hosts = ["a.example", "b.example", "c.example", "d.example:8443"]
    sandbox, approver = FakeSandbox(), FakeApprover(True)
    # IP addresses in any spelling, and what is no host name, are never asked about.
    sandbox.refused = ["2130706433:8080", "127.1", "0x7f.1", "::1", "a b", *hosts, "10.0.0.1"]
    result = await _calls(root, sandbox, approver).run(RunCommandTool(), command="true")
    assert [r.title for r in approver.requests] == [
        f"Allow {h} for this session" for h in hosts[:MAX_HOSTS_ASKED]
    ]
    assert all(r.rules == () and r.prefix_rules == () for r in approver.requests)
    assert sandbox.allowed == hosts[:MAX_HOSTS_ASKED]
    assert result.details["sandbox_refused_hosts"] == hosts
    assert f"Rein's sandbox refused {', '.join(hosts)}" in result.content
    assert "The person was not asked about d.example:8443." in result.content
    assert "this session's run_command commands reach it" in approver.requests[0].detail

    nobody = FakeSandbox()
    nobody.refused = ["a.example"]
    alone = await _calls(root, nobody).run(RunCommandTool(), command="true")
    assert nobody.allowed == [] and "sandbox_allowed_hosts" not in alone.details
    assert "It was not allowed for this session (declined, or no one to ask)" in alone.content
