"""Fixtures for the ACP tests: a real ``rein acp`` subprocess over stdio with
an isolated HOME and XDG folders, its model an ``openai`` provider talking
real HTTP to the mock model server (in-process, on the test's event loop),
and the editor played by :class:`tests.fakes.acp_client.FakeAcpClient`."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml
from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.helpers import text_block
from acp.schema import InitializeResponse, NewSessionResponse, PromptResponse

from rein.providers.mock_server import MockServer
from tests.fakes.acp_client import FakeAcpClient
from tests.forkserver import REIN

WORKSPACES = Path(__file__).resolve().parents[1] / "workspaces"

#: The bound on any one request of a test (an answer or a failure, never a hang).
REQUEST_S = 90.0


@dataclass
class Home:
    """A person's machine, in tmp: HOME, the XDG folders and Rein's config file."""

    path: Path
    config_file: Path
    storage: Path

    def env(self, **extra: str) -> dict[str, str]:
        path = self.path
        bin_dir = str(Path(sys.executable).parent)  # the analyzers live next to python
        return {
            "HOME": str(path),
            "XDG_CONFIG_HOME": str(path / ".config"),
            "XDG_DATA_HOME": str(path / ".local" / "share"),
            "XDG_CACHE_HOME": str(path / ".cache"),
            "XDG_STATE_HOME": str(path / ".local" / "state"),
            "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
            "REIN_CONFIG": str(self.config_file),
            # The code under test, where PYTHONPATH names it (a worktree's checkout).
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
            **extra,
        }


def rein_config(home: Path, mock_url: str, **sections: Any) -> dict[str, Any]:
    """The ``rein`` section the tests start from: the mock model over HTTP
    (no key needed: ``apiKeyEnv`` empty), the store in tmp, fast gates."""
    config: dict[str, Any] = {
        "storagePath": str(home / "storage"),
        "model": {
            "provider": "openai",
            "baseUrl": mock_url + "/v1",
            "model": "mock-model",
            "apiKeyEnv": "",
        },
        # A bound, not a wait: the verdict comes when the analyzers publish.
        "gates": {"analyzer": {"quietPeriodMs": 100, "maxWaitMs": 30000}},
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return config


@pytest.fixture
def pyproj(tmp_path: Path) -> Path:
    target = tmp_path / "pyproj"
    shutil.copytree(WORKSPACES / "pyproj", target)
    return target


@pytest.fixture
async def mock() -> AsyncIterator[MockServer]:
    server = MockServer()
    await server.start()
    try:
        yield server
    finally:
        await server.aclose()


@pytest.fixture
def home(tmp_path: Path, mock: MockServer) -> Home:
    path = tmp_path / "home"
    path.mkdir()
    config_file = path / "rein.yaml"
    write_config(config_file, rein_config(path, mock.url))
    return Home(path, config_file, path / "storage")


def write_config(path: Path, config: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump({"rein": config}))


@dataclass
class Agent:
    """A running ``rein acp`` with the editor connected to it."""

    conn: ClientSideConnection
    process: Any  # asyncio.subprocess.Process
    editor: FakeAcpClient
    stderr: Path

    async def initialize(self) -> InitializeResponse:
        with anyio.fail_after(REQUEST_S):
            return await self.conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=self.editor.capabilities(),
            )

    async def new_session(self, cwd: Path) -> NewSessionResponse:
        with anyio.fail_after(REQUEST_S):
            return await self.conn.new_session(cwd=str(cwd), mcp_servers=[])

    async def raw(self, method: str, params: Any) -> Any:
        """A request as any bytes on the wire could be (no client-side checks)."""
        with anyio.fail_after(REQUEST_S):
            return await self.conn._conn.send_request(method, params)

    def log(self) -> str:
        return self.stderr.read_text(errors="replace") if self.stderr.exists() else ""


@asynccontextmanager
async def running_agent(
    editor: FakeAcpClient, home: Home, *, env: dict[str, str] | None = None, name: str = "acp"
) -> AsyncIterator[Agent]:
    """``rein acp`` as a subprocess of the test, stderr to a file under HOME
    (shown when a test fails). On exit stdin is closed and the process must
    end by itself within the SDK's bound (then it is terminated)."""
    stderr = home.path / f"{name}.stderr"
    with stderr.open("wb") as sink:
        async with spawn_agent_process(
            editor,
            *REIN,
            "acp",
            env=home.env(**(env or {})),
            cwd=str(home.path),
            transport_kwargs={"stderr": sink, "shutdown_timeout": 10.0},
        ) as (conn, process):
            agent = Agent(conn, process, editor, stderr)
            try:
                yield agent
            except BaseException:
                sys.stderr.write(f"--- rein acp stderr ---\n{agent.log()}\n")
                raise
            finally:
                await editor.aclose()


@asynccontextmanager
async def started(
    root: Path, home: Home, *, permissions: list[str] | None = None, **kwargs: Any
) -> AsyncIterator[tuple[Agent, str]]:
    """``rein acp`` initialized, with one session on ``root``."""
    editor = FakeAcpClient(root, run_commands=True, permissions=permissions or ())
    async with running_agent(editor, home, **kwargs) as agent:
        await agent.initialize()
        session = await agent.new_session(root)
        yield agent, session.session_id


async def prompt_under_way(
    agent: Agent, session_id: str, text: str
) -> asyncio.Future[PromptResponse]:
    """Start a prompt and return, its run still going, once the editor has
    the run's first ``agent_message_chunk``."""
    running = asyncio.ensure_future(
        agent.conn.prompt(session_id=session_id, prompt=[text_block(text)])
    )
    await agent.editor.wait_for(session_id, lambda u: u["sessionUpdate"] == "agent_message_chunk")
    return running


# ------------------------------------------------------- the mock model


async def load_scenario(mock: MockServer, name: str, turns: list[dict[str, Any]]) -> None:
    """Switch the mock's scenario through its control API."""
    async with httpx.AsyncClient(base_url=mock.url) as http:
        reply = await http.post("/mock/scenario", json={"script": {"name": name, "turns": turns}})
    assert reply.status_code == 200, reply.text


async def model_requests(mock: MockServer) -> list[dict[str, Any]]:
    """What the model was sent, request by request (the mock's record)."""
    async with httpx.AsyncClient(base_url=mock.url) as http:
        requests: list[dict[str, Any]] = (await http.get("/mock/requests")).json()["requests"]
    return requests


async def assert_used_up(mock: MockServer) -> None:
    """Every turn of the current scenario was asked for, and answered."""
    async with httpx.AsyncClient(base_url=mock.url) as http:
        state = (await http.get("/mock/scenario")).json()
    requests = await model_requests(mock)
    assert state["index"] == state["turns"], state
    outcomes = [(r["turn"], r["outcome"]) for r in requests]
    assert all(outcome == "completed" for _, outcome in outcomes), outcomes


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def stall_turn(text: str) -> dict[str, Any]:
    """A model turn that streams ``text`` as one chunk, then stalls for a minute."""
    return {"text": text, "fault": {"kind": "stall", "after_chunks": 1, "seconds": 60}}


def tool_turn(*calls: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"tool_calls": list(calls), **extra}
