"""A sandboxed command can neither change nor plant a git repository
below the workspace root (found by the lead: only the root's ``.git`` was
protected, and git runs a nested repository's ``core.fsmonitor`` when the
person, or the editor showing one of its files, runs ``git status`` there).
Real bubblewrap, real git."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from rein.process.runner import SubprocessRunner
from rein.sandboxing import BwrapSandbox, SandboxSettings
from rein.sandboxing import nested_git as nested_git_module
from rein.sandboxing.nested_git import FolderTree, NestedRepositories, nested_git
from rein.sandboxing.others import OtherCommandsSandbox
from rein.sandboxing.probe import sandbox_status


@pytest.fixture(autouse=True)
def _works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not sandbox_status().works or shutil.which("git") is None:
        pytest.fail(
            f"bubblewrap and git must work on the test machines: {sandbox_status().why_not}"
        )
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30, check=False
    )


def _fsmonitor(pwned: Path) -> str:
    return f"touch {pwned}; false"


PLANT = (
    "mkdir -p sub/deep && git init -q sub/deep && git -C sub/deep config core.fsmonitor '{evil}'"
    " && git -C vendor/lib config core.fsmonitor '{evil}'; echo done"
)


def test_run_commands_sandbox_keeps_nested_repositories_and_moves_a_planted_one_aside(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    (ws / "vendor" / "lib").mkdir(parents=True)
    assert _git(ws / "vendor" / "lib", "init", "-q").returncode == 0
    config = (ws / "vendor" / "lib" / ".git" / "config").read_text()
    pwned = tmp_path / "PWNED"
    sandbox = BwrapSandbox(str(ws), SandboxSettings())

    def run(command: str) -> subprocess.CompletedProcess[str]:
        argv = sandbox.wrap(["bash", "-c", command], cwd=str(ws))
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)

    out = run(PLANT.format(evil=_fsmonitor(pwned)))
    assert out.stdout.endswith("done\n"), out.stderr
    note = sandbox.after_run()
    assert note is not None and "sub/deep/.git (now sub/deep/.git.rein-quarantine)" in note
    # The person's repository was read-only, the planted one is gone.
    assert (ws / "vendor" / "lib" / ".git" / "config").read_text() == config
    assert not (ws / "sub" / "deep" / ".git").exists()
    for where in (ws / "sub" / "deep", ws / "vendor" / "lib"):
        _git(where, "status")
    assert not pwned.exists()
    # Moved aside, it is no repository to a git run inside it either (git
    # takes a folder with HEAD, objects and refs for a bare repository and
    # reads its config), and it comes back by renaming.
    aside = ws / "sub" / "deep" / ".git.rein-quarantine"
    seen = _git(aside, "config", "--local", "--get", "core.fsmonitor")
    assert seen.returncode != 0 and "only be used inside a git repository" in seen.stderr, seen
    (aside / "HEAD.rein-quarantine").rename(aside / "HEAD")
    assert _git(aside, "config", "--local", "--get", "core.fsmonitor").stdout.strip()
    # A repository the person makes between two commands stays.
    assert _git(ws / "sub", "init", "-q").returncode == 0
    assert run("true").returncode == 0
    assert sandbox.after_run() is None
    assert (ws / "sub" / ".git").is_dir()


async def test_a_gates_command_cannot_plant_a_repository_by_a_git_file(tmp_path: Path) -> None:
    """A ``.git`` file naming a folder the command made is a repository
    too (git reads that folder's config)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    pwned = tmp_path / "PWNED"
    settings = SandboxSettings(also=("gates",))
    runner = SubprocessRunner(
        str(ws), sandbox=OtherCommandsSandbox(str(ws), lambda: settings, "gates")
    )
    plant = (
        "git init -q made && mv made/.git hidden"
        f" && git --git-dir=hidden config core.fsmonitor '{_fsmonitor(pwned)}'"
        " && mkdir -p a/b && echo 'gitdir: ../../hidden' > a/b/.git && echo done"
    )
    result = await runner.run(plant, timeout_s=60)
    assert result.exit_code == 0, result.output
    assert "a/b/.git (now a/b/.git.rein-quarantine)" in result.output
    assert not (ws / "a" / "b" / ".git").exists()
    _git(ws / "a" / "b", "status")
    assert not pwned.exists()


def test_the_walk_finds_every_nested_git_and_follows_no_link(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "modules" / "x" / ".git").mkdir(parents=True)  # the root's own: not entered
    (ws / "a" / "b" / ".git").mkdir(parents=True)
    (ws / "a" / "b" / ".git" / "inner" / ".git").mkdir(parents=True)  # inside one: not entered
    (ws / "c").mkdir()
    (ws / "c" / ".git").write_text("gitdir: ../a/b/.git\n")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    (ws / "link").symlink_to(elsewhere)
    assert nested_git(str(ws)) == {str(ws / "a" / "b" / ".git"), str(ws / "c" / ".git")}
    assert nested_git(str(ws), max_folders=1) == set()
    seen = NestedRepositories(str(ws))
    assert seen.planted() == []  # no start seen: nothing to compare with
    seen.before()
    (ws / "d" / ".git").mkdir(parents=True)
    assert seen.planted() == [str(ws / "d" / ".git")]


def _after_a_tick(probe_folder: Path, than: int) -> None:
    """Return once the file system's clock is past ``than`` (a change made
    now gets another change time than one made at ``than``)."""
    probe = probe_folder / "tick"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        probe.write_text("")
        if os.stat(probe).st_ctime_ns > than:
            probe.unlink()
            return
    raise AssertionError("the file system's clock did not move in 10 s")


def test_a_later_look_reads_only_the_folders_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the two seconds' rule (every folder here is new), and past a
    # tick of the clock so the changes below get a change time of their own.
    monkeypatch.setattr(nested_git_module, "RECENT_NS", 0)
    ws = tmp_path / "ws"
    for sub in ("a/b/c", "a/d", "e"):
        (ws / sub).mkdir(parents=True)
    tree = FolderTree(str(ws))
    assert tree.look() == set()
    _after_a_tick(tmp_path, max(os.stat(f).st_ctime_ns for f in [ws, *ws.rglob("*")]))
    read: list[str] = []
    real_scandir = os.scandir

    def counted(path: str) -> Iterator[os.DirEntry[str]]:
        if isinstance(path, str):  # (rmtree reads by descriptor)
            read.append(os.path.relpath(path, ws))
        return real_scandir(path)

    monkeypatch.setattr(nested_git_module.os, "scandir", counted)
    assert tree.look() == set() and read == []
    (ws / "a" / "b" / "c" / ".git").mkdir()
    shutil.rmtree(ws / "e")
    (ws / "a" / "d" / "new" / "deeper").mkdir(parents=True)
    (ws / "a" / "d" / "new" / "deeper" / ".git").write_text("gitdir: ../../b\n")
    assert tree.look() == {str(ws / "a/b/c/.git"), str(ws / "a/d/new/deeper/.git")}
    assert sorted(read) == [".", "a/b/c", "a/d", "a/d/new", "a/d/new/deeper"]
    shutil.rmtree(ws / "a" / "d")
    assert tree.look() == {str(ws / "a/b/c/.git")}


def test_a_planted_repository_whose_folder_time_is_put_back_is_found(tmp_path: Path) -> None:
    # review14b: the look compared modification times, which a command
    # sets back (touch -d); the change time it cannot.
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    nested = NestedRepositories(str(ws))
    assert nested.before() == ()
    was = os.stat(ws / "sub")
    assert _git(ws / "sub", "init", "-q").returncode == 0
    os.utime(ws / "sub", ns=(was.st_atime_ns, was.st_mtime_ns))
    assert nested.planted() == [str(ws / "sub" / ".git")]


def test_what_the_cap_left_unread_and_gits_own_pointers_are_never_planted(
    tmp_path: Path,
) -> None:
    # review14b: a repository past the cap, there all along, was taken for
    # planted once a command made room and wrote beside it.
    ws = tmp_path / "ws"
    (ws / "p" / "c" / ".git").mkdir(parents=True)
    nested = NestedRepositories(str(ws))
    nested._tree.max_folders = 2  # the root and p: c is past the cap
    assert nested.before() == ()
    nested._tree.max_folders = 10
    (ws / "p" / "out.txt").write_text("x")
    assert nested.planted() == []
    # A submodule's or a worktree's .git file, naming the root's own .git
    # (there at a start, read-only: git made it there), is not planted; one
    # naming elsewhere is.
    (ws / ".git" / "modules" / "m").mkdir(parents=True)
    assert nested.before() == (str(ws / "p" / "c" / ".git"),)
    (ws / "m").mkdir()
    (ws / "m" / ".git").write_text("gitdir: ../.git/modules/m\n")
    (ws / "x").mkdir()
    (ws / "x" / ".git").write_text("gitdir: ../p\n")
    assert nested.planted() == [str(ws / "x" / ".git")]


async def test_a_git_file_naming_a_git_folder_the_command_made_at_the_root_is_planted(
    tmp_path: Path,
) -> None:
    """A ``.git`` file naming the root's ``.git`` was never planted, even
    when the command made that ``.git`` (the workspace had none): the
    root's went aside, the pointer stayed, and a person putting the root's
    back (``mv .git.rein-quarantine .git``) got the command's repository
    in ``m/``, its ``core.fsmonitor`` run by their ``git status``."""
    ws = tmp_path / "ws"
    ws.mkdir()
    pwned = tmp_path / "PWNED"
    settings = SandboxSettings(also=("gates",))
    runner = SubprocessRunner(
        str(ws), sandbox=OtherCommandsSandbox(str(ws), lambda: settings, "gates")
    )
    plant = (
        "git init -q --bare .git/modules/m"
        f" && git --git-dir=.git/modules/m config core.fsmonitor '{_fsmonitor(pwned)}'"
        " && mkdir m && echo 'gitdir: ../.git/modules/m' > m/.git && echo done"
    )
    result = await runner.run(plant, timeout_s=60)
    assert result.exit_code == 0, result.output
    assert ".git (now .git.rein-quarantine)" in result.output
    assert "m/.git (now m/.git.rein-quarantine)" in result.output
    (ws / ".git.rein-quarantine").rename(ws / ".git")
    _git(ws / "m", "status")
    assert not pwned.exists()


async def test_a_link_to_a_repository_the_command_made_outside_the_workspace_is_planted(
    tmp_path: Path,
) -> None:
    """A command may write its temporary folder and the build caches
    (outside the workspace; the caches outlive the session): a repository
    made there, linked into the workspace by a folder of another name, is
    the repository of ``git status`` in that folder (git resolves the
    link) and of the editor showing a file below it. The person's own link
    to a repository elsewhere stays."""
    ws = tmp_path / "ws"
    ws.mkdir()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    assert _git(theirs, "init", "-q").returncode == 0
    (ws / "mine").symlink_to(theirs)
    pwned = tmp_path / "PWNED"
    sandbox = BwrapSandbox(str(ws), SandboxSettings())
    plant = (
        'for where in "$TMPDIR" "$PIP_CACHE_DIR"; do git init -q "$where/evil"'
        f" && git -C \"$where/evil\" config core.fsmonitor '{_fsmonitor(pwned)}'; done"
        ' && mkdir -p "$TMPDIR/evil/deep" && ln -s "$TMPDIR/evil/deep" a'
        ' && ln -s "$PIP_CACHE_DIR/evil" b && ln -s "$TMPDIR" c && echo done'
    )
    argv = await sandbox.start(["bash", "-c", plant], cwd=str(ws))
    with anyio.fail_after(60):
        out = await anyio.run_process(argv, cwd=str(ws), check=False)
    assert out.stdout.endswith(b"done\n"), out.stderr
    note = await sandbox.ended()
    assert note is not None
    for name in ("a", "b"):
        assert f"{name} (now {name}.rein-quarantine)" in note
        assert not (ws / name).exists()
        _git(ws, "-C", name, "status")
    assert not pwned.exists()
    # A link to the temporary folder itself leads to no repository: it stays;
    # so does the person's link, there at the start.
    assert (ws / "c").is_symlink() and (ws / "mine").is_symlink()
