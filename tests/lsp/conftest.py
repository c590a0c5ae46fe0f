"""Fixtures for the LSP tests: a real `rein serve` over stdio, and the test
client playing the editor (tests.fakes.Editor) with a real analyzer (ruff
server)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
import yaml
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.analyzers import AnalyzerPool
from tests.fakes.editor import Editor, make_client, wire
from tests.forkserver import REIN

RUFF = AnalyzerSpec("ruff", ("ruff", "server"), frozenset({".py"}))
WORKSPACE = Path(__file__).resolve().parents[1] / "workspaces" / "lspproj"

#: The server of every LSP test: a real `rein serve` over stdio, its client
#: the test's editor (tests.fakes.editor.make_client).
SERVE = ClientServerConfig(server_command=[*REIN, "serve"], client_factory=make_client)


def serve_fixture(**kwargs: Any) -> Callable[[Callable[..., Any]], Any]:
    """``@pytest_lsp.fixture`` of a :data:`SERVE` server: decorate an async
    generator that sets up the client's session (with :func:`editing`);
    ``kwargs`` as pytest's fixture (``params``)."""
    return pytest_lsp.fixture(config=SERVE, **kwargs)  # type: ignore[no-any-return]


def write_script(tmp_path: Path, turns: list[dict[str, Any]], name: str = "script.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"name": name.removesuffix(".yaml"), "turns": turns}))
    return str(path)


async def open_session(
    client: LanguageClient,
    root: Path,
    settings: dict[str, Any],
    *,
    profile: str = "visual-studio-code",
    initialization_options: Any = None,
) -> None:
    """Give the client ``settings`` (the ``rein`` section it answers
    workspace/configuration with) and initialize the server on ``root``, one
    workspace folder, as ``profile``'s editor does."""
    client.set_configuration(settings, section="rein")
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=pytest_lsp.client_capabilities(profile),
            root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options=initialization_options,
        )
    )


@asynccontextmanager
async def editing(
    ed: Editor,
    settings: dict[str, Any],
    *,
    analyzer: bool = False,
    profile: str = "visual-studio-code",
    initialization_options: Any = None,
) -> AsyncIterator[LanguageClient]:
    """``ed`` as the editor of its client's session, for a
    :func:`serve_fixture`: wired to the client, with ``analyzer`` ruff
    analyzing its root (settled before the session starts; see
    :func:`_tell_once_open`), the session opened on its root with
    ``settings`` (see :func:`open_session`); after the body, the analyzer
    stopped and the session shut down."""
    client = ed.client
    client.editor = ed  # type: ignore[attr-defined]
    wire(ed)
    if analyzer:
        ed.pool = AnalyzerPool(ed.root, [RUFF])
        await ed.pool.start()
        await ed.pool.wait_settled(30)
    await open_session(
        client, ed.root, settings, profile=profile, initialization_options=initialization_options
    )
    _tell_once_open(ed)
    yield client
    if ed.pool is not None:
        await ed.pool.stop()
    await client.shutdown_session()


@asynccontextmanager
async def running_server(
    root: Path,
    tmp_path: Path,
    *,
    analyzer: bool = False,
    model: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
) -> AsyncIterator[Editor]:
    """A real `rein serve` subprocess with an editor, outside pytest-lsp (for
    tests that restart or kill the server). ``model``: the ``rein.model``
    settings (default: the replay model playing tmp_path/script.yaml);
    ``settings``: more of the ``rein`` section. Without ``analyzer`` (a
    real ruff server), the editor's analyzer finds nothing in the files it
    changes and says so at once (``Editor.finds_nothing``): the analyzer
    gate passes rather than wait out its bound (5 s, unverified)."""
    client = make_client()
    ed = Editor(client, root)
    ed.finds_nothing = not analyzer
    wire(ed)
    base = _settings(tmp_path)
    model = model or base["model"]
    client.set_configuration({**base, **(settings or {}), "model": model}, section="rein")
    await client.start_io(*SERVE.server_command)
    if analyzer:
        ed.pool = AnalyzerPool(root, [RUFF])
        await ed.pool.start()
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={"model": model, "storagePath": str(tmp_path / "storage")},
        )
    )
    _tell_once_open(ed)
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


def _tell_once_open(ed: Editor) -> None:
    """From now on, ``ed``'s analyzer's new diagnostics are told to Rein
    (rein/diagnosticsChanged). Not before its session is initialized: a
    client sends nothing before the server answered ``initialize`` (the LSP
    spec; the server drops such a notification), as an editor's extension
    listens to its diagnostics once its client started."""
    if ed.pool is not None:
        ed.pool.on_diagnostics_changed = ed.diagnostics_changed


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(WORKSPACE, root)
    return root


@serve_fixture(params=["visual-studio-code", "neovim"])
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path, tmp_path: Path
) -> AsyncIterator[LanguageClient]:
    settings = _settings(tmp_path)
    async with editing(
        Editor(lsp_client, workspace),
        settings,
        analyzer=True,
        profile=request.param if hasattr(request, "param") else "visual-studio-code",
        initialization_options={"model": settings["model"]},
    ):
        yield lsp_client


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
