"""The editor, played by an LSP test client (pytest-lsp), and a check of
the transcripts it sees."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

from rein.harness.ports import (
    Mutation,
)
from rein.lsp._protocol import plain_dict_converter
from tests.fakes._text import _BOM

if TYPE_CHECKING:
    from rein.disk.analyzers import AnalyzerPool


def _offset(text: str, pos: lsp.Position) -> int:
    lines = text.split("\n")
    if pos.line >= len(lines):
        return len(text)
    return sum(len(line) + 1 for line in lines[: pos.line]) + min(
        pos.character, len(lines[pos.line])
    )


class Editor:
    """The editor, played by an LSP test client: it keeps documents, applies
    workspace/applyEdit to them and to disk, runs an analyzer pool on them,
    answers rein/diagnostics with its diagnostics and sends
    rein/diagnosticsChanged when they change. :func:`wire` registers its
    handlers on the client."""

    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.docs: dict[str, tuple[int, str]] = {}
        self.generation = 0
        self.pool: AnalyzerPool | None = None
        #: Without a pool: say at once that the diagnostics of a file it
        #: changed changed (rein/diagnosticsChanged, none found), as an editor
        #: whose language server has nothing to say of it. Off, it says
        #: nothing and the analyzer gate waits out its maxWaitMs (stale).
        self.finds_nothing = False
        self.confirm_answer = True
        #: Sent as the answer's ``remember`` ("always allow") when set.
        self.confirm_remember: Any = None
        #: Sent as the answer's ``prefix`` (keep the wider rules) when set.
        self.confirm_prefix: bool | None = None
        self.ask_answer: str | None = "yes"
        self.confirms: list[dict[str, Any]] = []
        #: The params of every rein/askUser.
        self.asks: list[dict[str, Any]] = []
        self.applied: list[lsp.ApplyWorkspaceEditParams] = []
        #: rel -> whether the file it loaded had a byte order mark.
        self.boms: dict[str, bool] = {}
        self.refused: list[str] = []
        #: (rel, text): the person types this just before the next edit arrives
        self.type_before_next_apply: tuple[str, str] | None = None
        self.events: list[dict[str, Any]] = []
        self.saved: list[str] = []
        self.event_arrived = asyncio.Event()
        #: Requests of these methods are never answered (an editor that
        #: hangs); each one that arrived is counted in ``held``.
        self.silent: set[str] = set()
        self.held: dict[str, int] = {}
        #: ... and how many of those the server cancelled ($/cancelRequest).
        self.cancelled: dict[str, int] = {}
        #: Set when a request of a silent method arrives.
        self.request_held = asyncio.Event()
        #: Requests of these methods are answered only once their event is
        #: set (a slow editor); each one that arrived is counted in ``held``.
        self.slow: dict[str, asyncio.Event] = {}
        #: rel -> the bytes the editor last knew on disk (None: no file), as
        #: its file watcher would: from the start, and each file it changed
        #: or was told of. A file it does not hold whose bytes differ when
        #: Rein asks for its diagnostics (a command changed it) is analysed
        #: again first, as an editor that saw it change.
        self.on_disk: dict[str, bytes | None] = dict(_files(root))

    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def rel(self, uri: str) -> str:
        return Path(uri.removeprefix("file://")).relative_to(self.root).as_posix()

    # ------------------------------------------------------------- documents

    def open(self, rel: str) -> None:
        text = (self.root / rel).read_text()
        self.docs[rel] = (1, text)
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                lsp.TextDocumentItem(uri=self.uri(rel), language_id="python", version=1, text=text)
            )
        )

    def type(self, rel: str, text: str) -> None:
        """The person edits an open buffer (not saved)."""
        version = self.docs[rel][0] + 1
        self.docs[rel] = (version, text)
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(
                    uri=self.uri(rel), version=version
                ),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def save(self, rel: str) -> None:
        (self.root / rel).write_text(self.docs[rel][1])
        self._analyze(rel)
        self.client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri=self.uri(rel)))
        )

    def _analyze(self, *rels: str) -> None:
        for rel in rels:
            self.on_disk[rel] = _read(self.root / rel)
        self.generation += 1
        if self.pool is not None:
            self.pool.on_mutation(Mutation(self.generation, tuple(rels)))
        elif self.finds_nothing:
            self.diagnostics_changed(list(rels))

    # --------------------------------------------------------------- handlers

    async def hold(self, method: str) -> None:
        """Never answer this request when ``method`` is silent (the server
        gives up on it; its cancellation ends the wait); when it is slow,
        answer it once the test releases it."""
        release = self.slow.get(method)
        if release is not None:
            self.held[method] = self.held.get(method, 0) + 1
            self.request_held.set()
            await release.wait()
            return
        if method not in self.silent:
            return
        self.held[method] = self.held.get(method, 0) + 1
        self.request_held.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled[method] = self.cancelled.get(method, 0) + 1
            raise

    def apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        self.applied.append(params)
        if self.type_before_next_apply is not None:
            rel, text = self.type_before_next_apply
            self.type_before_next_apply = None
            self.type(rel, text)
        changed: list[str] = []
        for change in params.edit.document_changes or []:
            if isinstance(change, lsp.CreateFile):
                path = self.root / self.rel(change.uri)
                path.parent.mkdir(parents=True, exist_ok=True)
                if not path.exists():
                    path.write_text("")
            elif isinstance(change, lsp.DeleteFile):
                rel = self.rel(change.uri)
                (self.root / rel).unlink()
                self.docs.pop(rel, None)
                changed.append(rel)
            elif isinstance(change, lsp.RenameFile):
                old, new = self.rel(change.old_uri), self.rel(change.new_uri)
                (self.root / new).parent.mkdir(parents=True, exist_ok=True)  # as VS Code does
                (self.root / old).rename(self.root / new)
                changed += [old, new]
            elif isinstance(change, lsp.TextDocumentEdit):
                rel = self.rel(change.text_document.uri)
                if rel in self.docs:
                    version, text = self.docs[rel]
                    if (
                        change.text_document.version is not None
                        and change.text_document.version != version
                    ):
                        self.refused.append(rel)
                        return lsp.ApplyWorkspaceEditResult(
                            applied=False,
                            failure_reason=f"{rel} is at version {version}, not {change.text_document.version}",
                        )
                else:
                    data = (self.root / rel).read_bytes() if (self.root / rel).exists() else b""
                    # an editor opens any file (a binary one shows replacement
                    # characters); as VS Code, it keeps a byte order mark out
                    # of the text and puts it back when it saves
                    self.boms[rel] = data.startswith(_BOM)
                    version, text = 0, data.removeprefix(_BOM).decode("utf-8", "replace")
                for edit in change.edits:
                    start, end = _offset(text, edit.range.start), _offset(text, edit.range.end)
                    text = text[:start] + edit.new_text + text[end:]
                bom = _BOM if self.boms.get(rel) else b""
                (self.root / rel).write_bytes(bom + text.encode("utf-8"))
                if rel in self.docs:
                    self.docs[rel] = (version + 1, text)
                    self.client.text_document_did_change(
                        lsp.DidChangeTextDocumentParams(
                            text_document=lsp.VersionedTextDocumentIdentifier(
                                uri=self.uri(rel), version=version + 1
                            ),
                            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
                        )
                    )
                changed.append(rel)
        if changed:
            self._analyze(*changed)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    def save_documents(self, uris: list[str]) -> dict[str, Any]:
        """``rein/saveDocuments``: applied edits are already on disk here;
        record the request and answer with didSave like an editor that saved."""
        for uri in uris:
            self.saved.append(self.rel(uri))
            self.client.text_document_did_save(
                lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri))
            )
        return {"saved": uris}

    def _changed_on_disk(self, uris: list[str]) -> list[str]:
        """Of ``uris``, the files it does not hold whose bytes on disk are
        not those it last knew (what its file watcher would have seen), and
        those it never knew of. A file that is not on disk now is never
        analysed: VS Code's extension cannot open it
        (``workspace.openTextDocument`` fails) and answers with what it has,
        and no diagnostics change comes for it (a command's own temporary
        file, gone as it came)."""
        changed: list[str] = []
        for uri in uris:
            path = Path(uri.removeprefix("file://"))
            if not path.is_relative_to(self.root) or not path.exists():
                continue
            rel = path.relative_to(self.root).as_posix()
            if rel not in self.docs and (
                rel not in self.on_disk or _read(path) != self.on_disk[rel]
            ):
                changed.append(rel)
        return changed

    async def diagnostics(self, params: dict[str, Any]) -> dict[str, Any]:
        wanted = params.get("uris")
        changed = self._changed_on_disk(wanted or [])
        if changed:
            self._analyze(*changed)
        snap = await self.pool.snapshot() if self.pool else None
        items: dict[str, list[dict[str, Any]]] = {}
        for d in snap.diagnostics if snap else ():
            uri = self.uri(d.path)
            if wanted is not None and uri not in wanted:
                continue
            items.setdefault(uri, []).append(
                {
                    "range": {
                        "start": {"line": d.line, "character": d.character},
                        "end": {"line": d.end_line or d.line, "character": d.end_character or 0},
                    },
                    "severity": d.severity,
                    "code": d.code,
                    "source": d.source,
                    "message": d.message,
                }
            )
        for uri in wanted or []:
            items.setdefault(uri, [])
        return {"items": [{"uri": u, "diagnostics": ds} for u, ds in items.items()]}

    def diagnostics_changed(self, paths: list[str]) -> None:
        self.client.protocol.notify(
            "rein/diagnosticsChanged", {"uris": [self.uri(p) for p in paths]}
        )

    async def wait_event(
        self, predicate: Any, limit_s: float = 20.0, *, after: int = 0
    ) -> dict[str, Any]:
        """The first event from index ``after`` on that ``predicate`` accepts."""

        async def find() -> dict[str, Any]:
            index = after
            while True:
                while index < len(self.events):
                    if predicate(self.events[index]):
                        return self.events[index]
                    index += 1
                self.event_arrived.clear()
                await self.event_arrived.wait()

        return await asyncio.wait_for(find(), limit_s)

    def event_types(self, session_id: str | None = None) -> list[str]:
        return [
            e["event"]["type"]
            for e in self.events
            if session_id is None or e["sessionId"] == session_id
        ]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _files(root: Path) -> dict[str, bytes | None]:
    """The files under ``root`` (a test's small workspace), outside hidden
    folders, and their bytes."""
    if not root.is_dir():
        return {}
    return {
        p.relative_to(root).as_posix(): _read(p)
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts[:-1])
    }


def paired(messages: list[dict[str, Any]]) -> bool:
    """Every tool call in a JSON transcript has exactly one result."""
    calls = [
        p["id"]
        for m in messages
        if m["role"] == "assistant"
        for p in m["content"]
        if p["type"] == "tool_call"
    ]
    results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    return sorted(calls) == sorted(results)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=plain_dict_converter)
    register_lsp_features(client)
    return client


def wire(ed: Editor) -> None:
    """Register the editor's handlers on its client."""
    lsp_client = ed.client

    @lsp_client.feature(lsp.WORKSPACE_APPLY_EDIT)
    async def apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        await ed.hold(lsp.WORKSPACE_APPLY_EDIT)
        return ed.apply_edit(params)

    @lsp_client.feature("rein/diagnostics")
    async def diagnostics(params: dict[str, Any]) -> dict[str, Any]:
        await ed.hold("rein/diagnostics")
        return await ed.diagnostics(params)

    @lsp_client.feature("rein/confirm")
    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        ed.confirms.append(params)
        await ed.hold("rein/confirm")
        answer: dict[str, Any] = {"approved": ed.confirm_answer}
        if ed.confirm_remember is not None:
            answer["remember"] = ed.confirm_remember
        if ed.confirm_prefix is not None:
            answer["prefix"] = ed.confirm_prefix
        return answer

    @lsp_client.feature("rein/askUser")
    async def ask_user(params: dict[str, Any]) -> dict[str, Any]:
        ed.asks.append(params)
        await ed.hold("rein/askUser")
        return {"answer": ed.ask_answer}

    @lsp_client.feature("rein/saveDocuments")
    async def save_documents(params: dict[str, Any]) -> dict[str, Any]:
        await ed.hold("rein/saveDocuments")
        return ed.save_documents(params["uris"])

    @lsp_client.feature("rein/event")
    def on_event(params: dict[str, Any]) -> None:
        ed.events.append(params)
        ed.event_arrived.set()
