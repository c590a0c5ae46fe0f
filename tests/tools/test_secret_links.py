"""A ``run_command`` line that names a secret file by another name asks
every time, as the file tools refuse or ask about it (safe20): a symbolic
link to it (a chain of links, a link to the folder holding it), and a hard
link to it, found by device and inode as ``read_file``'s prompt finds it
(rein.tools.secret_commands, rein.tools.secret_walk). The real
run_command over a tmp workspace with real links, the person declining;
each of these lines ran without a question before."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.tools import ToolEnvironment
from rein.tools import ReadFileTool, RunCommandTool, secret_commands, secret_walk
from rein.tools.secret_commands import TOO_MANY_TO_LOOK, named_in_command
from rein.tools.secret_files import SecretFiles
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes.approvals import FakeApprover
from tests.fakes.tools import ToolCallRecorder
from tests.tools.conftest import WriteFiles

TOKEN = "env_Zq8tokenvalue"

#: Each line, and the name the question gives for what it names.
BY_ANOTHER_NAME = (
    ("cat notes", "notes (which leads to .env)"),
    ("cat chain", "chain (which leads to .env)"),
    ("cat cfg/credentials", "cfg/credentials (which leads to infra/.aws/credentials)"),
    ("cd cfg && cat credentials", "cfg/credentials (which leads to infra/.aws/credentials)"),
    (
        "git -C cfg diff --no-index credentials /dev/null",
        "cfg/credentials (which leads to infra/.aws/credentials)",
    ),
    ("cat cfg/cred*", "cfg/credentials (which leads to infra/.aws/credentials)"),
    ("cat no*", "notes (which leads to .env)"),
    ("bash -c 'cat backup.txt'", "backup.txt (another name of .env)"),
    ("head -n 3 docs/backup.txt", "docs/backup.txt (another name of .env)"),
)


@pytest.fixture
def linked(root: Path, write_files: WriteFiles) -> Path:
    write_files(
        {
            ".env": f"TOKEN={TOKEN}\n",
            "infra/.aws/credentials": f"key = {TOKEN}\n",
            "app.py": "x = 1\n",
            "docs/guide.md": "read me\n",
        }
    )
    (root / "notes").symlink_to(".env")
    (root / "chain").symlink_to("notes")
    (root / "cfg").symlink_to("infra/.aws", target_is_directory=True)
    os.link(root / ".env", root / "backup.txt")
    os.link(root / ".env", root / "docs" / "backup.txt")
    # Links to files that are no secret.
    (root / "main.py").symlink_to("app.py")
    os.link(root / "docs" / "guide.md", root / "guide.md")
    return root


def _calls(root: Path, approver: FakeApprover) -> ToolCallRecorder:
    settings = ToolSettings(approval=ApprovalSettings(command="allow"))
    return ToolCallRecorder(
        ToolEnvironment(workspace=DiskWorkspace(root), settings=settings, approver=approver)
    )


async def test_a_command_naming_a_secret_file_by_a_link_asks_every_time(linked: Path) -> None:
    approver = FakeApprover(False)
    calls = _calls(linked, approver)
    for command, _ in BY_ANOTHER_NAME:
        declined = await calls.run(RunCommandTool(), command=command)
        assert declined.is_error and "declined" in declined.content, command
        assert TOKEN not in declined.content
    assert [r.detail.split(": its output")[0] for r in approver.requests] == [
        f"Asked because the command names {shown}, a secret file (tools.secretFiles)"
        for _, shown in BY_ANOTHER_NAME
    ]
    assert all(r.rules == () for r in approver.requests), "asked every time"
    # A folder link's secret named by its own name asked before and still does.
    assert named_in_command("cat cfg/.env", SecretFiles(), str(linked)) == ("cfg/.env", ".env")


async def test_links_to_plain_files_ask_nothing(linked: Path) -> None:
    approver = FakeApprover(False)
    calls = _calls(linked, approver)
    for command in ("cat main.py", "cat guide.md docs/guide.md", "cd cfg && ls", "cat app.py"):
        ran = await calls.run(RunCommandTool(), command=command)
        assert not ran.is_error, (command, ran.content)
    assert approver.requests == []


async def test_the_command_check_and_read_file_agree_on_a_hard_link(linked: Path) -> None:
    """``read_file`` of the hard link names the same secret file as the
    command's question does (one walk, rein.tools.secret_walk)."""
    approver = FakeApprover(False)
    calls = _calls(linked, approver)
    assert (await calls.run(ReadFileTool(), path="backup.txt")).is_error
    assert (await calls.run(RunCommandTool(), command="cat backup.txt")).is_error
    read, command = (r.detail for r in approver.requests)
    assert "it is another name of .env, a secret file" in read
    assert "the command names backup.txt (another name of .env)" in command


