"""git as a child process, for the isolation package: bounded, with an
environment that keeps the person's configuration out of what matters
(no hooks, no pager, no prompt) and names the commits Rein makes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rein.harness.errors import ReinError
from rein.process.environment import child_environment, git_safety

__all__ = ["GitError", "git", "is_git_work_tree"]

#: No git command of this package may take longer (a hung git is an error).
GIT_TIMEOUT_S = 60.0
#: ... except the ones that read or write every file of a repository
#: (hashing the folder, checking a worktree out): a big one takes longer.
GIT_SLOW_TIMEOUT_S = 600.0


class GitError(ReinError):
    """A git command failed: the message names it and carries git's stderr."""


def _env() -> dict[str, str]:
    """The children's environment (no secrets, :func:`~rein.process.
    environment.child_environment`) without the person's ``GIT_*``
    variables (a ``GIT_INDEX_FILE`` or ``GIT_DIR`` must not point these
    commands at the person's index), then git's safety settings."""
    env = {
        k: v
        for k, v in child_environment().items()
        if not k.startswith("GIT_") or k in ("GIT_EXEC_PATH", "GIT_CONFIG_NOSYSTEM")
    }
    env.update(git_safety(env))
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_PAGER="cat",
        GIT_AUTHOR_NAME="Rein",
        GIT_AUTHOR_EMAIL="rein@localhost",
        GIT_COMMITTER_NAME="Rein",
        GIT_COMMITTER_EMAIL="rein@localhost",
    )
    return env


def git(
    cwd: Path,
    *args: str,
    input_bytes: bytes | None = None,
    check: bool = True,
    index_file: Path | None = None,
    timeout: float = GIT_TIMEOUT_S,
) -> subprocess.CompletedProcess[bytes]:
    """``git -C cwd args...`` with hooks and the fsmonitor off and Rein's commits unsigned
    (never with the person's key, never asking for a passphrase); raises
    :class:`GitError` on a non-zero exit when ``check``. ``index_file``:
    a temporary index used instead of the repository's own; ``timeout``:
    the bound in seconds."""
    cmd = [
        "git",
        "--no-optional-locks",
        "-C",
        str(cwd),
        "-c",
        "core.hooksPath=/dev/null",
        # A command git would run on status, add and checkout: the
        # repository's, and it may have come with a downloaded folder.
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.quotepath=off",
        "-c",
        "commit.gpgSign=false",
    ]
    env = _env()
    if index_file is not None:
        env["GIT_INDEX_FILE"] = str(index_file)
    try:
        done = subprocess.run(
            [*cmd, *args],
            input=input_bytes,
            capture_output=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed (needed for an isolated session)") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {' '.join(args)} took over {timeout:g} s in {cwd}") from exc
    if check and done.returncode != 0:
        err = done.stderr.decode(errors="replace").strip()
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {err}")
    return done


def is_git_work_tree(folder: Path) -> bool:
    """True when ``folder`` is inside a git work tree with at least one commit."""
    try:
        inside = git(folder, "rev-parse", "--is-inside-work-tree", check=False)
        head = git(folder, "rev-parse", "--verify", "-q", "HEAD", check=False)
    except GitError:
        return False
    return inside.returncode == 0 and inside.stdout.strip() == b"true" and head.returncode == 0
