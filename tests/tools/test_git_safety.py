"""Git cannot be turned against an allowed command (issue 30): every child
Rein starts runs git with ``safe.bareRepository=explicit``, and a write
into git's internals (``.git``, or the files that make a folder a bare
repository) asks like a protected file, every time. With real git."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.ports import ApprovalAnswer, ApprovalRule
from rein.harness.tools import ToolEnvironment
from rein.process.environment import child_environment, git_safety
from rein.tools import ApprovalSettings, RunCommandTool, ToolSettings, WriteFileTool
from rein.tools.approval_rules import RuleBook
from rein.tools.file_ops import MoveFileTool
from tests.fakes.approvals import FakeApprover
from tests.fakes.tools import ToolCallRecorder

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _config(root: Path) -> str:
    # A worktree makes git status read core.fsmonitor and run it.
    return (
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        f"\tworktree = {root}\n\tfsmonitor = \"touch '{root}/PWNED'; false\"\n"
    )


def _calls(
    root: Path,
    approver: FakeApprover | None,
    *,
    deny_globs: tuple[str, ...] | None = None,
) -> tuple[ToolCallRecorder, RuleBook]:
    approval = ApprovalSettings(command="ask", write="allow")
    if deny_globs is not None:
        approval = approval.model_copy(update={"deny_globs": deny_globs})
    book = RuleBook(root=str(root))
    env = ToolEnvironment(
        workspace=DiskWorkspace(root),
        approver=approver,
        settings=ToolSettings(approval=approval),
        approval_rules=book,
    )
    return ToolCallRecorder(env), book


@needs_git
async def test_an_allowed_git_status_never_runs_a_bare_layouts_fsmonitor(root: Path) -> None:
    """The layout was written (the person allowed it, or it came with the
    workspace); the kept ``git status`` runs, and runs nothing else."""
    (root / "objects").mkdir()
    (root / "refs").mkdir()
    (root / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "config").write_text(_config(root))
    calls, book = _calls(root, FakeApprover(False))
    await book.remember("session", [ApprovalRule("command", "git status")])
    result = await calls.run(RunCommandTool(), command="git status")
    assert "denied" not in result.details, result.content  # the rule allowed it
    assert "cannot use bare repository" in result.content
    assert not (root / "PWNED").exists()


@needs_git
async def test_the_attack_through_the_tools_runs_nothing(root: Path) -> None:
    """Issue 30's attack: kept ``git status``, writes allowed, the model
    writes HEAD, config, objects/, refs/ and runs git status."""
    approver = FakeApprover(False)
    calls, book = _calls(root, approver)
    await book.remember("session", [ApprovalRule("command", "git status")])
    writes = {
        "HEAD": "ref: refs/heads/main\n",
        "config": _config(root),
        "objects/info/x": "",
        "refs/heads/x": "",
    }
    results = {p: await calls.run(WriteFileTool(), path=p, content=c) for p, c in writes.items()}
    assert not results["HEAD"].is_error  # alone, HEAD is just a file
    for path in ("config", "objects/info/x", "refs/heads/x"):
        assert results[path].details.get("reason") == "declined", results[path].content
    assert approver.requests[0].detail.startswith(
        "Asked because config: it would make the workspace root look like a git repository"
    )
    assert not (root / "config").exists()
    ran = await calls.run(RunCommandTool(), command="git status")
    assert "denied" not in ran.details
    assert not (root / "PWNED").exists()


async def test_writes_into_git_internals_ask_every_time_and_offer_no_rule(root: Path) -> None:
    (root / "HEAD").write_text("ref: refs/heads/main\n")
    approver = FakeApprover(ApprovalAnswer(approved=True, remember="session"))
    calls, book = _calls(root, approver, deny_globs=())  # .git not protected
    for path in ("config", "config", "vendor/.git/hooks/pre-commit", "sub/.GIT/config"):
        result = await calls.run(WriteFileTool(), path=path, content="x")
        assert not result.is_error, result.content
    assert len(approver.requests) == 4
    assert all(r.rules == () and r.prefix_rules == () for r in approver.requests)
    assert approver.requests[0].subject == "config"
    assert await book.rules() == []
    # An ordinary file asks nothing (writes are allowed).
    assert not (await calls.run(WriteFileTool(), path="src/config.py", content="x")).is_error
    assert not (await calls.run(WriteFileTool(), path="refs.md", content="x")).is_error
    assert len(approver.requests) == 4


async def test_without_anyone_to_ask_a_write_into_git_internals_is_refused(root: Path) -> None:
    (root / "refs").mkdir()
    calls, _ = _calls(root, None)
    result = await calls.run(WriteFileTool(), path="HEAD", content="ref: refs/heads/main\n")
    assert result.is_error and result.details["reason"] == "no_approver"
    assert "HEAD: it would make the workspace root look like a git repository" in result.content
    moved = await calls.run(WriteFileTool(), path="notes.txt", content="x")
    assert not moved.is_error
    move = await calls.run(MoveFileTool(), path="notes.txt", new_path="refs/../config")
    assert move.is_error and move.details["reason"] == "no_approver"
    assert (root / "notes.txt").exists() and not (root / "config").exists()


def test_children_get_safe_bare_repository_after_the_configuration_they_have(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "2")
    env = child_environment()
    assert env["GIT_CONFIG_COUNT"] == "3"
    assert (env["GIT_CONFIG_KEY_2"], env["GIT_CONFIG_VALUE_2"]) == (
        "safe.bareRepository",
        "explicit",
    )
    assert git_safety({"GIT_CONFIG_COUNT": "many"})["GIT_CONFIG_KEY_0"] == "safe.bareRepository"
    monkeypatch.delenv("GIT_CONFIG_COUNT")
    assert child_environment({"X": "1"})["GIT_CONFIG_KEY_0"] == "safe.bareRepository"
