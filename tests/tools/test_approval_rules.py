"""Approvals that stick: parsed command lines, write globs, MCP rules, and
the approval check keeping what the person chose to remember."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.harness.ports import ApprovalAnswer, ApprovalRule
from rein.harness.tools import ToolEnvironment
from rein.headless.disk_workspace import DiskWorkspace
from rein.tools import ApprovalSettings, EditFileTool, RunCommandTool, ToolSettings, WriteFileTool
from rein.tools._shell_words import Word, parse_line
from rein.tools.approval_rules import (
    RuleBook,
    UnsafeCommand,
    command_allowed,
    rule_matches,
    split_command,
    suggest_rules,
    unsafe_extra,
    validate_pattern,
    widen,
)
from tests.fakes.approvals import FakeApprover
from tests.fakes.tools import ToolCallRecorder

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
        pytest.param("cat README.md $HOME/secret.txt", id="variable"),
        pytest.param("cat ${HOME}/secret.txt", id="braced-variable"),
        pytest.param('git log --output="$HOME/.bashrc"', id="variable-in-quotes"),
        pytest.param("echo $'\\x41'", id="ansi-c-quote"),
        pytest.param('echo "open', id="open-quote"),
        pytest.param("  ", id="empty"),
    ],
)
def test_a_line_rules_cannot_vouch_for_is_unsafe(line: str) -> None:
    with pytest.raises(UnsafeCommand):
        split_command(line)


def test_single_quotes_keep_a_dollar_literal() -> None:
    assert split_command("echo '$HOME' | grep -c x") == [["echo", "$HOME"], ["grep", "-c", "x"]]


def _words(command: str) -> list[Word]:
    (words,) = parse_line(command)
    return words


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        pytest.param("rm -rf build", True, id="the-same"),
        pytest.param("rm  -rf   build", True, id="spacing"),
        pytest.param("rm -rf build /home/someone", False, id="more-words"),
        pytest.param("rm -rf", False, id="fewer-words"),
        pytest.param("rm -rf 'build'", False, id="quoted-otherwise"),
        pytest.param("rm -rf buildx", False, id="words-not-characters"),
    ],
)
def test_a_command_rule_matches_the_whole_command(command: str, allowed: bool) -> None:
    assert command_allowed(_words(command), ["rm -rf build"]) is allowed


def test_a_quoted_star_is_not_a_glob() -> None:
    assert command_allowed(_words("rm '*'"), ["rm '*'"])
    assert not command_allowed(_words("rm *"), ["rm '*'"])


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        pytest.param("git log", True, id="bare"),
        pytest.param("git log -5 --oneline src/app.py", True, id="options-and-a-path"),
        pytest.param("git log -- /proj/src/app.py", True, id="absolute-inside"),
        pytest.param("git log --output=/home/u/.bashrc", False, id="option-path-outside"),
        pytest.param("git log -o/tmp/x", False, id="short-option-path-outside"),
        pytest.param("git log /etc", False, id="absolute-outside"),
        pytest.param("git log ../other", False, id="dot-dot"),
        pytest.param("git log --output=../x", False, id="option-dot-dot"),
        pytest.param("git log ~/x", False, id="tilde"),
        pytest.param("git log --output=~/x", False, id="tilde-after-equals"),
        pytest.param("git log {/etc,src}", False, id="braces"),
        pytest.param("git log .*", False, id="dot-glob"),
        pytest.param("git log *.py", True, id="glob-in-the-workspace"),
        pytest.param("git logs", False, id="another-subcommand"),
        pytest.param("git -c core.pager=x log", False, id="words-before"),
    ],
)
def test_a_prefix_rule_allows_more_words_that_stay_in_the_workspace(
    command: str, allowed: bool
) -> None:
    assert command_allowed(_words(command), ["git log *"], root="/proj") is allowed


def test_without_a_root_every_absolute_path_asks() -> None:
    assert not command_allowed(_words("git log -- /proj/src"), ["git log *"])
    assert unsafe_extra(_words("x /proj")[1], None) == "/proj names a path outside the workspace"


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


def test_suggested_rules_name_each_command_exactly_and_the_folder() -> None:
    assert suggest_rules("command", "npm test -- -x && python -m pytest -q | tee log") == (
        ApprovalRule("command", "npm test -- -x"),
        ApprovalRule("command", "python -m pytest -q"),
        ApprovalRule("command", "tee log"),
    )
    assert suggest_rules("command", "cat 'my file.txt'") == (
        ApprovalRule("command", "cat 'my file.txt'"),
    )
    # A command ending in a bare * would read as a prefix rule: none offered.
    assert suggest_rules("command", "ls *") == ()
    assert suggest_rules("command", "rm x > y") == ()
    assert suggest_rules("write", "src/pkg/a.py") == (ApprovalRule("write", "src/pkg/**"),)
    assert suggest_rules("write", "a.py") == (ApprovalRule("write", "a.py"),)
    assert suggest_rules("mcp", "time/now") == (ApprovalRule("mcp", "time/now"),)


def test_the_wider_choice_is_the_program_and_its_subcommand() -> None:
    exact = suggest_rules("command", "npm test -- -x && python -m pytest -q | rm -rf build")
    assert widen(exact) == (
        ApprovalRule("command", "npm test *"),
        ApprovalRule("command", "python -m pytest *"),
        ApprovalRule("command", "rm -rf build"),  # no subcommand: no bare program
    )
    assert widen(suggest_rules("command", "ls -la")) == ()  # nothing wider
    assert widen(suggest_rules("command", "git status")) == (
        ApprovalRule("command", "git status *"),
    )


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
    await book.remember("session", [ApprovalRule("command", "npm test *")])
    assert await book.uncovered("command", "npm test -- -k x") is None
    assert await book.uncovered("command", "npm test && rm -rf build") == (
        ApprovalRule("command", "rm -rf build"),
    )
    await book.remember("session", [ApprovalRule("command", "git status")])
    assert await book.uncovered("command", "git status; npm test | npm test") is None
    assert await book.uncovered("command", "git status -s") == (
        ApprovalRule("command", "git status -s"),
    )
    # A line rules cannot vouch for is never allowed, and offers no rule.
    assert await book.uncovered("command", "npm test > /etc/passwd") == ()


@pytest.mark.parametrize(
    ("kept", "line"),
    [
        pytest.param("ls -la", "ls -la && touch M", id="and-another-command"),
        pytest.param("ls -la", "ls -la $(touch M)", id="substitution"),
        pytest.param("ls -la", "ls -la; touch M", id="semicolon"),
        pytest.param("rm -rf build", "rm -rf build /home/someone/folder", id="more-paths"),
        pytest.param("cat README.md", "cat README.md $HOME/secret.txt", id="variable"),
        pytest.param("cat README.md", "cat README.md ~/secret.txt", id="tilde"),
        pytest.param("git log", "git log --output=/home/someone/.bashrc", id="exact-git-log"),
        pytest.param("git log *", "git log --output=$HOME/.bashrc", id="prefix-variable"),
        pytest.param("git log *", "git log --output=/home/someone/.bashrc", id="prefix-outside"),
    ],
)
async def test_a_kept_rule_never_allows_what_the_person_did_not_see(kept: str, line: str) -> None:
    book = RuleBook(root="/proj")
    await book.remember("session", [ApprovalRule("command", kept)])
    assert await book.uncovered("command", line) is not None


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
    await book.remember("session", [ApprovalRule("command", "touch x")])
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


async def test_kept_rules_do_not_run_the_issues_commands(root: Path, tmp_path: Path) -> None:
    """The reproductions of issue 30: each line ran unasked under a rule
    kept for a shorter command."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    (root / "build").mkdir()
    (root / "README.md").write_text("hello\n")
    book = RuleBook(root=str(root))
    kept = ["rm -rf build", "cat README.md", "git log *", "ls -la"]
    await book.remember("session", [ApprovalRule("command", p) for p in kept])
    approver = FakeApprover(False)
    calls = _calls(root, approver, book)
    lines = [
        f"rm -rf build {outside}",
        "cat README.md $HOME/secret.txt",
        f"git log --output={outside}/log.txt",
        "git log --output=$HOME/.bashrc",
        "ls -la && touch M",
        "ls -la $(touch M)",
    ]
    for line in lines:
        result = await calls.run(RunCommandTool(), command=line)
        assert result.is_error and result.details["reason"] == "declined", line
    assert [r.detail.splitlines()[0] for r in approver.requests] == [f"$ {x}" for x in lines]
    assert (outside / "keep.txt").read_text() == "mine"
    assert not (outside / "log.txt").exists() and not (root / "M").exists()
    # What the rules were kept for still runs without asking.
    ran = await calls.run(RunCommandTool(), command="cat README.md")
    assert not ran.is_error and "hello" in ran.content
    assert len(approver.requests) == len(lines)


