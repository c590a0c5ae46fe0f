"""Approvals that stick: parsed command lines, write globs, MCP rules, and
the approval check keeping what the person chose to remember."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.ports import ApprovalAnswer, ApprovalRule
from rein.harness.tools import ToolEnvironment
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
        pytest.param("git log *.py", False, id="glob-may-expand-to-an-option"),
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
    assert await book.uncovered("command", "npm test -- src/a.test.ts") is None
    # The test runner's options are not npm's list: they ask.
    assert await book.uncovered("command", "npm test -- -k x") == (
        ApprovalRule("command", "npm test -- -k x"),
    )
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
    await calls.run(RunCommandTool(), command="git status -s && ls -la")
    (request,) = approver.requests
    assert request.rules == (
        ApprovalRule("command", "git status -s"),
        ApprovalRule("command", "ls -la"),
    )
    assert request.prefix_rules == (
        ApprovalRule("command", "git status *"),
        ApprovalRule("command", "ls -la"),
    )
    assert [r.pattern for r in await book.rules()] == ["git status *", "ls -la"]
    await calls.run(RunCommandTool(), command="git status --short")
    assert len(approver.requests) == 1  # ran without asking
    await calls.run(RunCommandTool(), command="git status /etc/passwd")
    assert len(approver.requests) == 2  # a path outside still asks


async def test_the_exact_choice_keeps_the_exact_rules(root: Path) -> None:
    book = RuleBook(root=str(root))
    approver = FakeApprover(ApprovalAnswer(approved=True, remember="session"))
    calls = _calls(root, approver, book)
    await calls.run(RunCommandTool(), command="echo one")
    assert [r.pattern for r in await book.rules()] == ["echo one"]
    await calls.run(RunCommandTool(), command="echo one two")
    assert len(approver.requests) == 2


# ------------------------------------------- the review's holes (issue 30)


def test_a_comment_ends_at_the_line_and_hides_no_command() -> None:
    """``#`` at a word's start begins a comment as in bash: a quote in it
    opens nothing, and the next line is a command of its own."""
    line = "git log #'\ntouch /tmp/PWN1\n#'"
    assert split_command(line) == [["git", "log"], ["touch", "/tmp/PWN1"]]
    assert split_command("echo a#b # c 'd") == [["echo", "a#b"]]
    commands = parse_line(line)
    assert not all(command_allowed(c, ["git log *"], "/proj") for c in commands)


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("X+=1 git log", id="append-assignment"),
        pytest.param("a[1]=x git log", id="array-assignment"),
        pytest.param("a[1]+=x git log", id="array-append"),
        pytest.param("git log\r", id="carriage-return"),
        pytest.param("git log\x1b[2K", id="escape"),
        pytest.param("git log \u202e", id="bidi-override"),
        pytest.param("git\u00a0log", id="no-break-space"),
        pytest.param("git log\u200b", id="zero-width-space"),
    ],
)
def test_assignments_and_control_characters_are_unsafe(line: str) -> None:
    with pytest.raises(UnsafeCommand):
        split_command(line)


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        pytest.param(
            "git log *",
            "git log -1 '--format=[core]%n%x09fsmonitor=touch PWN2' --output=.git/config",
            id="output-into-git-config",
        ),
        pytest.param("git log *", "git log --outp=x", id="abbreviated-output"),
        pytest.param("git log *", "git log -p --ext-diff", id="ext-diff"),
        pytest.param("git grep *", "git grep '-Osh -c \"touch PWN3\"' -e x", id="grep-pager"),
        pytest.param("git grep *", "git grep --open-files-in-pager=sh x", id="grep-pager-long"),
        pytest.param("git log *", "git log *", id="glob-may-be-an-option"),
        pytest.param("git log *", "git log src/?.py", id="question-glob"),
        pytest.param("git log *", "git log -- .git/config", id="git-internals"),
        pytest.param("git log *", "git log -- sub/.GIT/hooks", id="git-internals-case"),
        pytest.param("go test *", "go test -exec 'sh -c evil' ./...", id="go-exec"),
        pytest.param("go test *", "go test -o out ./...", id="go-output"),
        pytest.param("pytest *", "pytest -p evil", id="pytest-plugin"),
        pytest.param("pytest *", "pytest --basetemp=src", id="pytest-basetemp"),
        pytest.param("make test *", "make test CC=evil", id="make-variable"),
        pytest.param("make test *", "make test -f other.mk", id="make-file"),
        pytest.param("npm test *", "npm test --script-shell=sh", id="npm-config"),
        pytest.param("find src *", "find src -exec sh -c 'touch PWN4' ;", id="find-exec"),
    ],
)
def test_extra_words_that_write_run_or_expand_ask(rule: str, command: str) -> None:
    assert not command_allowed(_words(command), [rule], root="/proj")


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        pytest.param("git log *", "git log -5 --oneline --stat -- src/app.py", id="git-log"),
        pytest.param("git log *", "git log -n 3 --format=%h%x09%s main", id="git-log-format"),
        pytest.param("git diff *", "git diff --cached --name-only HEAD~1", id="git-diff"),
        pytest.param("git grep *", "git grep -n -i -e needle -- src", id="git-grep"),
        pytest.param("pytest *", "pytest -x -q -k 'not slow' tests/test_a.py", id="pytest"),
        pytest.param("pytest *", "pytest -xq --tb=short", id="pytest-cluster"),
        pytest.param("python -m pytest *", "python -m pytest -v tests", id="python-m-pytest"),
        pytest.param("cargo test *", "cargo test --release -p core -- --nocapture", id="cargo"),
        pytest.param("go test *", "go test -run=TestX -count=1 -v ./...", id="go"),
        pytest.param("make test *", "make test -j4 -k", id="make"),
        pytest.param("npm test *", "npm test -- src/a.test.ts", id="npm"),
    ],
)
def test_extra_words_a_prefix_rule_still_allows(rule: str, command: str) -> None:
    assert command_allowed(_words(command), [rule], root="/proj")


@pytest.mark.parametrize(
    ("command", "wider"),
    [
        pytest.param("git log -5", "git log *", id="git-log"),
        pytest.param("git status", "git status *", id="git-status"),
        pytest.param("npm test", "npm test *", id="npm-test"),
        pytest.param("npm run build --silent", "npm run build *", id="npm-run"),
        pytest.param("pytest -x tests", "pytest *", id="pytest"),
        pytest.param("python -m pytest -q", "python -m pytest *", id="python-m-pytest"),
        pytest.param("cargo check --all", "cargo check *", id="cargo"),
        pytest.param("go vet ./...", "go vet *", id="go"),
        pytest.param("make test V=1", "make test *", id="make"),
        pytest.param("find src -name x", None, id="find"),
        pytest.param("rm build x", None, id="rm"),
        pytest.param("bash deploy x", None, id="bash"),
        pytest.param("sudo rm -rf x", None, id="sudo"),
        pytest.param("xargs rm x", None, id="xargs"),
        pytest.param("nohup x y", None, id="nohup"),
        pytest.param("env git log", None, id="env"),
        pytest.param("python -m http.server", None, id="python-m-other"),
        pytest.param("python -c 'import os'", None, id="python-c"),
        pytest.param("git push origin", None, id="git-push"),
        pytest.param("git branch -D main", None, id="git-branch"),
        pytest.param("npm install x", None, id="npm-install"),
    ],
)
def test_a_wider_rule_is_offered_only_for_a_known_program_and_subcommand(
    command: str, wider: str | None
) -> None:
    offered = widen(suggest_rules("command", command))
    assert offered == ((ApprovalRule("command", wider),) if wider else ())
