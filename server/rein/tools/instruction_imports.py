"""Claude Code's imports in a CLAUDE.md: ``@path/to/file`` brings that
file's text in with the file that names it.

As Claude Code reads them: a path after an ``@`` that starts the text or
follows a space, relative to the importing file's folder (or absolute),
up to the next space; not inside a code span or a fenced code block; an
imported file's own imports followed, at most :data:`MAX_HOPS` deep. A
name that is no file (``@team``, a mention) is text, as there.

Every imported file is read under the same sandbox as the instruction
files: inside the workspace only, never a protected file, a symlink out or
a hard link. ``@~/...`` (a file of the home folder) is never read from a
workspace's file: a repository would choose what of the person's home
reaches the model; a note says so. At most :data:`MAX_IMPORTS` files are
brought in for one workspace.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["IMPORTING_FILES", "MAX_HOPS", "MAX_IMPORTS", "Import", "imports_of", "mentions"]

#: The instruction files whose ``@path`` lines are imports (by file name).
IMPORTING_FILES = frozenset({"CLAUDE.md"})
#: How deep an import's imports are followed (Claude Code's bound).
MAX_HOPS = 5
#: The most files imported for one workspace.
MAX_IMPORTS = 20

_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_MENTION = re.compile(r"(?:^|(?<=\s))@(\S+)")
_TRAILING = ".,;:!?)]'\""


@dataclass(frozen=True, slots=True)
class Import:
    """One file brought in: its workspace-relative path, its text, and the
    file whose ``@`` line named it."""

    path: str
    text: str
    imported_by: str


def mentions(text: str) -> Iterator[str]:
    """The ``@`` paths of ``text`` outside code spans and fenced blocks, in
    order (a command's ``@file`` references too)."""
    fence: str | None = None
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        for match in _MENTION.finditer(_SPAN.sub(" ", line)):
            yield match.group(1)


def _candidates(name: str, folder: str, home: str | None) -> list[str]:
    """Where ``name`` may point, relative to the sandbox's root (or
    absolute): as written, and without a sentence's closing punctuation
    (``see @README.md.``); ``~/`` is ``home``."""
    found = []
    for raw in dict.fromkeys((name, name.rstrip(_TRAILING))):
        if home is not None and raw.startswith("~/"):
            raw = home + raw[1:]
        if raw and not raw.startswith("~"):
            found.append(raw if raw.startswith("/") else posixpath.join(folder, raw))
    return found


def imports_of(
    start: str,
    text: str,
    read: Callable[[str], tuple[str, str | None, str | None]],
    seen: set[str],
    notes: list[str],
    limit: int = MAX_IMPORTS,
    home: str | None = None,
) -> list[Import]:
    """The files ``start``'s text (and theirs, :data:`MAX_HOPS` deep)
    imports, each once, none of ``seen`` (to which they are added), at most
    ``limit``. ``read(path)`` is the instruction files' sandboxed read:
    ``(workspace-relative path, text, note)``, the text None when the file
    is refused (``note`` says why) or not there. ``home``: what ``@~/``
    means, for the person's own ``~/.claude/CLAUDE.md`` (None: a
    workspace's file, whose ``@~/`` is never read)."""
    found: list[Import] = []
    pending = [(start, text, 1)]
    while pending:
        importer, body, hops = pending.pop(0)
        folder = posixpath.dirname(importer)
        for name in mentions(body):
            if name.startswith("~") and home is None:
                notes.append(
                    f"{importer} imports @{name}, a file of the home folder: a workspace's "
                    "file does not bring the home folder's files in, so it was not read."
                )
                continue
            for path in _candidates(name, folder, home):
                rel, imported, note = read(path)
                if note is not None:
                    notes.append(f"{importer} imports @{name}: {note}")
                    break
                if imported is None:
                    continue  # no such file: a mention, as in Claude Code
                if rel in seen:
                    break
                if len(found) >= limit:
                    notes.append(
                        f"{importer} imports @{name}, past the {MAX_IMPORTS} files a workspace "
                        "imports at most: not read."
                    )
                    return found
                seen.add(rel)
                found.append(Import(rel, imported, importer))
                if hops < MAX_HOPS:
                    pending.append((rel, imported, hops + 1))
                break
    return found
