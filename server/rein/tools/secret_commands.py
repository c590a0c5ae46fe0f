"""Whether a ``run_command`` line names a secret file (``tools.secretFiles``):
such a command asks every time (:mod:`rein.tools.command`).

A word-level check, not a shell: the line is cut into its commands (by
:func:`~rein.tools._shell_words.parse_line`, which also removes quotes, so
``cat .e""nv`` is ``cat .env``; a line it refuses, with a subshell, a
redirection or a ``$``, is cut on the shell's operators instead) and each
word is a path to look up, as written and relative to the folders the line
moved into before it: ``cd DIR`` and ``pushd DIR`` (for the commands after
them, ``(cd DIR && ...)`` included), ``git -C DIR``, ``--git-dir=DIR/.git``
and ``--work-tree=DIR`` (for that ``git`` command). Looking a word up both
as written and under those folders only ever asks more often. What a
command reads without naming it (a test suite loading ``.env``, ``grep
-r``, a variable holding the path) is not seen; docs/security.md says what
keeps that in check.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Sequence

from rein.tools._shell_words import UnsafeCommand, parse_line
from rein.tools.secret_files import SecretFiles

__all__ = ["named_in_command"]

#: What separates the words of a command line that may name a file: blanks,
#: quotes, the shell's operators, an option's ``=`` (``--env-file=.env``)
#: and ``:`` (``git show HEAD:.env``, ``scp host:.env``).
_COMMAND_WORD_BREAKS = re.compile(r"[\s'\"`=;&|<>()$:]+")
#: Where one command of a line ends (when the shell-words parser refuses
#: the line): ``&&``, ``||``, ``;``, ``|``, ``&``, a newline, a parenthesis.
_COMMAND_ENDS = re.compile(r"&&|\|\||[;|&\n()]")
#: Inside a parsed word: an option's ``=`` and a ``:`` (``HEAD:.env``).
_PART_BREAKS = re.compile(r"[=:]")


def _commands(command: str) -> list[list[str]]:
    """The line's commands, each a list of words."""
    try:
        return [
            [
                part
                for word in words
                for part in dict.fromkeys((word.text, *_PART_BREAKS.split(word.text)))
            ]
            for words in parse_line(command)
        ]
    except UnsafeCommand:
        return [
            [w for w in _COMMAND_WORD_BREAKS.split(part) if w]
            for part in _COMMAND_ENDS.split(command)
        ]


def _relative(word: str, root_prefix: str) -> str | None:
    """``word`` as a workspace-relative path (normalised: ``.aws/./x``,
    ``x/../.env``), or None when it is none (an option, outside)."""
    word = word.strip()
    if not word:
        return None
    path = posixpath.normpath(word)
    if path.startswith(root_prefix):
        path = path[len(root_prefix) :]
    if not path or path == "." or path.startswith(("-", "/", "~", "..")):
        return None
    return path


def _under(folder: str | None, word: str, root_prefix: str) -> str | None:
    """``word`` relative to ``folder`` (workspace-relative; None: the root)."""
    if folder is None or word.startswith("/"):
        return None
    return _relative(posixpath.join(folder, word), root_prefix)


def _moved_to(words: Sequence[str], folder: str | None, root_prefix: str) -> str | None:
    """The folder a ``cd DIR`` / ``pushd DIR`` goes to, from ``folder``."""
    args = [w for w in words[1:] if not w.startswith("-")]
    if not args:
        return folder
    target = args[0]
    if target.startswith("/"):
        return _relative(target, root_prefix) if (target + "/").startswith(root_prefix) else None
    return _relative(posixpath.join(folder or "", target), root_prefix)


def _git_folders(words: Sequence[str], folder: str | None, root_prefix: str) -> Iterator[str]:
    """The folders a ``git`` command's paths are relative to: ``-C DIR``,
    ``--work-tree=DIR``, the folder holding ``--git-dir=DIR``."""
    for i, word in enumerate(words):
        given: str | None = None
        parent = False
        if word in ("-C", "--work-tree", "--git-dir") and i + 1 < len(words):
            given, parent = words[i + 1], word == "--git-dir"
        elif word.startswith(("--work-tree=", "--git-dir=")):
            given, parent = word.split("=", 1)[1], word.startswith("--git-dir=")
        if given is None:
            continue
        if parent:
            given = posixpath.dirname(posixpath.normpath(given)) or "."
        found = (
            _relative(given, root_prefix)
            if given.startswith("/")
            else _relative(posixpath.join(folder or "", given), root_prefix)
        )
        if found is not None or given in (".", ""):
            yield found or "."


def named_in_command(command: str, secret_files: SecretFiles, root: str) -> tuple[str, str] | None:
    """The first path ``command`` names that is a secret file of the
    workspace ``root``, and the glob that makes it one (``cat .env``,
    ``source ./.env``, ``--env-file=.env``, ``root``'s absolute path, ``cd
    .aws && cat credentials``); None when none does. A path outside the
    workspace (``~/.npmrc``) is the OS sandbox's to hide."""
    if not secret_files:
        return None
    prefix = root.rstrip("/") + "/"
    folder: str | None = None  # where the line's cd's left it (None: the root)
    for words in _commands(command):
        if not words:
            continue
        # As written, and under where the line moved to: only ever asks more.
        bases: list[str | None] = [*([folder] if folder is not None else [])]
        if words[0] == "git":
            bases.extend(_git_folders(words, folder, prefix))
        bases.append(None)
        for word in words:
            for base in bases:
                path = _relative(word, prefix) if base is None else _under(base, word, prefix)
                glob = secret_files.matched_by(path) if path is not None else None
                if path is not None and glob is not None:
                    return path, glob
        if words[0] in ("cd", "pushd"):
            folder = _moved_to(words, folder, prefix)
    return None
