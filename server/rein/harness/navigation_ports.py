"""The navigation port: what the agent's semantic tools ask a language server.

A :class:`Navigator` answers definition, references, hover, symbols and
rename questions about the workspace *as Rein analyses it* (the editor's live
buffers in VS Code, the client's buffers over ACP, the disk headless). Two
adapters implement it: the editor's own providers over a Rein request (the
extension answers with ``vscode.execute*Provider``), and Rein's analyzer pool
(the same language-server processes the analyzer gate runs; never a second
copy for navigation).

Positions follow the Language Server Protocol: zero-based lines and
characters counted in UTF-16 code units. Paths are workspace-relative POSIX
paths (a location outside the workspace, such as a library's stub, keeps its
absolute path). The tools (``rein.tools``) turn the model's ``(path, line,
symbol)`` into a :class:`Position` and the answers into text the model reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rein.harness.errors import ReinError

__all__ = [
    "CodeLocation",
    "CodeRange",
    "CodeSymbol",
    "FileEdits",
    "NavigationUnavailable",
    "Navigator",
    "PartialLocations",
    "Position",
    "TextReplacement",
]


@dataclass(frozen=True, order=True)
class Position:
    """A place in a file: zero-based line, zero-based UTF-16 character."""

    line: int
    character: int


@dataclass(frozen=True, order=True)
class CodeRange:
    start: Position
    end: Position


@dataclass(frozen=True)
class CodeLocation:
    """A range in a file: workspace-relative POSIX path, or an absolute path
    for a file outside the workspace."""

    path: str
    range: CodeRange


@dataclass(frozen=True)
class CodeSymbol:
    """One symbol of an outline or of a workspace symbol search.

    ``kind`` is the LSP ``SymbolKind`` name in lower case (``"function"``,
    ``"class"``, ``"method"``, ``"variable"``...). ``location`` is its
    name's range; ``extent`` the whole symbol's (its body, its docstring),
    when the server said it (a document outline's ``range``). ``children``
    is a document outline's nesting (empty for workspace symbols)."""

    name: str
    kind: str
    location: CodeLocation
    container: str | None = None
    detail: str | None = None
    children: tuple[CodeSymbol, ...] = field(default_factory=tuple)
    extent: CodeRange | None = None


@dataclass(frozen=True)
class TextReplacement:
    """One text edit of a rename: replace ``range`` with ``new_text``.

    ``version`` is the version of the document the edit was computed on when
    the server said it (an open buffer's, LSP ``VersionedTextDocumentIdentifier``),
    ``None`` when it did not: whoever applies the edit refuses it when the
    document's version differs."""

    range: CodeRange
    new_text: str
    version: int | None = None


class FileEdits(tuple[TextReplacement, ...]):
    """One file's edits of a rename, with what they were computed on, when
    the navigator knows it (both optional): the editor's document
    ``version`` (the version the editor's rename answered for), or the
    ``text`` the language server was last sent. ``rename_symbol`` refuses
    to apply them to a file whose version or text is another one."""

    version: int | None
    text: str | None

    def __new__(
        cls,
        edits: Iterable[TextReplacement],
        *,
        version: int | None = None,
        text: str | None = None,
    ) -> FileEdits:
        self = super().__new__(cls, edits)
        self.version = version
        self.text = text
        return self


class PartialLocations(tuple[CodeLocation, ...]):
    """Locations a navigator found, with why they may be incomplete (the
    server had not indexed the project within the bound): the tools show
    ``note`` with them."""

    note: str

    def __new__(cls, locations: Iterable[CodeLocation], note: str) -> PartialLocations:
        self = super().__new__(cls, locations)
        self.note = note
        return self


class NavigationUnavailable(ReinError):
    """No language server can answer for this file (its language has none,
    the server is not running, or the editor offers no provider). The message
    says which and is shown to the model as the tool's result."""


class Navigator(Protocol):
    """Semantic questions about the workspace, answered by a language server."""

    @property
    def source(self) -> str:
        """Who answers, for the tools' results: ``"the editor"``,
        ``"basedpyright"``..."""
        ...

    async def definition(self, path: str, position: Position) -> Sequence[CodeLocation]: ...

    async def references(
        self, path: str, position: Position, *, include_declaration: bool = True
    ) -> Sequence[CodeLocation]: ...

    async def hover(self, path: str, position: Position) -> str | None:
        """The hover text (Markdown or plain), or ``None`` when there is none."""
        ...

    async def document_symbols(self, path: str) -> Sequence[CodeSymbol]: ...

    async def workspace_symbols(self, query: str) -> Sequence[CodeSymbol]: ...

    async def rename(
        self, path: str, position: Position, new_name: str
    ) -> Mapping[str, Sequence[TextReplacement]]:
        """The server's rename as text edits per path (nothing applied: the
        caller applies them after one approval, each file as its own mutation
        generation in the one run, refusing a file changed since). A path's
        edits may be :class:`FileEdits`, saying which version or text they
        were computed on. A rename the server refuses raises
        :class:`NavigationUnavailable` with its reason."""
        ...
