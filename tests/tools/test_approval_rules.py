"""Approvals that stick: parsed command lines, write globs, MCP rules, and
the approval check keeping what the person chose to remember."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.harness.ports import ApprovalAnswer, ApprovalRule
from rein.harness.tools import ToolEnvironment
from rein.headless.disk_workspace import DiskWorkspace
from rein.tools import ApprovalSettings, EditFileTool, RunCommandTool, ToolSettings, WriteFileTool
from rein.tools.approval_rules import (
    RuleBook,
    UnsafeCommand,
    command_allowed,
    rule_matches,
    split_command,
    suggest_rules,
    validate_pattern,
)
from tests.fakes import FakeApprover, ToolCallRecorder

# ------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("line", "commands"),
    [
        pytest.param("npm test", [["npm", "test"]], id="one"),
        pytest.param("npm test && git status", [["npm", "test"], ["git", "status"]], id="and"),
        pytest.param("make || echo failed", [["make"], ["echo", "failed"]], id="or"),
        pytest.param("ls; pwd", [["ls"], ["pwd"]], id="semicolon"),
        pytest.param("ls\npwd", [["ls"], ["pwd"]], id="newline"),
        pytest.param("grep -r x . | wc -l", [["grep", "-r", "x", "."], ["wc", "-l"]], id="pipe"),
        pytest.param(
            'echo "a && b; c | d"', [["echo", "a && b; c | d"]], id="separators-in-quotes"
        ),
        pytest.param("echo 'x;y'|cat", [["echo", "x;y"], ["cat"]], id="no-spaces"),
    ],
)
def test_a_command_line_splits_into_its_commands_quotes_respected(
    line: str, commands: list[list[str]]
) -> None:
    assert split_command(line) == commands


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("npm test > out.txt", id="redirect"),
        pytest.param("npm test 2>&1", id="redirect-fd"),
        pytest.param("cat < secrets", id="input"),
        pytest.param("echo $(rm -rf ~)", id="substitution"),
        pytest.param('echo "$(rm -rf ~)"', id="substitution-in-quotes"),
        pytest.param("echo `rm -rf ~`", id="backticks"),
        pytest.param("sleep 100 &", id="background"),
        pytest.param("(cd x && rm y)", id="subshell"),
        pytest.param("PATH=/tmp npm test", id="assignment"),
        pytest.param('echo "open', id="open-quote"),
        pytest.param("  ", id="empty"),
    ],
)
def test_a_line_rules_cannot_vouch_for_is_unsafe(line: str) -> None:
    with pytest.raises(UnsafeCommand):
        split_command(line)


def test_a_command_rule_is_a_prefix_of_words() -> None:
    assert command_allowed(["npm", "test", "--", "-k", "x"], ["npm test"])
    assert not command_allowed(["npm", "install"], ["npm test"])
    assert not command_allowed(["npm"], ["npm test"])
    assert not command_allowed(["npm-test"], ["npm"])  # words, not characters


@pytest.mark.parametrize(
    ("kind", "pattern", "subject", "matches"),
    [
        pytest.param("write", "src/**", "src/pkg/a.py", True, id="write-deep"),
        pytest.param("write", "src/*.py", "src/pkg/a.py", False, id="write-star-stays"),
        pytest.param("write", "*.md", "README.md", True, id="write-root"),
        pytest.param("write", "*.md", "docs/x.md", False, id="write-anchored"),
        pytest.param("mcp", "time", "time/now", True, id="mcp-server"),
        pytest.param("mcp", "time/now", "time/now", True, id="mcp-tool"),
        pytest.param("mcp", "time/now", "time/zone", False, id="mcp-other-tool"),
        pytest.param("mcp", "tim", "time/now", False, id="mcp-not-a-prefix"),
    ],
)
def test_write_globs_and_mcp_rules(kind: str, pattern: str, subject: str, matches: bool) -> None:
    assert rule_matches(kind, pattern, subject) is matches  # type: ignore[arg-type]


def test_suggested_rules_name_each_command_and_the_folder() -> None:
    assert suggest_rules("command", "npm test -- -x && python -m pytest -q | tee log") == (
        ApprovalRule("command", "npm test"),
        ApprovalRule("command", "python -m pytest"),
        ApprovalRule("command", "tee log"),
    )
    # No subcommand: the whole command, never the bare program.
    assert suggest_rules("command", "pytest -q tests") == (
        ApprovalRule("command", "pytest -q tests"),
    )
    assert suggest_rules("command", "rm x > y") == ()
    assert suggest_rules("write", "src/pkg/a.py") == (ApprovalRule("write", "src/pkg/**"),)
    assert suggest_rules("write", "a.py") == (ApprovalRule("write", "a.py"),)
    assert suggest_rules("mcp", "time/now") == (ApprovalRule("mcp", "time/now"),)


def test_a_pattern_is_validated_with_a_clear_reason() -> None:
    assert validate_pattern("command", " npm test ") == "npm test"
    with pytest.raises(ValueError, match="one command"):
        validate_pattern("command", "npm test && rm x")
    with pytest.raises(ValueError, match="workspace-relative"):
        validate_pattern("write", "../outside/**")
    with pytest.raises(ValueError, match="empty"):
        validate_pattern("mcp", " ")


# ----------------------------------------------------------- rule book


async def test_each_part_of_a_compound_command_must_be_allowed() -> None:
    book = RuleBook()
    await book.remember("session", [ApprovalRule("command", "npm test")])
    assert await book.uncovered("command", "npm test -- -k x") is None
    assert await book.uncovered("command", "npm test && rm -rf build") == (
        ApprovalRule("command", "rm -rf build"),
    )
    await book.remember("session", [ApprovalRule("command", "git status")])
    assert await book.uncovered("command", "git status; npm test | npm test") is None
    # A line rules cannot vouch for is never allowed, and offers no rule.
    assert await book.uncovered("command", "npm test > /etc/passwd") == ()


async def test_a_revoked_rule_no_longer_allows() -> None:
    book = RuleBook()
    await book.remember("session", [ApprovalRule("write", "src/**")])
    (rule,) = await book.rules()
    assert await book.uncovered("write", "src/a.py") is None
    assert await book.revoke(rule.id)
    assert await book.uncovered("write", "src/a.py") == (ApprovalRule("write", "src/**"),)
    assert not await book.revoke(rule.id)


async def test_remembering_for_the_workspace_needs_workspace_rules() -> None:
    with pytest.raises(ValueError, match="no workspace rules"):
        await RuleBook().remember("workspace", [ApprovalRule("mcp", "time")])


# ------------------------------------------------ the approval check


def _calls(root: Path, approver: FakeApprover, book: RuleBook) -> ToolCallRecorder:
    settings = ToolSettings(approval=ApprovalSettings(command="ask", write="ask"))
    env = ToolEnvironment(
        workspace=DiskWorkspace(root), approver=approver, settings=settings, approval_rules=book
    )
    return ToolCallRecorder(env)


async def test_always_allow_keeps_the_offered_rules_and_stops_asking(root: Path) -> None:
    book = RuleBook()
    approver = FakeApprover(ApprovalAnswer(approved=True, remember="session"))
    calls = _calls(root, approver, book)
    first = await calls.run(RunCommandTool(), command="echo one && touch ran.txt")
    assert not first.is_error, first.content
    (request,) = approver.requests
    assert request.rules == (
        ApprovalRule("command", "echo one"),
        ApprovalRule("command", "touch ran.txt"),
    )
    assert [(r.kind, r.pattern) for r in await book.rules()] == [
        ("command", "echo one"),
        ("command", "touch ran.txt"),
    ]
    again = await calls.run(RunCommandTool(), command="touch ran.txt; echo one")
    assert not again.is_error
    assert len(approver.requests) == 1  # not asked again
    # A command outside the rules is asked about, offering only what is missing.
    await calls.run(RunCommandTool(), command="echo one && ls")
    assert approver.requests[-1].rules == (ApprovalRule("command", "ls"),)


async def test_a_plain_approval_keeps_nothing(root: Path) -> None:
    book = RuleBook()
    approver = FakeApprover(True)
    calls = _calls(root, approver, book)
    await calls.run(WriteFileTool(), path="src/a.txt", content="x")
    await calls.run(WriteFileTool(), path="src/a.txt", content="y")
    assert len(approver.requests) == 2
    assert approver.requests[0].rules == (ApprovalRule("write", "src/**"),)
    assert await book.rules() == []


async def test_a_write_rule_allows_edits_under_its_glob_only(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / "b.py").write_text("y = 1\n")
    book = RuleBook()
    await book.remember("session", [ApprovalRule("write", "src/**")])
    approver = FakeApprover(False)
    calls = _calls(root, approver, book)
    edited = await calls.run(EditFileTool(), path="src/a.py", old_string="1", new_string="2")
    assert not edited.is_error, edited.content
    refused = await calls.run(EditFileTool(), path="b.py", old_string="1", new_string="2")
    assert refused.is_error and refused.details["reason"] == "declined"
    assert [r.title for r in approver.requests] == ["Edit b.py"]


async def test_a_declined_call_keeps_no_rule_even_if_asked_to(root: Path) -> None:
    book = RuleBook()
    approver = FakeApprover(ApprovalAnswer(approved=False, remember="session"))
    result = await _calls(root, approver, book).run(RunCommandTool(), command="touch x")
    assert result.is_error
    assert await book.rules() == []


async def test_the_deny_policy_wins_over_a_rule(root: Path) -> None:
    book = RuleBook()
    await book.remember("session", [ApprovalRule("command", "touch")])
    settings = ToolSettings(approval=ApprovalSettings(command="deny"))
    env = ToolEnvironment(
        workspace=DiskWorkspace(root),
        approver=FakeApprover(),
        settings=settings,
        approval_rules=book,
    )
    result = await ToolCallRecorder(env).run(RunCommandTool(), command="touch x")
    assert result.is_error and result.details["reason"] == "policy"
    assert not (root / "x").exists()
