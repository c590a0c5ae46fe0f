"""The environment of the server's children: without secrets.

Every process Rein starts for the workspace (``run_command``, the gates'
installs and checks, previews, ripgrep) gets :func:`child_environment`: the
server's environment minus every variable that holds a secret, so a model
that runs ``env`` or a test that prints its environment never sees a
provider key. A variable is a secret when its name is one a configured
provider reads its key from (:func:`remember_secret_name`), or when it looks
like one (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, ...).
The configuration passes one on explicitly (``tools.passEnv``); an explicit
``extra`` mapping (a preview's configured env) is added, as configured.

Last comes git's configuration for every child (:func:`git_safety`, through
``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``, after any
the environment already has): ``safe.bareRepository=explicit``, so a folder
whose files the model wrote (``HEAD``, ``config``, ``objects/``, ``refs/``)
is never taken for a bare repository whose ``config`` runs commands
(``core.fsmonitor``) when an allowed ``git status`` looks at it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "GIT_LOCATION",
    "GIT_SAFETY",
    "child_environment",
    "forget_git_location",
    "git_safety",
    "is_provider_key_name",
    "is_secret_name",
    "remember_git_location",
    "remember_secret_name",
]

_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|APIKEY|TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD|ACCESS_KEY|"
    r"PRIVATE_KEY|CREDENTIALS?|AUTH)$",
    re.IGNORECASE,
)

_secret_names: set[str] = set()

#: The git configuration every child gets, as (key, value).
GIT_SAFETY: tuple[tuple[str, str], ...] = (("safe.bareRepository", "explicit"),)


#: The variables that point git at a repository, an index or a work tree
#: (git's own ``rev-parse --local-env-vars``, less the configuration ones):
#: set when the server was started from a git hook, they would turn a
#: child's ``git add`` in an isolated copy onto the person's repository.
GIT_LOCATION: tuple[str, ...] = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_QUARANTINE_PATH",
    "GIT_NAMESPACE",
)


#: The folders of isolated copies (:func:`forget_git_location`).
_isolated_folders: set[Path] = set()


def forget_git_location(folder: str | os.PathLike[str]) -> None:
    """A child working in ``folder`` (an isolated copy) or under it gets
    none of :data:`GIT_LOCATION` from :func:`child_environment`: it must
    find the copy's repository from its folder. The server's own
    environment, and every other child's, keeps them."""
    _isolated_folders.add(Path(folder).resolve())


def remember_git_location(folder: str | os.PathLike[str]) -> None:
    """``folder``'s copy is gone: its children are like any other again."""
    _isolated_folders.discard(Path(folder).resolve())


def _isolated(cwd: str | os.PathLike[str] | None) -> bool:
    if cwd is None or not _isolated_folders:
        return False
    where = Path(cwd).resolve()
    return any(where == folder or folder in where.parents for folder in _isolated_folders)


def remember_secret_name(name: str | None) -> None:
    """A variable a provider reads its key from: never passed to a child."""
    if name:
        _secret_names.add(name)


def is_provider_key_name(name: str) -> bool:
    """Whether ``name`` is a variable a configured provider reads its key
    from (:func:`remember_secret_name`), not only one that looks secret."""
    return name in _secret_names


def is_secret_name(name: str) -> bool:
    return name in _secret_names or _SECRET_NAME.search(name) is not None


#: Variables that describe the server's own process, never a child's:
#: pytest-xdist's, when Rein runs in one of its workers (a child pytest took
#: itself for a worker and skipped what a worker skips: the tests gate's
#: recorder its early start, so a conftest.py's import went unseen).
HOST_ONLY: tuple[str, ...] = (
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
    "PYTEST_XDIST_TESTRUNUID",
)


def child_environment(
    extra: Mapping[str, str] | None = None,
    *,
    pass_env: Iterable[str] = (),
    cwd: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """The server's environment without secrets (nor :data:`HOST_ONLY`); ``pass_env`` names are
    kept even when they look secret; ``extra`` is added as given. A child
    that works in ``cwd``, an isolated copy (:func:`forget_git_location`),
    gets none of :data:`GIT_LOCATION`."""
    keep = set(pass_env)
    drop = set(GIT_LOCATION) if _isolated(cwd) else set()
    drop |= set(HOST_ONLY)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in drop and (k in keep or not is_secret_name(k))
    }
    if extra:
        env.update(extra)
    env.update(git_safety(env))
    return env


def git_safety(env: Mapping[str, str]) -> dict[str, str]:
    """The variables that add :data:`GIT_SAFETY` to ``env``'s git
    configuration: numbered after the entries ``env`` has (a count that is
    not a number is replaced: git would refuse to run with it)."""
    try:
        start = max(0, int(env.get("GIT_CONFIG_COUNT", "0")))
    except ValueError:
        start = 0
    added = {"GIT_CONFIG_COUNT": str(start + len(GIT_SAFETY))}
    for offset, (key, value) in enumerate(GIT_SAFETY):
        added[f"GIT_CONFIG_KEY_{start + offset}"] = key
        added[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    return added
