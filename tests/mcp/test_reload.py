"""A changed MCP configuration (settings or a configuration file) is picked
up before the next run: removed servers stop, changed ones restart, new ones
start, the others are left alone."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from rein.config import ReinConfig
from rein.mcp.hosting import workspace_manager
from tests.fakes.mcp import FakeMcpPorts
from tests.mcp.conftest import TOOLBOX
from tests.mcp.test_manager import States

BOX = {"command": sys.executable, "args": [str(TOOLBOX)]}


class Settings:
    """The configuration a host would hand over, changed by the test."""

    def __init__(self, servers: dict[str, Any]) -> None:
        self.set(servers)

    def set(self, servers: dict[str, Any]) -> None:
        self.value = ReinConfig.model_validate({"mcp": {"servers": servers}})

    def __call__(self) -> ReinConfig:
        return self.value


def _started(states: States, mark: int) -> list[str]:
    return [name for name, state, _ in states.seen[mark:] if state == "starting"]


async def test_settings_changes_stop_restart_and_start_only_what_changed(tmp_path: Path) -> None:
    settings = Settings({"box": BOX, "keep": BOX})
    manager = workspace_manager(tmp_path, settings, FakeMcpPorts())
    states = States()
    manager.subscribe(states)
    try:
        await manager.ensure_started()
        assert {n: s.state for n, s in manager.servers.items()} == {
            "box": "running",
            "keep": "running",
        }
        kept = manager.servers["keep"].connection
        # Nothing changed: nothing starts.
        mark = len(states.seen)
        await manager.ensure_started()
        assert _started(states, mark) == []
        # "box" removed, "new" added, "keep" unchanged.
        settings.set({"keep": BOX, "new": BOX})
        mark = len(states.seen)
        await manager.ensure_started()
        assert sorted(manager.servers) == ["keep", "new"]
        assert ("box", "stopped", "removed from the configuration") in states.seen[mark:]
        assert _started(states, mark) == ["new"]
        assert manager.servers["keep"].connection is kept
        assert {t.server for t in manager.tool_infos()} == {"keep", "new"}
        # "keep" changed (an environment variable): it restarts.
        settings.set({"keep": {**BOX, "env": {"X": "1"}}, "new": BOX})
        mark = len(states.seen)
        await manager.ensure_started()
        assert _started(states, mark) == ["keep"]
        assert manager.servers["keep"].connection is not kept
        assert manager.servers["keep"].state == "running"
    finally:
        await manager.aclose()


async def test_an_edited_mcp_json_is_read_again(tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"one": BOX}}))
    ports = FakeMcpPorts()
    manager = workspace_manager(tmp_path, Settings({}), ports)
    try:
        await manager.ensure_started()
        assert list(manager.servers) == ["one"]
        config.write_text(json.dumps({"mcpServers": {"one": BOX, "two": BOX}}))
        # A different size is enough; make the time differ too, whatever the clock's grain.
        stat = config.stat()
        os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        await manager.ensure_started()
        assert {n: s.state for n, s in manager.servers.items()} == {
            "one": "running",
            "two": "running",
        }
        # The unchanged server was trusted once; only the new one was asked about.
        assert len(ports.asked_trust) == 2
    finally:
        await manager.aclose()


async def test_servers_added_by_the_client_survive_a_configuration_change(tmp_path: Path) -> None:
    from tests.mcp.conftest import toolbox_spec

    settings = Settings({"box": BOX})
    manager = workspace_manager(tmp_path, settings, FakeMcpPorts())
    try:
        await manager.ensure_started()
        assert await manager.add([toolbox_spec("editor")]) == ["editor"]
        editor = manager.servers["editor"].connection
        settings.set({"other": BOX})
        await manager.ensure_started()
        assert {n: s.state for n, s in manager.servers.items()} == {
            "editor": "running",
            "other": "running",
        }
        assert manager.servers["editor"].connection is editor
    finally:
        await manager.aclose()