def test_a_hard_link_in_a_workspace_too_large_to_look_through_asks(
    linked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = SecretFiles()
    assert named_in_command("cat guide.md", rules, str(linked)) is None
    monkeypatch.setattr(secret_walk, "TREE_BOUND", 3)
    (linked / "docs" / "new.md").write_text("x\n")  # docs changed: read again
    found = named_in_command("cat guide.md", rules, str(linked))
    assert found == ("guide.md", TOO_MANY_TO_LOOK)
    assert "not looked through yet for the secret file" in secret_commands.why_asked(found)
    # A file with one name asks nothing, however large the workspace.
    assert named_in_command("cat app.py", rules, str(linked)) is None


def test_a_link_leading_out_of_the_workspace_is_left_to_the_os_sandbox(
    linked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "data.txt").write_text("x\n")
    (linked / "out").symlink_to(outside / "data.txt")
    assert named_in_command("cat out", SecretFiles(), str(linked)) is None
    # A link to a hard-linked file outside (a virtual environment's python
    # to an interpreter with two names) is no workspace's hard link: no walk,
    # no question, however large the workspace.
    os.link(outside / "data.txt", outside / "python3.12")
    (linked / "python").symlink_to(outside / "python3.12")
    monkeypatch.setattr(secret_walk, "TREE_BOUND", 3)
    assert named_in_command("./python -m pytest", SecretFiles(), str(linked)) is None


#: A ``..`` after a linked folder (review25a): the kernel follows ``sso``
#: (a link to infra/.aws/sso) before the ``..``, so these read
#: infra/.aws/credentials; taken as text, ``sso/../credentials`` is
#: ``credentials``, which names nothing.
DOT_DOT_AFTER_A_LINK = (
    "cat sso/../credentials",
    "cd sso && cat ../credentials",
    "cd sso/.. && cat credentials",
    "env -C sso cat ../credentials",
    "git -C sso/.. diff --no-index credentials /dev/null",
    "cat sso/../cred*",
    "cat kc/../config",
)


async def test_a_dot_dot_after_a_linked_folder_is_taken_where_the_kernel_takes_it(
    linked: Path,
) -> None:
    (linked / "infra/.aws/sso").mkdir()
    (linked / "infra/.kube/cache").mkdir(parents=True)
    (linked / "infra/.kube/config").write_text(f"token: {TOKEN}\n")
    (linked / "sso").symlink_to("infra/.aws/sso", target_is_directory=True)
    (linked / "kc").symlink_to("infra/.kube/cache", target_is_directory=True)
    approver = FakeApprover(False)
    calls = _calls(linked, approver)
    for command in DOT_DOT_AFTER_A_LINK:
        declined = await calls.run(RunCommandTool(), command=command)
        assert declined.is_error and "declined" in declined.content, (command, declined.content)
        assert TOKEN not in declined.content
    assert len(approver.requests) == len(DOT_DOT_AFTER_A_LINK)
    # A ``..`` through plain folders still names what it names as text.
    for command in ("cat docs/../app.py", "cd docs && cat ../app.py", "cat sso/../../../app.py"):
        ran = await calls.run(RunCommandTool(), command=command)
        assert not ran.is_error, (command, ran.content)
    assert len(approver.requests) == len(DOT_DOT_AFTER_A_LINK)


async def test_a_folder_larger_than_the_listing_bound_is_not_listed_whole(
    linked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """review25a: the check listed one huge folder whole (200,000 entries:
    400 ms on the event loop). The listing stops at the bound and the
    words past it are looked up by ``lstat``: the same answers."""
    monkeypatch.setattr(secret_commands, "_NAMES_BOUND", 50)
    data = linked / "data"
    data.mkdir()
    for i in range(200):
        (data / f"r{i}.json").write_text("{}\n")
    (data / "notes").symlink_to("../.env")
    check = secret_commands._Check(SecretFiles(), str(linked))
    assert check.line("head data/r5.json data/nothere", None, 0) is None
    assert check.names["data"] is None, "past the bound: looked up by lstat"
    assert check.named_entries == 51, "the listing stopped at the bound"
    approver = FakeApprover(False)
    calls = _calls(linked, approver)
    assert not (await calls.run(RunCommandTool(), command="cat data/r1.json")).is_error
    assert approver.requests == []
    declined = await calls.run(RunCommandTool(), command="cat data/notes")
    assert declined.is_error and TOKEN not in declined.content
    assert "data/notes (which leads to .env)" in approver.requests[0].detail


async def test_hard_linked_dependencies_ask_only_until_the_workspace_is_looked_through(
    linked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """review25a: pnpm's node_modules (and uv's .venv) hard-link every file
    from a store; in a workspace of more than WALK_BOUND entries each read
    of one asked. The walk is remembered: once whole, a folder is read
    again only when its change time moved, and a hard link of a secret made
    later is found."""
    # Folders read in the same tick as their last change are read again
    # at each look (their change could hide in the tick): these are all
    # new, so trust them as a workspace older than a clock tick.
    monkeypatch.setattr(secret_walk, "RECENT_NS", 0)
    store = tmp_path / "store"
    store.mkdir()
    for p in range(60):
        package = linked / "node_modules" / f"pkg{p}"
        package.mkdir(parents=True)
        for f in range(100):
            kept = store / f"{p}-{f}.js"
            kept.write_text("module.exports = 1\n")
            os.link(kept, package / f"f{f}.js")
    approver = FakeApprover(True)
    calls = _calls(linked, approver)
    # The first look reads WALK_BOUND entries of the 6,000 and more: asked.
    assert not (await calls.run(RunCommandTool(), command="cat node_modules/pkg1/f1.js")).is_error
    assert len(approver.requests) == 1
    for command in (
        "cat node_modules/pkg2/f3.js",
        "head node_modules/pkg59/f99.js",
        "cat guide.md",
        "cat node_modules/pkg1/f1.js",
    ):
        assert not (await calls.run(RunCommandTool(), command=command)).is_error
    assert len(approver.requests) == 1, [r.detail for r in approver.requests[1:]]
    assert "not looked through yet" in approver.requests[0].detail
    # A hard link of a secret made after the walk: its folder changed.
    os.link(linked / ".env", linked / "node_modules" / "pkg7" / "x.js")
    declined = FakeApprover(False)
    ran = await _calls(linked, declined).run(RunCommandTool(), command="cat node_modules/pkg7/x.js")
    assert ran.is_error and TOKEN not in ran.content
    assert "node_modules/pkg7/x.js (another name of .env)" in declined.requests[0].detail


def test_the_remembered_walk_sees_a_secret_name_made_behind_a_folder_s_old_time(
    linked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A secret name given later to a plain file (guide.md and docs/guide.md
    are one file): the folder is read again though the command set its
    modification time back, as it cannot set back its change time."""
    monkeypatch.setattr(secret_walk, "RECENT_NS", 0)
    tree = secret_walk.SecretInodeTree(str(linked), SecretFiles())
    assert not tree.look()[1]
    assert named_in_command("cat guide.md", SecretFiles(), str(linked)) is None
    docs = linked / "docs"
    before = docs.stat()
    os.link(docs / "guide.md", docs / ".env.local")
    os.utime(docs, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert docs.stat().st_mtime_ns == before.st_mtime_ns
    inodes, stopped = tree.look()
    st = (linked / "guide.md").stat()
    assert not stopped and inodes[(st.st_dev, st.st_ino)] == ("docs/.env.local", ".env.*")
    assert named_in_command("cat guide.md", SecretFiles(), str(linked)) == (
        "guide.md (another name of docs/.env.local)",
        ".env.*",
    )
