"""Make an isolated copy of the person's folder for one session.

A git folder gets a worktree of its repository at HEAD (``git worktree add
--detach``) plus the person's uncommitted changes: tracked modifications
and staged changes (``git diff HEAD --binary``, applied in the worktree)
and untracked files that are not ignored (copied). The person's index,
stash and branches are not touched. What the run starts from is then
committed in the worktree (its own index, a detached HEAD), so the base of
the run's changes is a commit: ``IsolatedRecord.base``.

A folder that is not in a git repository is copied twice with Rein's
ignore rules (:class:`~rein.tools.ignore.WorkspaceFilter`): ``tree/`` for
the session, ``base/`` as it was.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

from rein.harness.errors import ConfigError
from rein.isolation._git import git, is_git_work_tree
from rein.isolation.cleanup import remove_isolated
from rein.isolation.registry import IsolatedRecord, Registry
from rein.tools.ignore import WorkspaceFilter

__all__ = ["create_isolated"]


def create_isolated(folder: Path, registry: Registry, session_id: str) -> IsolatedRecord:
    """The isolated copy of ``folder`` for ``session_id``, recorded as
    running (owned by this process) before anything is made, so a crash
    half-way is cleaned like any other."""
    folder = folder.resolve()
    if not folder.is_dir():
        raise ConfigError(f"the workspace {folder} is not a folder")
    place = registry.place(session_id)
    if place.exists():
        raise ConfigError(f"an isolated session {session_id} already exists at {place}")
    git_folder = is_git_work_tree(folder)
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
        created=Registry.now(),
    )
    registry.save(record)
    try:
        place.mkdir(parents=True)
        if git_folder:
            record = replace(record, base=_git_worktree(top, Path(record.tree)))
            registry.save(record)
        else:
            _copy(folder, Path(record.base))
            _copy(folder, Path(record.tree))
    except BaseException:
        remove_isolated(registry, record)
        raise
    return record


def _git_worktree(top: Path, tree: Path) -> str:
    """A detached worktree of ``top`` at HEAD with the uncommitted changes
    on it, committed there; returns that commit."""
    git(top, "worktree", "add", "--detach", str(tree), "HEAD")
    diff = git(top, "diff", "HEAD", "--binary").stdout
    if diff.strip():
        git(tree, "apply", "--binary", "--whitespace=nowarn", input_bytes=diff)
    listed = git(top, "ls-files", "--others", "--exclude-standard", "-z").stdout
    for rel in filter(None, listed.decode(errors="surrogateescape").split("\0")):
        source = top / rel
        if source.is_file() and not source.is_symlink():
            target = tree / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git(tree, "add", "-A")
    if git(tree, "diff", "--cached", "--quiet", check=False).returncode != 0:
        git(tree, "commit", "-q", "--no-verify", "-m", "rein: the folder's uncommitted changes")
    return git(tree, "rev-parse", "HEAD").stdout.decode().strip()


def _copy(folder: Path, target: Path) -> None:
    """Every file Rein does not ignore under ``folder``, copied to ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for rel in WorkspaceFilter(folder).walk_files():
        source = folder / rel
        if source.is_symlink():
            continue
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)
