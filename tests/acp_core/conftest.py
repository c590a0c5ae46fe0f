"""``ReinAcpAgent`` in-process, connected to a test client through the SDK's
own connections over a pair of in-memory transports, its model the mock
server over real HTTP (an OpenAI-compatible provider), its store a real
SQLite folder. The analyzers and the watcher are off: these tests are about
the protocol (tests/acp drives the real ``rein acp`` subprocess)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from acp import connect_to_agent, helpers
from acp._transport import memory_transport_pair
from acp.schema import ClientCapabilities

from rein.acp.main import serve_acp
from rein.config import ReinConfig, load_config
from rein.providers.mock_server import MockServer
from tests.fakes.acp_client import FakeAcpClient

if TYPE_CHECKING:
    from acp import ClientSideConnection
    from acp.schema import PromptResponse


@dataclass
class Connected:
    conn: ClientSideConnection
    client: FakeAcpClient
    server: MockServer
    root: Path
    storage: Path
    agent_task: asyncio.Task[None]

    async def new(self, capabilities: ClientCapabilities | None = None) -> str:
        await self.conn.initialize(protocol_version=1, client_capabilities=capabilities)
        return (await self.conn.new_session(cwd=str(self.root))).session_id

    async def prompt_to_its_tool_call(
        self, session_id: str, text: str = "run it"
    ) -> asyncio.Task[PromptResponse]:
        """Start a prompt and return, its run still going, once the client
        has seen the run's first ``tool_call``."""
        prompt = asyncio.create_task(
            self.conn.prompt(session_id=session_id, prompt=[helpers.text_block(text)])
        )
        await self.client.wait_update(lambda u: u.session_update == "tool_call")
        return prompt

    async def raw(self, method: str, params: Any) -> Any:
        """A request as the client wrote it, not checked by the SDK's models."""
        return await self.conn._conn.send_request(method, params)


def config_for(server: MockServer, **sections: Any) -> ReinConfig:
    data: dict[str, Any] = {
        "model": {"provider": "openai", "baseUrl": f"{server.url}/v1", "model": "mock-1"},
        "gates": {"analyzer": {"enabled": False}},
        "harness": {"runIdleTimeoutMs": 20_000},
    }
    data.update(sections)
    return load_config(data, "test")


@contextlib.asynccontextmanager
async def connected(
    root: Path,
    storage: Path,
    server: MockServer,
    *,
    config: ReinConfig | None = None,
    client: FakeAcpClient | None = None,
) -> AsyncIterator[Connected]:
    """One ``rein acp`` agent and its client; leaving closes the client's
    end (the agent sees end of input) and waits for the agent to finish."""
    agent_end, client_end = memory_transport_pair()
    task = asyncio.create_task(
        serve_acp(
            config or config_for(server),
            storage=storage,
            input_stream=agent_end,
            analyzers=(),
            watch=False,
        )
    )
    fake = client or FakeAcpClient()
    conn = connect_to_agent(fake, client_end)
    try:
        yield Connected(conn, fake, server, root, storage, task)
    finally:
        await conn.close()
        await asyncio.wait_for(task, 30)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


@pytest.fixture
async def mock_server() -> AsyncIterator[MockServer]:
    async with MockServer() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("VALUE = 1\n")
    return root


@pytest.fixture
def connect(
    workspace: Path, tmp_path: Path, mock_server: MockServer
) -> Callable[..., contextlib.AbstractAsyncContextManager[Connected]]:
    def make(**kwargs: Any) -> contextlib.AbstractAsyncContextManager[Connected]:
        return connected(workspace, tmp_path / "store", mock_server, **kwargs)

    return make
