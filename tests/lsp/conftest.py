"""The test client plays the editor: it keeps documents, applies
workspace/applyEdit to them and to disk, runs a real analyzer (ruff server)
on them, answers rein/diagnostics with that analyzer's diagnostics and sends
rein/diagnosticsChanged when they change."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
import yaml
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from rein.harness.ports import Mutation
from rein.headless.analyzers import AnalyzerPool, AnalyzerSpec
from rein.lsp._protocol import plain_dict_converter

RUFF = AnalyzerSpec("ruff", ("ruff", "server"), frozenset({".py"}))
WORKSPACE = Path(__file__).resolve().parents[1] / "workspaces" / "lspproj"


def _offset(text: str, pos: lsp.Position) -> int:
    lines = text.split("\n")
    if pos.line >= len(lines):
        return len(text)
    return sum(len(line) + 1 for line in lines[: pos.line]) + min(
        pos.character, len(lines[pos.line])
    )


class Editor:
    """Documents, disk, a ruff analyzer, and the server-facing handlers."""

    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.docs: dict[str, tuple[int, str]] = {}
        self.generation = 0
        self.pool: AnalyzerPool | None = None
        self.confirm_answer = True
        self.ask_answer: str | None = "yes"
        self.confirms: list[dict[str, Any]] = []
        self.applied: list[lsp.ApplyWorkspaceEditParams] = []
        self.refused: list[str] = []
        #: (rel, text): the person types this just before the next edit arrives
        self.type_before_next_apply: tuple[str, str] | None = None
        self.events: list[dict[str, Any]] = []
        self.saved: list[str] = []
        self.event_arrived = asyncio.Event()

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
        self.generation += 1
        if self.pool is not None:
            self.pool.on_mutation(Mutation(self.generation, tuple(rels)))

    # --------------------------------------------------------------- handlers

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
                    version, text = (
                        0,
                        (self.root / rel).read_text() if (self.root / rel).exists() else "",
                    )
                for edit in change.edits:
                    start, end = _offset(text, edit.range.start), _offset(text, edit.range.end)
                    text = text[:start] + edit.new_text + text[end:]
                (self.root / rel).write_text(text)
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

    async def diagnostics(self, params: dict[str, Any]) -> dict[str, Any]:
        snap = await self.pool.snapshot() if self.pool else None
        wanted = params.get("uris")
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

    async def wait_event(self, predicate: Any, limit_s: float = 20.0) -> dict[str, Any]:
        async def find() -> dict[str, Any]:
            index = 0
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


def write_script(tmp_path: Path, turns: list[dict[str, Any]], name: str = "script.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"name": name.removesuffix(".yaml"), "turns": turns}))
    return str(path)


def wire(ed: Editor) -> None:
    """Register the editor's handlers on its client."""
    lsp_client = ed.client

    @lsp_client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        return ed.apply_edit(params)

    @lsp_client.feature("rein/diagnostics")
    async def diagnostics(params: dict[str, Any]) -> dict[str, Any]:
        return await ed.diagnostics(params)

    @lsp_client.feature("rein/confirm")
    def confirm(params: dict[str, Any]) -> dict[str, Any]:
        ed.confirms.append(params)
        return {"approved": ed.confirm_answer}

    @lsp_client.feature("rein/askUser")
    def ask_user(params: dict[str, Any]) -> dict[str, Any]:
        return {"answer": ed.ask_answer}

    @lsp_client.feature("rein/saveDocuments")
    def save_documents(params: dict[str, Any]) -> dict[str, Any]:
        # Applied edits are already on disk here; record the request and
        # answer with didSave like an editor that saved.
        for uri in params["uris"]:
            ed.saved.append(ed.rel(uri))
            lsp_client.text_document_did_save(
                lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri))
            )
        return {"saved": params["uris"]}

    @lsp_client.feature("rein/event")
    def on_event(params: dict[str, Any]) -> None:
        ed.events.append(params)
        ed.event_arrived.set()


@asynccontextmanager
async def running_server(
    root: Path, tmp_path: Path, *, analyzer: bool = False
) -> AsyncIterator[Editor]:
    """A real `rein serve` subprocess with an editor, outside pytest-lsp (for
    tests that restart or kill the server)."""
    client = make_client()
    ed = Editor(client, root)
    wire(ed)
    client.set_configuration(_settings(tmp_path), section="rein")
    await client.start_io(sys.executable, "-m", "rein", "serve")
    if analyzer:
        ed.pool = AnalyzerPool(root, [RUFF], on_diagnostics_changed=ed.diagnostics_changed)
        await ed.pool.start()
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={
                "model": {"provider": "replay", "script": str(tmp_path / "script.yaml")},
                "storagePath": str(tmp_path / "storage"),
            },
        )
    )
    try:
        yield ed
    finally:
        if ed.pool is not None:
            await ed.pool.stop()
        server = client._server
        if server is not None and server.returncode is None:
            try:
                await asyncio.wait_for(client.shutdown_async(None), 5)
                client.exit(None)
            except Exception:
                server.kill()
        await asyncio.wait_for(client.stop(), 10)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(WORKSPACE, root)
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "rein", "serve"], client_factory=make_client
    ),
    params=["visual-studio-code", "neovim"],
)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path, tmp_path: Path
) -> AsyncIterator[LanguageClient]:
    ed = Editor(lsp_client, workspace)
    lsp_client.editor = ed  # type: ignore[attr-defined]

    wire(ed)

    ed.pool = AnalyzerPool(workspace, [RUFF], on_diagnostics_changed=ed.diagnostics_changed)
    await ed.pool.start()
    await ed.pool.wait_settled(30)
    lsp_client.set_configuration(_settings(tmp_path), section="rein")
    profile = request.param if hasattr(request, "param") else "visual-studio-code"
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=pytest_lsp.client_capabilities(profile),
            root_uri=workspace.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options={
                "model": {"provider": "replay", "script": str(tmp_path / "script.yaml")}
            },
        )
    )
    yield lsp_client
    await ed.pool.stop()
    await lsp_client.shutdown_session()


@pytest.fixture
def editor(client: LanguageClient) -> Editor:
    return client.editor  # type: ignore[attr-defined,no-any-return]


def _settings(tmp_path: Path) -> dict[str, Any]:
    return {
        "storagePath": str(tmp_path / "storage"),
        "model": {"provider": "replay", "script": str(tmp_path / "script.yaml")},
        "gates": {"analyzer": {"quietPeriodMs": 100, "maxWaitMs": 5000}},
        "approval": {"command": "ask"},
    }
