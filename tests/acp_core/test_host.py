"""The ACP workspace host's wiring: the client's view in front of the disk,
the analyzers asked to look again when a read shows an unsaved change, and
one approver per session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from rein.acp.client_fs import ClientFsWorkspace
from rein.acp.context import current_session
from rein.acp.host import AcpHosts
from rein.acp.witness import WitnessedWorkspace
from rein.config import load_config
from rein.providers.replay import ReplayModel
from tests.fakes.acp_client import FakeAcpClient, FakeClientLink


async def test_the_host_wires_the_clients_view_and_the_pools_refresh(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    client = FakeAcpClient(buffers={str(tmp_path / "app.py"): "x = 2  # unsaved\n"})
    link = FakeClientLink(client, fs=("read", "write"))
    seen: list[tuple[str, str, str]] = []
    async with anyio.create_task_group() as tg:
        hosts = AcpHosts(
            load_config({"gates": {"analyzer": {"enabled": False}}}),
            link,
            lambda config: ReplayModel([]),
            lambda session_id, text: anyio.lowlevel.checkpoint(),
            lambda session_id, path, text: seen.append((session_id, path, text)),
            tg,
            storage=None,
            analyzers=(),
            watch=False,
        )
        host = await hosts.host(tmp_path)
        assert await hosts.host(tmp_path) is host  # one host per folder
        assert isinstance(host.view, WitnessedWorkspace)
        assert isinstance(host.view.inner, ClientFsWorkspace)
        refreshed: list[Any] = []
        host.pool.refresh = refreshed.append  # type: ignore[method-assign]
        token = current_session.set("ses_a")
        try:
            content = await host.workspace.read_text("app.py")
            await host.workspace.write_text("app.py", "x = 3\n")
        finally:
            current_session.reset(token)
        assert content.text == "x = 2  # unsaved\n"
        assert refreshed == [["app.py"]]
        assert seen == [("ses_a", "app.py", "x = 2  # unsaved\n")]
        assert hosts._approver("ses_a") is hosts._approver("ses_a")
        assert hosts._approver("ses_a") is not hosts._approver("ses_b")
        hosts.close()


async def test_no_new_host_once_closing(tmp_path: Path) -> None:
    async with anyio.create_task_group() as tg:
        hosts = AcpHosts(
            load_config({}),
            FakeClientLink(FakeAcpClient()),
            lambda config: ReplayModel([]),
            lambda session_id, text: anyio.lowlevel.checkpoint(),
            lambda session_id, path, text: None,
            tg,
            storage=None,
            analyzers=(),
            watch=False,
        )
        hosts.close()
        with pytest.raises(RuntimeError, match="closing"):
            await hosts.host(tmp_path)