async def test_the_person_chooses_the_wider_rule(root: Path) -> None:
    book = RuleBook(root=str(root))
    approver = FakeApprover(ApprovalAnswer(approved=True, remember="session", prefix=True))
    calls = _calls(root, approver, book)
    await calls.run(RunCommandTool(), command="echo one && ls -la")
    (request,) = approver.requests
    assert request.rules == (ApprovalRule("command", "echo one"), ApprovalRule("command", "ls -la"))
    assert request.prefix_rules == (
        ApprovalRule("command", "echo one *"),
        ApprovalRule("command", "ls -la"),
    )
    assert [r.pattern for r in await book.rules()] == ["echo one *", "ls -la"]
    assert not (await calls.run(RunCommandTool(), command="echo one two")).is_error
    assert len(approver.requests) == 1
    await calls.run(RunCommandTool(), command="echo one /etc/passwd")
    assert len(approver.requests) == 2  # a path outside still asks


async def test_the_exact_choice_keeps_the_exact_rules(root: Path) -> None:
    book = RuleBook(root=str(root))
    approver = FakeApprover(ApprovalAnswer(approved=True, remember="session"))
    calls = _calls(root, approver, book)
    await calls.run(RunCommandTool(), command="echo one")
    assert [r.pattern for r in await book.rules()] == ["echo one"]
    await calls.run(RunCommandTool(), command="echo one two")
    assert len(approver.requests) == 2
