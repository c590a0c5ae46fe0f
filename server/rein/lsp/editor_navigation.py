"""The editor's navigation: :class:`EditorNavigator` asks the editor
(``rein/navigate``) and the editor answers with its own providers on its live
buffers (VS Code: ``vscode.execute*Provider``), whatever languages it
understands.

Only a client that says it answers (``capabilities.experimental.rein.
navigation: true`` in ``initialize``, read by the ``initialize`` handler)
gets one.
The answers are LSP-shaped (``Location[]``/``LocationLink[]``, a ``Hover``,
``DocumentSymbol[]``/``SymbolInformation[]``, a ``WorkspaceEdit``) and come
back as the port's types (:mod:`rein.harness.navigation_ports`). No answer in
time, an error, a malformed answer or a rename that also creates, renames or
deletes files: :class:`~rein.harness.navigation_ports.NavigationUnavailable`
with the reason, which the model reads.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from rein.harness.navigation_ports import (
    CodeLocation,
    CodeRange,
    CodeSymbol,
    FileEdits,
    NavigationUnavailable,
    Position,
    TextReplacement,
)
from rein.lsp.channel import method_not_found
from rein.lsp.client_timeout import ClientTimeout
from rein.lsp.editor import path_to_uri, uri_to_path

if TYPE_CHECKING:
    from rein.lsp.channel import ClientChannel

__all__ = ["NAVIGATE", "EditorNavigator"]

log = logging.getLogger(__name__)

NAVIGATE = "rein/navigate"


class EditorNavigator:
    """The :class:`~rein.harness.navigation_ports.Navigator` of ``rein
    serve``: every question is one ``rein/navigate`` request to the editor,
    bounded like Rein's other requests to it
    (``harness.clientRequestTimeoutMs``)."""

    def __init__(self, client: ClientChannel, root: Path) -> None:
        self.client = client
        self.root = root.resolve()

    @property
    def source(self) -> str:
        return "the editor"

    # ------------------------------------------------------------- questions

    async def definition(self, path: str, position: Position) -> Sequence[CodeLocation]:
        answer = await self._ask("definition", path, position)
        return _files(self._location(item, "definition") for item in _listed(answer, "definition"))

    async def references(
        self, path: str, position: Position, *, include_declaration: bool = True
    ) -> Sequence[CodeLocation]:
        answer = await self._ask(
            "references", path, position, includeDeclaration=include_declaration
        )
        return _files(self._location(item, "references") for item in _listed(answer, "references"))

    async def hover(self, path: str, position: Position) -> str | None:
        answer = await self._ask("hover", path, position)
        if answer is None:
            return None
        if not isinstance(answer, dict) or "contents" not in answer:
            raise _malformed("hover", "a Hover ({contents}) or null")
        text = _hover_text(answer["contents"]).strip()
        return text or None

    async def document_symbols(self, path: str) -> Sequence[CodeSymbol]:
        answer = await self._ask("documentSymbols", path)
        return _files(self._symbol(item, path) for item in _listed(answer, "documentSymbols"))

    async def workspace_symbols(self, query: str) -> Sequence[CodeSymbol]:
        answer = await self._request({"kind": "workspaceSymbols", "query": query})
        return _files(self._symbol(item, None) for item in _listed(answer, "workspaceSymbols"))

    async def rename(
        self, path: str, position: Position, new_name: str
    ) -> Mapping[str, Sequence[TextReplacement]]:
        answer = await self._ask("rename", path, position, newName=new_name)
        if answer is None:
            raise NavigationUnavailable("the editor has no rename for the symbol there")
        if not isinstance(answer, dict):
            raise _malformed("rename", "a WorkspaceEdit")
        return self._workspace_edit(answer)

    # ------------------------------------------------------------ the wire

    async def _ask(
        self, kind: str, path: str, position: Position | None = None, **extra: Any
    ) -> Any:
        params: dict[str, Any] = {"kind": kind, "uri": self._uri(path)}
        if position is not None:
            params["position"] = {"line": position.line, "character": position.character}
        params.update(extra)
        return await self._request(params)

    async def _request(self, params: dict[str, Any]) -> Any:
        kind = params["kind"]
        if not self.client.supports(NAVIGATE):
            raise NavigationUnavailable(f"this editor does not answer {NAVIGATE}")
        try:
            return await self.client.request(NAVIGATE, params)
        except ClientTimeout as exc:
            raise NavigationUnavailable(f"{exc} ({kind})") from None
        except JsonRpcException as exc:
            if method_not_found(exc):
                raise NavigationUnavailable(f"this editor does not answer {NAVIGATE}") from None
            log.info("%s (%s) failed: %s", NAVIGATE, kind, exc)
            raise NavigationUnavailable(
                f"the editor could not answer {kind}: {exc.message}"
            ) from None

    def _uri(self, path: str) -> str:
        given = Path(path)
        return path_to_uri(given if given.is_absolute() else self.root / given)

    def _path(self, uri: str) -> str | None:
        """Workspace-relative POSIX path; absolute outside the workspace;
        ``None`` for a document that is no file (``untitled:``), which no
        tool can read or write: its places are left out."""
        fs = uri_to_path(uri)
        if fs is None:
            return None
        try:
            return fs.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return fs.as_posix()

    def _file(self, uri: str) -> str:
        """A rename's document as a path; a document that is no file refuses
        the rename (its edits could not be applied, the others would be)."""
        path = self._path(uri)
        if path is None:
            raise NavigationUnavailable(
                f"the editor's rename also edits {uri}, which is not a file on disk (save it first)"
            )
        return path

    # ------------------------------------------------------------ converting

    def _location(self, item: Any, kind: str) -> CodeLocation | None:
        if isinstance(item, dict) and isinstance(item.get("targetUri"), str):
            # A LocationLink: the name's range (targetSelectionRange) as the place.
            uri, rng = (
                item["targetUri"],
                item.get("targetSelectionRange") or item.get("targetRange"),
            )
        elif isinstance(item, dict) and isinstance(item.get("uri"), str):
            uri, rng = item["uri"], item.get("range")
        else:
            raise _malformed(kind, "Location or LocationLink items")
        place = _range(rng, kind)
        path = self._path(uri)
        return None if path is None else CodeLocation(path, place)

    def _symbol(self, item: Any, path: str | None) -> CodeSymbol | None:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise _malformed("symbols", "DocumentSymbol or SymbolInformation items")
        kind = _symbol_kind(item.get("kind"))
        if "location" in item:  # SymbolInformation (or a WorkspaceSymbol)
            where = item["location"]
            if not isinstance(where, dict) or not isinstance(where.get("uri"), str):
                raise _malformed("symbols", "a symbol's location with a uri")
            rng = where.get("range")
            found = self._path(where["uri"])
            if found is None:
                return None
            location = CodeLocation(found, _range(rng, "symbols") if rng is not None else _START)
            return CodeSymbol(
                item["name"], kind, location, container=item.get("containerName") or None
            )
        if path is None:  # a DocumentSymbol has no uri: only an outline's make sense
            raise _malformed("workspaceSymbols", "SymbolInformation items")
        children = item.get("children") or []
        if not isinstance(children, list):
            raise _malformed("documentSymbols", "DocumentSymbol children as a list")
        return CodeSymbol(
            item["name"],
            kind,
            # The name's range (selectionRange), as the pool's outlines; else the whole.
            CodeLocation(
                path,
                _range(item.get("selectionRange") or item.get("range"), "documentSymbols"),
            ),
            detail=item.get("detail") or None,
            children=tuple(_files(self._symbol(child, path) for child in children)),
            extent=_range(item["range"], "documentSymbols") if item.get("range") else None,
        )

    def _workspace_edit(self, edit: dict[str, Any]) -> dict[str, FileEdits]:
        edits: dict[str, list[TextReplacement]] = {}
        changes = edit.get("documentChanges")
        if changes is not None:
            if not isinstance(changes, list):
                raise _malformed("rename", "documentChanges as a list")
            operations = sorted({c["kind"] for c in changes if isinstance(c, dict) and "kind" in c})
            if operations:
                raise NavigationUnavailable(
                    "the editor's rename also "
                    + " and ".join(f"{op}s files" for op in operations)
                    + ", which Rein does not apply; rename with edits instead"
                )
            for change in changes:
                document = change.get("textDocument") if isinstance(change, dict) else None
                if not isinstance(document, dict) or not isinstance(document.get("uri"), str):
                    raise _malformed("rename", "TextDocumentEdits with a textDocument uri")
                version = document.get("version")
                if version is not None and (
                    isinstance(version, bool) or not isinstance(version, int)
                ):
                    raise _malformed("rename", "a textDocument version as an integer or null")
                edits.setdefault(self._file(document["uri"]), []).extend(
                    _replacements(change.get("edits"), version)
                )
        else:
            by_uri = edit.get("changes") or {}
            if not isinstance(by_uri, dict):
                raise _malformed("rename", "changes as an object of uri to edits")
            for uri, text_edits in by_uri.items():
                edits.setdefault(self._file(uri), []).extend(_replacements(text_edits))
        return {path: _file_edits(found) for path, found in edits.items() if found}


_START = CodeRange(Position(0, 0), Position(0, 0))

#: SymbolKind 1..26 by name in lower case (LSP 3.17).
_KINDS = {kind.value: kind.name.lower() for kind in lsp.SymbolKind}


_T = TypeVar("_T")


def _files(found: Iterable[_T | None]) -> list[_T]:
    """The answers in files: a document that is no file (``None``) left out."""
    return [item for item in found if item is not None]


def _symbol_kind(value: Any) -> str:
    return _KINDS.get(value, "unknown") if isinstance(value, int) else "unknown"


def _malformed(kind: str, expected: str) -> NavigationUnavailable:
    return NavigationUnavailable(f"the editor's answer to {NAVIGATE} ({kind}) is not {expected}")


def _listed(answer: Any, kind: str) -> list[Any]:
    """An answer as a list: null is none, one object is a list of one."""
    if answer is None:
        return []
    if isinstance(answer, dict):
        return [answer]
    if isinstance(answer, list):
        return answer
    raise _malformed(kind, "a list")


def _position(value: Any, kind: str) -> Position:
    if (
        isinstance(value, dict)
        and isinstance(value.get("line"), int)
        and isinstance(value.get("character"), int)
    ):
        return Position(value["line"], value["character"])
    raise _malformed(kind, "positions of {line, character}")


def _range(value: Any, kind: str) -> CodeRange:
    if not isinstance(value, dict):
        raise _malformed(kind, "ranges of {start, end}")
    return CodeRange(_position(value.get("start"), kind), _position(value.get("end"), kind))


def _file_edits(found: list[TextReplacement]) -> FileEdits:
    """A file's edits with the document version the editor computed them
    on (when it said one, the same for all of them), so ``rename_symbol``
    refuses them for a buffer that has changed since."""
    versions = {edit.version for edit in found}
    version = versions.pop() if len(versions) == 1 else None
    return FileEdits(found, version=version)


def _replacements(value: Any, version: int | None = None) -> list[TextReplacement]:
    if not isinstance(value, list):
        raise _malformed("rename", "TextEdit lists")
    out = []
    for edit in value:
        if not isinstance(edit, dict) or not isinstance(edit.get("newText"), str):
            raise _malformed("rename", "TextEdits of {range, newText}")
        out.append(TextReplacement(_range(edit.get("range"), "rename"), edit["newText"], version))
    return out


def _hover_text(contents: Any) -> str:
    """A hover's contents as text: a string, MarkupContent, a MarkedString
    (``{language, value}`` as a fenced block) or a list of them."""
    if isinstance(contents, str):
        return contents
    if isinstance(contents, list):
        return "\n\n".join(t for t in (_hover_text(c).strip() for c in contents) if t)
    if isinstance(contents, dict) and isinstance(contents.get("value"), str):
        language = contents.get("language")
        if isinstance(language, str):
            return f"```{language}\n{contents['value']}\n```"
        return str(contents["value"])
    raise _malformed("hover", "hover contents as text, MarkupContent or MarkedStrings")
