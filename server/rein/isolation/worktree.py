"""Make an isolated copy of the person's folder for one session.

A git folder gets a worktree of its repository (``git worktree add
--detach``) at a commit of the folder as it is now: HEAD plus the person's
uncommitted changes (tracked modifications, staged changes, untracked files
that are not ignored), made with a temporary index (``read-tree HEAD``,
``add -A``, ``write-tree``, ``commit-tree``), so no patch is made and
the person's diff settings (``diff.noprefix``, external diffs, colours)
play no part. The person's index, stash and branches are not touched; the
commit is not signed. The base of the run's changes is that commit:
``IsolatedRecord.base``.

A folder inside a repository that carries none of its files (an ignored
``scratch/``) is copied like a folder outside one: a worktree would not
have it.

A folder that is not in a git repository is copied twice with Rein's
ignore rules (:class:`~rein.tools.ignore.WorkspaceFilter`): ``tree/`` for
the session, ``base/`` as it was.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import replace
from pathlib import Path

from rein.harness.errors import ConfigError
from rein.isolation._git import GIT_SLOW_TIMEOUT_S, git, is_git_work_tree
from rein.isolation.cleanup import remove_isolated
from rein.isolation.registry import IsolatedRecord, Registry
from rein.process.environment import forget_git_location
from rein.process.identity import process_start
from rein.tools.ignore import WorkspaceFilter

__all__ = ["create_isolated"]


def create_isolated(folder: Path, registry: Registry, session_id: str) -> IsolatedRecord:
    """The isolated copy of ``folder`` for ``session_id``, recorded as
    running (owned by this process) before anything is made, so a crash
    half-way is cleaned like any other. The children that work in the copy
    get none of the process's git location variables (``GIT_DIR``,
    ``GIT_INDEX_FILE``, ...): they find the copy's repository themselves;
    the process and its other children keep them."""
    folder = folder.resolve()
    if not folder.is_dir():
        raise ConfigError(f"the workspace {folder} is not a folder")
    place = registry.place(session_id)
    if place.exists():
        raise ConfigError(f"an isolated session {session_id} already exists at {place}")
    git_folder = is_git_work_tree(folder) and _carries_files(folder)
    if git_folder:
        top = Path(git(folder, "rev-parse", "--show-toplevel").stdout.decode().strip()).resolve()
        prefix = folder.relative_to(top).as_posix()
        prefix = "" if prefix == "." else prefix
    else:
        top, prefix = folder, ""
    record = IsolatedRecord(
        session_id=session_id,
        folder=str(folder),
        kind="git" if git_folder else "copy",
        top=str(top),
        prefix=prefix,
        tree=str(place / "tree"),
        base=str(place / "base") if not git_folder else "",
        pid=os.getpid(),
        pid_start=process_start(os.getpid()),
        created=Registry.now(),
    )
    registry.save(record)
    forget_git_location(place)
    try:
        place.mkdir(parents=True)
        if git_folder:
            record = replace(record, base=_git_worktree(top, Path(record.tree)))
            registry.save(record)
        else:
            _copy(folder, Path(record.base))
            _copy(folder, Path(record.tree))
        if not record.root.is_dir():
            raise ConfigError(f"the isolated copy of {folder} has no {record.root}")
    except BaseException:
        remove_isolated(registry, record)
        raise
    return record


def _carries_files(folder: Path) -> bool:
    """True when git carries at least one file under ``folder`` (tracked,
    or untracked and not ignored): an ignored folder is not in a worktree."""
    listed = git(folder, "ls-files", "-co", "--exclude-standard", "-z", "--", ".").stdout
    return bool(listed.strip(b"\0"))


def _git_worktree(top: Path, tree: Path) -> str:
    """A detached worktree of ``top`` at a commit of its files as they are
    now (HEAD when nothing is uncommitted); returns that commit."""
    head = git(top, "rev-parse", "HEAD").stdout.decode().strip()
    with tempfile.TemporaryDirectory(prefix="rein-index-") as scratch:
        index = Path(scratch) / "index"
        git(top, "read-tree", "HEAD", index_file=index)
        git(top, "add", "-A", "--", ".", index_file=index, timeout=GIT_SLOW_TIMEOUT_S)
        made = git(top, "write-tree", index_file=index).stdout.decode().strip()
    base = head
    if made != git(top, "rev-parse", "HEAD^{tree}").stdout.decode().strip():
        message = "rein: the folder's uncommitted changes"
        base = git(top, "commit-tree", made, "-p", head, "-m", message).stdout.decode().strip()
    git(top, "worktree", "add", "--detach", str(tree), base, timeout=GIT_SLOW_TIMEOUT_S)
    return base


def _copy(folder: Path, target: Path) -> None:
    """Every file Rein does not ignore under ``folder``, copied to ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for rel in WorkspaceFilter(folder).walk_files():
        source = folder / rel
        try:
            if not stat.S_ISREG(source.lstat().st_mode):
                continue  # a link, a FIFO, a socket: never copied
        except FileNotFoundError:
            continue
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)
