"""Whether a ``run_command`` line names a secret file (``tools.secretFiles``):
such a command asks every time (:mod:`rein.tools.command`).

A word-level check, not a shell. The line is cut into its commands (by
:func:`~rein.tools._shell_words.parse_line`, which also removes quotes, so
``cat .e""nv`` is ``cat .env``; a line it refuses, with a subshell, a
redirection or a ``$``, is cut on the shell's operators instead) and each
word is a path to look up, as written and relative to the folders the line
moved into before it: ``cd DIR`` and ``pushd DIR`` (for the commands after
them, ``(cd DIR && ...)`` included), and for that one command ``-C DIR``
(``git``, ``tar``, ``make``, ``env``; ``-CDIR`` too), ``--directory``,
``--chdir``, ``--dir``, ``--cwd``, ``--work-tree`` and the folder holding
``--git-dir``, whatever the program.

A word that is itself a command line (it holds a blank, a quote or a
shell operator: ``bash -c 'cat .env'``, ``sh -c "cd .aws && cat
credentials"``, ``eval``, ``su -c``, ``ssh host '...'``, ``xargs sh -c``,
``python -c "open('.env')"``) is checked as a line of its own, from each
folder its command is in, down to :data:`NESTING_BOUND` levels; deeper, its
pieces are looked up as written. Every piece of the whole line cut on
blanks, quotes and operators is looked up as written too.

A word holding ``*``, ``?`` or ``[`` (quoted or not: ``find -name '.e*'``
reads it as a glob) is expanded against the workspace's folders, as bash
would (a leading dot matched only when written, or when the line names
``dotglob`` or ``GLOBIGNORE``; case ignored, as secret globs do; ``**`` as
``*``, globstar's walk is not followed), and a brace
(``.{env,x}``) is expanded first; past :data:`GLOB_BOUND` folder entries the
answer is "may name one" (:data:`TOO_MANY_FILES`), asked all the same.

A word that names something there is also looked up by where it leads
(:meth:`_Check.behind`): where its symbolic links lead, a chain or a
linked folder on the way included (``cat notes`` with ``notes`` a link to
``.env``, ``cat cfg/credentials`` with ``cfg`` a link to ``.aws``), and a
regular file with more than one name is looked for among the workspace's
secret files by device and inode (a hard link named ``backup.txt`` of
``.env``), by the workspace's remembered walk
(:func:`~rein.tools.secret_walk.workspace_secret_inodes`: a folder is read
again only when its change time moved; while the walk is not whole, at most
:data:`~rein.tools.secret_walk.WALK_BOUND` entries read a check, or past
:data:`~rein.tools.secret_walk.TREE_BOUND`: "may be one", asked).

Looking a word up in more ways only ever asks more often. What a command
reads without naming it (a test suite loading ``.env``, ``grep -r``, a
variable or a computed string holding the path) is not seen;
docs/security.md says what keeps that in check.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import stat
from collections.abc import Callable, Iterator, Sequence

from rein.tools._shell_words import UnsafeCommand, parse_line
from rein.tools.secret_files import SecretFiles
from rein.tools.secret_walk import (
    TREE_BOUND,
    WALK_BOUND,
    SecretInodes,
    workspace_secret_inodes,
)

__all__ = [
    "GLOB_BOUND",
    "NESTING_BOUND",
    "TOO_MANY_FILES",
    "TOO_MANY_TO_LOOK",
    "named_in_command",
    "why_asked",
]

#: How many levels of a command line inside a word (``bash -c '...'``
#: inside ``sh -c "..."``) are checked as lines; deeper, as pieces.
NESTING_BOUND = 4
#: The most lines inside words one check looks at (then: as pieces).
_NESTED_LINES_BOUND = 64
#: The most folder entries the glob words of one command line look at.
GLOB_BOUND = 5000
#: The most words one brace expands to (``{a,b}{c,d}``: 4).
_BRACE_BOUND = 64
#: The longest word a brace is expanded in (a heredoc's JSON is no path).
_BRACE_WORD_BOUND = 1024
#: The "glob" of an answer whose glob word had too many files to look at.
TOO_MANY_FILES = "(too many files to look through)"
#: The most folder entries one check lists to tell which words name
#: something there (past it, each word is looked up with ``lstat``).
_NAMES_BOUND = 20_000
#: The "glob" of an answer whose word names a hard link and the workspace
#: was too large to look for the secret file it may be another name of.
TOO_MANY_TO_LOOK = "(a hard link in too large a workspace)"

#: What separates the words of a command line that may name a file: blanks,
#: quotes, the shell's operators, an option's ``=`` (``--env-file=.env``)
#: and ``:`` (``git show HEAD:.env``, ``scp host:.env``).
_COMMAND_WORD_BREAKS = re.compile(r"[\s'\"`=;&|<>()$:]+")
#: Where one command of a line ends (when the shell-words parser refuses
#: the line): ``&&``, ``||``, ``;``, ``|``, ``&``, a newline, a parenthesis.
_COMMAND_ENDS = re.compile(r"&&|\|\||[;|&\n()]")
#: Inside a parsed word: an option's ``=`` and a ``:`` (``HEAD:.env``).
_PART_BREAKS = re.compile(r"[=:]")
#: A word a shell or a program may read as a command line of its own.
_NESTED = re.compile(r"[\s'\"`;&|<>()$\\]")
#: A word the shell (or ``find -name``) reads as a glob.
_GLOB = re.compile(r"[*?[]")
#: The options that name the folder a command works in (``--git-dir``: the
#: folder holding it).
_FOLDER_OPTIONS = ("-C", "--directory", "--chdir", "--dir", "--cwd", "--work-tree", "--git-dir")

#: A found secret: the path a word names and the glob that makes it secret.
Found = tuple[str, str]


class _TooMany(Exception):
    """A glob word's expansion passed GLOB_BOUND entries. Kept outside the
    ReinError tree: a control-flow signal that never leaves this module
    (the check's answer says so)."""


def why_asked(found: Found) -> str:
    """Why ``run_command`` asks about a command :func:`named_in_command` found."""
    path, glob = found
    if glob == TOO_MANY_FILES:
        return (
            f"the command's glob {path} matches in folders of more than {GLOB_BOUND} entries, "
            "too many to look for a secret file among (tools.secretFiles)"
        )
    if glob == TOO_MANY_TO_LOOK:
        return (
            f"the command names {path}, a hard link, and the workspace is not looked through "
            f"yet for the secret file (tools.secretFiles) it may be another name of (more "
            f"than {WALK_BOUND} entries new or changed since the last look, or more than "
            f"{TREE_BOUND} in all)"
        )
    return f"the command names {path}, a secret file (tools.secretFiles)"


def _commands(command: str) -> tuple[list[list[str]], bool]:
    """The line's commands, each a list of words, and whether the shell-words
    parser took the line (False: cut on the shell's operators)."""
    try:
        return [
            [
                part
                for word in words
                for part in dict.fromkeys((word.text, *_PART_BREAKS.split(word.text)))
            ]
            for words in parse_line(command)
        ], True
    except UnsafeCommand:
        return [
            [w for w in _COMMAND_WORD_BREAKS.split(part) if w]
            for part in _COMMAND_ENDS.split(command)
        ], False


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
    if folder is None:
        return _relative(word, root_prefix)
    if word.startswith("/"):
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


def _command_folders(
    words: Sequence[str],
    folder: str | None,
    root_prefix: str,
    resolved: Callable[[str | None, str], str | None],
) -> Iterator[str]:
    """The folders one command's paths may be relative to: ``-C DIR`` (or
    ``-CDIR``), ``--directory``, ``--chdir``, ``--dir``, ``--cwd``,
    ``--work-tree`` (``=DIR`` or the next word), the folder holding
    ``--git-dir``; a folder written with ``..`` also where the kernel finds
    it (``resolved``: links first)."""
    for i, word in enumerate(words):
        given: str | None = None
        option, sep, value = word.partition("=")
        if word in _FOLDER_OPTIONS and i + 1 < len(words):
            given = words[i + 1]
        elif sep and option in _FOLDER_OPTIONS:
            given = value
        elif word.startswith("-C") and len(word) > 2 and not word.startswith("--"):
            given = word[2:]
        if given is None:
            continue
        if option == "--git-dir":
            given = posixpath.dirname(posixpath.normpath(given)) or "."
        found = (
            _relative(given, root_prefix)
            if given.startswith("/")
            else _relative(posixpath.join(folder or "", given), root_prefix)
        )
        if found is not None or given in (".", ""):
            yield found or "."
        real = resolved(folder, given)
        if real is not None:
            yield real


def _brace_group(word: str) -> tuple[int, int, list[int]] | None:
    """The first ``{...}`` of ``word`` to close that holds a comma at its
    own level: its start, its end and its commas (one pass)."""
    open_groups: list[tuple[int, list[int]]] = []
    for i, char in enumerate(word):
        if char == "{":
            open_groups.append((i, []))
        elif char == "}" and open_groups:
            start, commas = open_groups.pop()
            if commas:
                return start, i, commas
        elif char == "," and open_groups:
            open_groups[-1][1].append(i)
    return None


def _braces(word: str) -> list[str]:
    """The words bash's brace expansion makes of ``word`` (``.{env,x}``:
    ``.env``, ``.x``), at most :data:`_BRACE_BOUND`; a word longer than
    :data:`_BRACE_WORD_BOUND` characters is left as it is."""
    group = _brace_group(word) if len(word) <= _BRACE_WORD_BOUND else None
    if group is None:
        return [word]
    start, end, commas = group
    out: list[str] = []
    for a, b in zip([start, *commas], [*commas, end], strict=True):
        out.extend(_braces(word[:start] + word[a + 1 : b] + word[end + 1 :]))
        if len(out) >= _BRACE_BOUND:
            return out[:_BRACE_BOUND]
    return out


class _Check:
    """One command line's check: the rules, the workspace and the bounds
    spent so far."""

    def __init__(self, secret_files: SecretFiles, root: str) -> None:
        self.rules = secret_files
        self.root = root
        self.prefix = root.rstrip("/") + "/"
        self.nested: set[tuple[str, str | None]] = set()
        self.entries = 0
        #: The words (and their folders) looked up and found to name none.
        self.clean: set[tuple[str, str | None]] = set()
        #: Each folder's entries (name, is a folder) as the globs listed it.
        self.listed: dict[str, list[tuple[str, bool]]] = {}
        #: ``*`` matches a leading dot only where the line asks for it.
        self.dotglob = False
        self.real_root = os.path.realpath(root)
        #: Each folder's real path (after symlinks), as looked up.
        self.real_folders: dict[str, str] = {}
        #: Each folder's entry names, lower case (None: not listed, too many).
        self.names: dict[str, frozenset[str] | None] = {}
        self.named_entries = 0
        #: The paths :meth:`behind` looked up, and what it found.
        self.behind_seen: dict[str, Found | None] = {}
        #: The workspace's secret files by inode, walked for the first hard
        #: link named (None: not yet), and whether the walk stopped.
        self.inodes: tuple[SecretInodes, bool] | None = None

    def line(self, command: str, start: str | None, depth: int) -> Found | None:
        """The first secret ``command`` names, run from the folder ``start``."""
        folder = start  # where the line's cd's left it (None: the root)
        commands, parsed = _commands(command)
        for words in commands:
            if not words:
                continue
            # As written, and under where the line moved to: only ever asks more.
            bases: list[str | None] = [*([folder] if folder is not None else [])]
            bases.extend(_command_folders(words, folder, self.prefix, self.resolved))
            bases.append(None)
            bases = list(dict.fromkeys(bases))
            # Each word, or the line it holds; then those words whole (a file
            # name may hold a blank): the path found is the one named.
            nested = {w for w in words if parsed and _NESTED.search(w)}
            for word in words:
                for base in bases:
                    found = (
                        self.inner(word, base, depth) if word in nested else self.word(word, base)
                    )
                    if found is not None:
                        return found
            for word in (w for w in words if w in nested):
                for base in bases:
                    found = self.word(word, base)
                    if found is not None:
                        return found
            if parsed:
                moves = [0] if words[0] in ("cd", "pushd") else []
            else:  # cut on operators: a cd anywhere in the command counts
                moves = [i for i, w in enumerate(words) if w in ("cd", "pushd")]
            for i in moves:
                args = [w for w in words[i + 1 :] if not w.startswith("-")]
                real = self.resolved(folder, args[0]) if args else None
                folder = real if real is not None else _moved_to(words[i:], folder, self.prefix)
        return None

    def inner(self, word: str, base: str | None, depth: int) -> Found | None:
        """A word that may be a command line of its own, run from ``base``."""
        if (word, base) in self.nested:
            return None
        self.nested.add((word, base))
        if depth < NESTING_BOUND and len(self.nested) <= _NESTED_LINES_BOUND:
            return self.line(word, base, depth + 1)
        for piece in _COMMAND_WORD_BREAKS.split(word):
            found = self.word(piece, base)
            if found is not None:
                return found
        return None

    def word(self, word: str, base: str | None) -> Found | None:
        """The secret the word names under ``base``: as written, or as the
        files its glob or brace expands to."""
        if (word, base) in self.clean:
            return None
        self.clean.add((word, base))
        for each in _braces(word) if "{" in word else [word]:
            # As written (``..`` taken as text) and, with a ``..``, where the
            # kernel finds it: ``sso/../credentials`` with ``sso`` a link.
            for path in (_under(base, each, self.prefix), self.resolved(base, each)):
                if path is None:
                    continue
                found = self.path(path)
                if found is not None:
                    return found
        return None

    def path(self, path: str) -> Found | None:
        """The secret the workspace-relative ``path`` (maybe a glob) names."""
        found = self.named(path)
        if found is not None:
            return found
        if _GLOB.search(path):
            try:
                return self.expanded(path)
            except _TooMany:
                return path, TOO_MANY_FILES
        return None

    def resolved(self, base: str | None, word: str) -> str | None:
        """Where the kernel finds ``word`` (written with a ``..``) from the
        folder ``base``: each link followed before the ``..`` after it
        (``sso/../credentials``, ``sso`` a link to ``infra/.aws/sso``:
        ``infra/.aws/credentials``), workspace-relative; None for a word
        without ``..`` or leading outside the workspace."""
        word = word.strip()
        if ".." not in word.split("/") or word.startswith("~"):
            return None
        joined = word if word.startswith("/") else os.path.join(self.root, base or "", word)
        try:
            real = os.path.realpath(joined)
        except (OSError, ValueError):
            return None
        prefix = self.real_root.rstrip("/") + "/"
        return real[len(prefix) :].replace(os.sep, "/") if real.startswith(prefix) else None

    def behind(self, path: str) -> Found | None:
        """The secret file the workspace's ``path`` is another name of: where
        its symlinks lead (a linked folder on the way, a chain), or, for a
        regular file with more than one name, the secret file of the same
        device and inode. None when ``path`` names nothing there (most
        words are no file: told by the folder's listing, once per folder)."""
        if path in self.behind_seen:
            return self.behind_seen[path]
        found = self.behind_seen[path] = self._behind(path)
        return found

    def _behind(self, path: str) -> Found | None:
        folder, _, name = path.rpartition("/")
        if not self.may_be_there(folder, name):
            return None
        full = os.path.join(self.root, *path.split("/"))
        try:
            st = os.lstat(full)
        except (OSError, ValueError):
            return None
        if stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(full)
        else:
            real = os.path.join(self.real_folder(folder), name)
        if real == self.real_root or not real.startswith(self.real_root.rstrip("/") + "/"):
            # Outside the workspace (a virtual environment's python leading
            # to the interpreter): the OS sandbox's to hide, as a path
            # outside named as it is; its link count is no workspace's.
            return None
        target = real[len(self.real_root.rstrip("/")) + 1 :].replace(os.sep, "/")
        if target != path:
            glob = self.rules.matched_by(target)
            if glob is not None:
                return f"{path} (which leads to {target})", glob
        if stat.S_ISLNK(st.st_mode):
            try:
                st = os.stat(full)
            except OSError:
                return None
        if not stat.S_ISREG(st.st_mode) or st.st_nlink < 2:
            return None
        if self.inodes is None:
            self.inodes = workspace_secret_inodes(self.root, self.rules)
        inodes, stopped = self.inodes
        other = inodes.get((st.st_dev, st.st_ino))
        if other is not None:
            if other[0] == path:
                return None  # the secret file itself, by its own name: looked up above
            return f"{path} (another name of {other[0]})", other[1]
        return (path, TOO_MANY_TO_LOOK) if stopped else None

    def may_be_there(self, folder: str, name: str) -> bool:
        """Whether the workspace's ``folder`` ("" the root) may hold
        ``name``: its listing (case ignored) says, or, past
        :data:`_NAMES_BOUND` entries listed, an ``lstat`` will."""
        if folder not in self.names:
            self.names[folder] = self.listed_names(folder)
        names = self.names[folder]
        return names is None or name.lower() in names

    def listed_names(self, folder: str) -> frozenset[str] | None:
        """The names the workspace's ``folder`` holds, lower case; None once
        :data:`_NAMES_BOUND` entries are listed in all, the listing stopped
        there (one huge folder is not read whole on the event loop)."""
        names: set[str] = set()
        try:
            with os.scandir(os.path.join(self.root, *folder.split("/"))) as entries:
                for entry in entries:
                    self.named_entries += 1
                    if self.named_entries > _NAMES_BOUND:
                        return None
                    names.add(entry.name.lower())
        except (OSError, ValueError):
            pass
        return frozenset(names)

    def real_folder(self, folder: str) -> str:
        """The real path of the workspace's ``folder`` ("" the root), once
        per check."""
        if folder not in self.real_folders:
            self.real_folders[folder] = os.path.realpath(
                os.path.join(self.root, *folder.split("/")) if folder else self.root
            )
        return self.real_folders[folder]

    def listing(self, folder: str) -> list[tuple[str, bool]]:
        """The entries of the workspace's ``folder``, each listed once per
        check; :class:`_TooMany` past :data:`GLOB_BOUND` entries in all."""
        if folder not in self.listed:
            found: list[tuple[str, bool]] = []
            try:
                with os.scandir(os.path.join(self.root, folder)) as entries:
                    for entry in entries:
                        self.entries += 1
                        if self.entries > GLOB_BOUND:
                            raise _TooMany
                        found.append((entry.name, entry.is_dir()))
            except OSError:
                pass
            self.listed[folder] = found
        return self.listed[folder]

    def expanded(self, pattern: str) -> Found | None:
        """The first secret file of the workspace the glob ``pattern``
        (workspace-relative) matches, part by part as the shell expands it."""
        parts = pattern.split("/")
        current = [""]
        for i, part in enumerate(parts):
            if not _GLOB.search(part):
                current = [posixpath.join(c, part) for c in current]
                continue
            # bash's [^...] is fnmatch's [!...]; case is ignored, as secret globs do.
            regex = re.compile(
                fnmatch.translate(part.replace("[^", "[!")), re.IGNORECASE | re.DOTALL
            )
            hidden = self.dotglob or part.startswith(".")
            last = i == len(parts) - 1
            matched: list[str] = []
            for folder in current:
                for name, is_dir in self.listing(folder):
                    if not hidden and name.startswith("."):
                        continue  # as bash: a leading dot is matched explicitly
                    if regex.match(name) and (last or is_dir):
                        matched.append(posixpath.join(folder, name))
            current = matched
        for path in current:
            found = self.named(path)
            if found is not None:
                return found
        return None

    def named(self, path: str) -> Found | None:
        """The secret ``path`` (no glob) is by its name, or by where its
        links lead (:meth:`behind`)."""
        glob = self.rules.matched_by(path)
        if glob is not None:
            return path, glob
        return self.behind(path)


def named_in_command(command: str, secret_files: SecretFiles, root: str) -> Found | None:
    """The first path ``command`` names that is a secret file of the
    workspace ``root``, and the glob that makes it one (``cat .env``,
    ``source ./.env``, ``--env-file=.env``, ``root``'s absolute path, ``cd
    .aws && cat credentials``, ``bash -c 'cat .env'``, ``cat .e*``); None
    when none does. ``(glob word, TOO_MANY_FILES)`` when a glob word's
    folders were too large to look through. A path outside the workspace
    (``~/.npmrc``) is the OS sandbox's to hide."""
    if not secret_files:
        return None
    check = _Check(secret_files, root)
    check.dotglob = "dotglob" in command or "GLOBIGNORE" in command
    found = check.line(command, None, 0)
    if found is not None:
        return found
    # Every piece of the line, quotes and operators cut, as written.
    for piece in _COMMAND_WORD_BREAKS.split(command):
        found = check.word(piece, None)
        if found is not None:
            return found
    return None
