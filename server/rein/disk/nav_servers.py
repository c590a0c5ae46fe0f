"""Which of the pool's language servers answers a navigation question, and
what each one sees (:mod:`rein.disk.pool_navigator` asks them).

A server is chosen by what it said it offers in its ``initialize`` result
(``definitionProvider``, ``referencesProvider``...) and by the file's
language (:func:`servers_for`); a linter's answers no navigation, nor does a
server that is not installed (:func:`navigates`). Some servers know only
the files open in them (:func:`sees_open_files_only`): before they answer
references or a rename, the workspace's files of their language are opened
in them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from rein.disk.analyzer_specs import AnalyzerSpec, find_executable
from rein.harness.navigation_ports import NavigationUnavailable
from rein.tools.nav_text import lsp_lines

__all__ = [
    "CAPABILITIES",
    "DIAGNOSTICS_ONLY",
    "OPEN_TO_SEE",
    "READS_LATER",
    "SEES_OPEN_FILES_ONLY",
    "TS_CONFIGS",
    "TS_SERVERS",
    "NavigationServer",
    "Stamp",
    "WordCache",
    "naming",
    "navigates",
    "sees_open_files_only",
    "servers_for",
    "word_at",
]

#: Analyzers that only report findings (linters): a pool of only these
#: offers no navigation (decided before any server ran; once they run,
#: their capabilities decide, :func:`servers_for`). bash-language-server is
#: not one: it answers definitions, references, renames and outlines of
#: shell functions and variables (a shell-only project had no navigation
#: tools while a mixed one's shell files had them).
DIAGNOSTICS_ONLY = frozenset({"ruff", "eslint", "biome"})
#: Each question and the ``initialize`` capability a server needs for it.
CAPABILITIES = {
    "definition": "definitionProvider",
    "references": "referencesProvider",
    "hover": "hoverProvider",
    "document symbols": "documentSymbolProvider",
    "workspace symbols": "workspaceSymbolProvider",
    "rename": "renameProvider",
}
#: Servers that know only the files opened in them: bash-language-server
#: (the preset turns its background analysis off) and clangd (the preset
#: runs it with ``--background-index=false``: its index is the open files').
#: Before one answers references or a rename, the workspace's files of its
#: language are opened in it (``PoolNavigator._see_workspace``) and
#: given the index wait to be read: the pool opens only its first
#: ``max_files`` at start (none in a large workspace), and a shell
#: function's uses in a file that sources it were silently missed, as were
#: a C function's callers in the ``.c`` files not open (its rename changed
#: the definition alone, and the analyzer gate passed it).
SEES_OPEN_FILES_ONLY = frozenset({"bash", "clangd"})
#: Of the servers seeing open files only, those that read a file after
#: answering its didOpen (clangd builds it in the background): the pool is
#: given the index wait to settle before they are asked.
READS_LATER = frozenset({"clangd"})
#: The TypeScript server, and the files that make its project a configured
#: one (else it is inferred from the open files: :func:`sees_open_files_only`).
TS_SERVERS = frozenset({"typescript"})
TS_CONFIGS = ("tsconfig.json", "jsconfig.json")
_NAME = re.compile(r"[\w$]+")
#: How many files one question opens so: past it, references are partial
#: and a rename is refused.
OPEN_TO_SEE = 200


def navigates(specs: Sequence[AnalyzerSpec]) -> bool:
    """Whether an analyzer of these can answer navigation: one that is not
    a linter's and whose executable is found (the pool's own test before
    it starts one). A workspace whose only language server is not installed
    (a Go project without gopls) was offered the navigation tools, and
    every call of them answered that gopls was not found."""
    return any(
        spec.name not in DIAGNOSTICS_ONLY and find_executable(spec.command[0]) is not None
        for spec in specs
    )


class NavigationServer(Protocol):
    """What choosing a server reads of one (the pool's analyzer)."""

    @property
    def spec(self) -> AnalyzerSpec: ...
    @property
    def alive(self) -> bool: ...
    @property
    def failure(self) -> str | None: ...
    @property
    def capabilities(self) -> Mapping[str, Any]: ...
    def owns(self, path: str) -> bool: ...


_S = TypeVar("_S", bound=NavigationServer)


def _offers(server: NavigationServer, capability: str) -> bool:
    # true or an options object ({} included); absent, null or false: not.
    return server.capabilities.get(capability) not in (None, False)


def _breadth(server: NavigationServer) -> int:
    return sum(_offers(server, capability) for capability in CAPABILITIES.values())


def servers_for(
    servers: Sequence[_S], path: str | None, question: str, absent: Sequence[str] = ()
) -> list[_S]:
    """The running servers that can answer ``question`` (a key of
    :data:`CAPABILITIES`) for ``path`` (its language; None: any), those that
    offer the most navigation first. None can:
    :class:`NavigationUnavailable` saying what is missing (with ``absent``,
    the servers that did not start and why)."""
    capability = CAPABILITIES[question]
    owners = [s for s in servers if path is None or s.owns(path)]
    able = [s for s in owners if s.alive and _offers(s, capability)]
    if able:
        return sorted(able, key=_breadth, reverse=True)
    where = "here" if path is None else f"for {Path(path).suffix or path} files"
    if not owners:
        running = ", ".join(s.spec.name for s in servers) or "none"
        why = f"No language server {where} answers {question} (analyzers: {running})"
        if absent:
            why += f"; not running: {', '.join(absent)}"
    else:
        why = f"No language server {where} answers {question}: " + "; ".join(
            f"{s.spec.name} is not running: {s.failure or 'it is restarting'}"
            if not s.alive
            else f"{s.spec.name} does not offer {question} ({capability})"
            for s in owners
        )
    raise NavigationUnavailable(f"{why}. Use grep and read_file instead.")


def sees_open_files_only(
    name: str, root: Path, path: str, *, open_files_mode: bool = False
) -> bool:
    """Whether the server ``name`` knows, for ``path``, only the files open
    in it: one the pool switched to analysing open files only
    (``open_files_mode``: basedpyright's ``openFilesOnly`` in a workspace over
    ``workspaceMaxFiles``, with nothing opened at start: a file outside the
    project's own ``include`` is then known only when open, and attrs'
    ``astuple`` had 5 references in 1 file, not 13 in 4), one of
    :data:`SEES_OPEN_FILES_ONLY`, or the TypeScript server
    when no ``tsconfig.json`` or ``jsconfig.json`` is in ``path``'s folder or
    above it in the workspace (tsserver's project for it is then inferred
    from the open files and what they import: the files importing ``path``
    are in it only when open, and a JavaScript project's function without
    a jsconfig.json was renamed in its definition alone)."""
    if open_files_mode or name in SEES_OPEN_FILES_ONLY:
        return True
    if name not in TS_SERVERS:
        return False
    folder = Path(path).parent
    return not any(
        (root / above / config).is_file()
        for above in (folder, *folder.parents)
        for config in TS_CONFIGS
    )


def word_at(text: str, line: int, character: int) -> str | None:
    """The name (letters, digits, ``_``, ``$``) at the LSP position
    (``character`` in UTF-16 code units) of ``text``, else None. Lines are
    LSP's (:func:`~rein.tools.nav_text.lsp_lines`): ``str.splitlines`` also
    broke at a form feed, and the word after one was taken a line early."""
    lines = lsp_lines(text)
    if not 0 <= line < len(lines):
        return None
    row = lines[line]
    units = index = 0
    while index < len(row) and units < character:
        units += 2 if ord(row[index]) > 0xFFFF else 1
        index += 1
    for found in _NAME.finditer(row):
        if found.start() <= index <= found.end():
            return found[0]
    return None


def naming(read: Callable[[str], str | None], paths: Sequence[str], name: str) -> list[str]:
    """The ``paths`` whose text (``read``) has ``name`` as a whole word: every
    file that can refer to it does (an import, an alias's import line, an
    attribute, a call), so these are what a server seeing only its open
    files must have open to answer references or a rename. A file that
    cannot be read (not UTF-8, binary, too large) is kept: it cannot be
    opened either, so it stays unseen and is named (a rename is refused
    rather than made without it)."""
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    return [path for path in paths if (text := read(path)) is None or word.search(text)]


#: A file's stamp: its ``st_mtime_ns`` and ``st_size``.
Stamp = tuple[int, int]


class WordCache:
    """:func:`naming` over a workspace's files, remembering each file's
    words by its stamp (``stamp``: its ``mtime_ns`` and size; None, not
    remembered: a text the editor's buffer holds, or a file that cannot be
    stat'ed): references and renames read every unopened file of the
    language at every question (10,000 files of 3.5 KB took 2.2 s at load
    7). A file rewritten within one mtime tick at the same size keeps its
    old words. Each file's words are kept as one string, ``\n``-separated."""

    def __init__(self) -> None:
        self._words: dict[str, tuple[Stamp, str]] = {}

    def naming(
        self,
        read: Callable[[str], str | None],
        stamp: Callable[[str], Stamp | None],
        paths: Sequence[str],
        name: str,
    ) -> list[str]:
        """The ``paths`` with ``name`` as a whole word, or unreadable (as
        :func:`naming`)."""
        wanted = f"\n{name}\n"
        found: list[str] = []
        for path in paths:
            now = stamp(path)
            known = self._words.get(path)
            if now is not None and known is not None and known[0] == now:
                words = known[1]
            else:
                text = read(path)
                if text is None:
                    self._words.pop(path, None)
                    found.append(path)
                    continue
                words = "\n" + "\n".join(set(_NAME.findall(text))) + "\n"
                if now is None:
                    self._words.pop(path, None)
                else:
                    self._words[path] = (now, words)
            if wanted in words:
                found.append(path)
        return found
