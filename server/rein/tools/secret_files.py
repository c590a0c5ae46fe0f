"""Secret files: what no tool shows the model (``tools.secretFiles``).

A project's ``.env``, an ``.npmrc`` or ``.pypirc`` holding a registry token,
``.netrc``, ``.git-credentials``, private keys (``id_rsa``, ``*.pem``,
``*.key``), cloud credentials (``credentials.json``, ``.aws/credentials``,
``.docker/config.json``), ``secrets.yaml``: a person expects none of it to
reach a model request or the session store. Every path by which a tool or
the session's set-up reads a workspace file refuses these, with a result the
model can read (:func:`secret_refusal`): ``read_file``, ``grep`` (the files
are skipped, a search of one is refused), a CLAUDE.md's ``@import``, an
instruction file, an attachment the person sends, and the ``@file`` a slash
command names, the navigation tools and an ACP client's embedded resource.
Listings name such a file (``list_dir`` marks it secret) and never show
what it holds; a ``run_command`` that names one asks every time. ``edit_file`` refuses them (its diff
and its "not found" hints would show the file's text); ``write_file``,
``delete_file`` and ``move_file`` ask the person every time.

A glob names files (:func:`glob_matches`): a name at any depth unless it
starts with ``/``, case ignored, ``dir/`` or ``dir/**`` for a folder's
files; unlike ``approval.denyGlobs`` a glob does not cover a folder of that
name (a virtual environment called ``.env`` is not a secret). A glob
starting with ``!`` is an exception (``!.env.example``: a template holds
no secret). :class:`SecretFiles` is the list in force: the person's own
(``tools.secretFiles``, the defaults when unset; ``[]`` turns it off) and
what a workspace's settings add (``tools.workspaceSecretFiles``, which the
editor extension fills from the workspace's and folders' values of
``rein.tools.secretFiles``). A workspace only adds: its exceptions (``!``)
are refused by the setting's validation, so an untrusted workspace never
unlocks a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from rein.harness.errors import ToolError
from rein.tools._globs import glob_regex

__all__ = [
    "DEFAULT_SECRET_FILES",
    "DEFAULT_SECRET_RULES",
    "NO_SECRET_FILES",
    "SETTING",
    "SecretFileError",
    "SecretFiles",
    "glob_matches",
    "secret_note",
    "secret_refusal",
]

#: The setting's name, as the messages say it.
SETTING = "tools.secretFiles"

#: The default list: credentials people keep in a project, and the
#: templates of ``.env`` that are not secrets.
DEFAULT_SECRET_FILES: tuple[str, ...] = (
    ".env",
    ".env.*",
    "!.env.example",
    "!.env.sample",
    "!.env.template",
    ".envrc",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "credentials.json",
    "service-account*.json",
    ".aws/credentials",
    ".docker/config.json",
    ".kube/config",
    "secrets.yaml",
    "secrets.yml",
    "secrets.json",
    "secrets.toml",
    ".streamlit/secrets.toml",
    "*.tfvars",
)


@dataclass(frozen=True, slots=True)
class SecretFiles:
    """The secret-file globs in force: ``globs`` (the person's, with ``!``
    exceptions) and ``added`` (a workspace's, plain globs only)."""

    globs: tuple[str, ...] = DEFAULT_SECRET_FILES
    added: tuple[str, ...] = ()

    @classmethod
    def of(cls, globs: Iterable[str], added: Iterable[str] = ()) -> SecretFiles:
        return cls(tuple(globs), tuple(g for g in added if not g.startswith("!")))

    def matched_by(self, *paths: str) -> str | None:
        """The glob that makes one of ``paths`` (workspace-relative POSIX
        paths: as written, and where a symlink leads) a secret file, or None.
        An exception (``!glob``) of the person's list lets a path go unless
        a workspace's glob names it."""
        candidates = [p for p in dict.fromkeys(paths) if p and p != "."]
        if not candidates:
            return None
        added, positive, exceptions = _compiled(self.globs, self.added)
        # One combined regex per kind answers the common case (no match);
        # the glob to name is looked for only when there is one.
        for path in candidates:
            if _matches(added, path):
                return next(g for g in self.added if glob_matches(g, path))
        for path in candidates:
            if not _matches(positive, path) or _matches(exceptions, path):
                continue
            return next(g for g in self.globs if not g.startswith("!") and glob_matches(g, path))
        return None

    def __bool__(self) -> bool:
        return any(not g.startswith("!") for g in (*self.globs, *self.added))


def _regex(glob: str) -> re.Pattern[str]:
    """One glob's regex over a whole workspace-relative path: a name at any
    depth unless it starts with ``/``; ``dir/`` stands for ``dir/**``."""
    inner = glob.strip("/") + ("/**" if glob.endswith("/") else "")
    return glob_regex(inner, anchored=glob.startswith("/"), ignore_case=True)


def glob_matches(glob: str, path: str) -> bool:
    """Whether ``glob`` (no ``!``) names the file ``path``. Unlike
    ``approval.denyGlobs`` a glob names files, not the folders above them:
    ``.env`` is not a virtual environment's folder of that name and what
    it holds; ``secrets/`` (or ``secrets/**``) names a folder's files."""
    return _regex(glob).match(path) is not None


#: A list's regexes: one for the globs that name a file at any depth by
#: its name alone (matched against a path's last part), one for the others
#: (anchored with ``/``, or holding a ``/`` or ``**``: the whole path).
_Regexes = tuple[re.Pattern[str] | None, re.Pattern[str] | None]


def _any_of(globs: Iterable[str]) -> _Regexes:
    """Regexes matching what any of ``globs`` matches (:func:`glob_matches`)."""
    names: list[str] = []
    others: list[str] = []
    for glob in globs:
        if not glob.startswith("/") and "/" not in glob and "**" not in glob:
            names.append(glob_regex(glob, anchored=True, ignore_case=True).pattern)
        else:
            others.append(_regex(glob).pattern)
    flags = re.DOTALL | re.IGNORECASE
    return (
        re.compile("|".join(f"(?:{p})" for p in names), flags) if names else None,
        re.compile("|".join(f"(?:{p})" for p in others), flags) if others else None,
    )


@lru_cache(maxsize=64)
def _compiled(
    globs: tuple[str, ...], added: tuple[str, ...]
) -> tuple[_Regexes, _Regexes, _Regexes]:
    """The added, the person's and the exceptions' regexes of a list."""
    return (
        _any_of(added),
        _any_of(g for g in globs if not g.startswith("!")),
        _any_of(g[1:] for g in globs if g.startswith("!")),
    )


def _matches(regexes: _Regexes, path: str) -> bool:
    names, others = regexes
    if names is not None and names.match(path.rpartition("/")[2]):
        return True
    return others is not None and others.match(path) is not None


#: The default list in force (nothing added by a workspace).
DEFAULT_SECRET_RULES = SecretFiles()
#: No secret files (``tools.secretFiles: []`` and nothing added).
NO_SECRET_FILES = SecretFiles((), ())


class SecretFileError(ToolError):
    """A tool was asked for a secret file's content (the model reads why)."""


def secret_refusal(rel: str, glob: str) -> str:
    """What a tool answers for a secret file: the model reads it."""
    return (
        f"{rel} is a secret file ({SETTING}: {glob!r}); its content is not shown to you. "
        "If you need something from it, ask the person (for example which variable names "
        "it defines)."
    )


def secret_note(name: str, glob: str) -> str:
    """The note of a set-up read (an import, an instruction file) that left
    out a secret file."""
    return f"{name} was not read: it is a secret file ({SETTING}: {glob!r})."
