"""Both hosts build their sessions through one function: the same config
gives the same tools, gates and prompts in ``rein serve`` and ``rein run``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pygls.workspace import Workspace

from rein.config import load_config
from rein.hosting.headless import HeadlessSession
from rein.lsp import create_server
from rein.providers.replay import ReplayModel
from rein.session import Session

# A server the test made and did not shut down (or a shutdown that did not
# wait for its disk watcher) left the watcher's tasks unstarted and its
# streams unclosed when the loop closed: warnings, not failures, before.
# Raised in a finalizer, they reach pytest as unraisable exceptions.
pytestmark = pytest.mark.filterwarnings(
    "error:coroutine .* was never awaited:RuntimeWarning",
    "error::ResourceWarning",
    "error::pytest.PytestUnraisableExceptionWarning",
)
CONFIG = {
    "gates": {
        "runtime": {"command": "python -c pass"},
        "custom": [{"name": "lint", "command": "true"}],
        "dependencies": {"commands": {"requirements.txt": "true"}},
    }
}


def _shape(session: Session) -> dict[str, object]:
    assert session.tools is not None
    return {
        "tools": session.tools.names(),
        "gates": [g.name for g in session.gates.gates] if session.gates else None,
        "agent_gates": session.agent.gates is not None,
        "system": session.system_prompt,
        "agent_system": session.agent.system_prompt,
        "planner": session.planner_prompt,
        "flow": session.flow is not None,
        "wire_dump": session.agent.wire_dump,
    }


@asynccontextmanager
async def _server_session(
    root: Path, mode: str, config: dict[str, Any] = CONFIG
) -> AsyncIterator[Session]:
    """``rein serve``'s session, its server shut down after (the first
    session starts the server's disk watcher)."""
    server = create_server()
    server.protocol._workspace = Workspace(root.as_uri())
    server.config = load_config(config, "test")
    server.model_factory = lambda _config: ReplayModel([])
    try:
        yield server.new_session(mode=mode, title="t")
    finally:
        await server.shutdown_sessions()


async def _both_hosts(root: Path, config: dict[str, Any]) -> tuple[Session, Session]:
    """The agent session ``rein serve`` and ``rein run`` build from ``config``."""
    async with _server_session(root, "agent", config) as editor:
        pass
    async with HeadlessSession(
        root, ReplayModel([]), load_config(config, "test"), analyzers=(), watch=False
    ) as host:
        return editor, host.session


@pytest.mark.parametrize("mode", ["agent", "plan", "explain"])
async def test_serve_and_run_build_the_same_session(tmp_path: Path, mode: str) -> None:
    (tmp_path / "AGENTS.md").write_text("Use tabs, never spaces.\n")
    # No Python file: the navigator is a host's port, and neither host has
    # one here (rein run below starts no analyzer; rein serve's folder,
    # without a language Rein's servers navigate, gets none: with one it
    # would answer the navigation tools with them, tests/lsp/test_editor_navigation.py).
    (tmp_path / "app.cfg").write_text("x = 1\n")
    async with _server_session(tmp_path, mode) as session:
        editor = _shape(session)
    async with HeadlessSession(
        tmp_path,
        ReplayModel([]),
        load_config(CONFIG, "test"),
        analyzers=(),
        mode=mode,  # type: ignore[arg-type]
        watch=False,
    ) as host:
        headless = _shape(host.session)
    assert headless == editor
    # What the comparison stands on: the parts each mode must have.
    assert "Use tabs, never spaces." in str(editor["system"])
    if mode == "explain":
        assert "task" not in editor["tools"] and editor["gates"] is None  # type: ignore[operator]
    else:
        assert "task" in editor["tools"]  # type: ignore[operator]
        assert editor["gates"] == ["dependencies", "analyzer", "runtime", "lint"]
    assert editor["flow"] is (mode == "plan")
    # Neither host asks for model_request events (wire dumps stay off).
    assert editor["wire_dump"] is False
    # Plan mode: the gates run after the last step, through the flow.
    assert editor["agent_gates"] is (mode == "agent")


async def test_disabled_tools_leave_both_hosts_and_their_prompts(tmp_path: Path) -> None:
    config = {"tools": {"disabled": ["task", "run_command"]}}
    for session in await _both_hosts(tmp_path, config):
        assert session.tools is not None
        names = session.tools.names()
        assert "task" not in names and "run_command" not in names
        assert "edit_file" in names
        assert "`task`" not in session.system_prompt
        assert "`run_command`" not in session.system_prompt
        assert session.agent.env.subagents is None


@pytest.mark.parametrize("depth", [0, 1])
async def test_subagent_max_depth_reaches_both_hosts(tmp_path: Path, depth: int) -> None:
    """``harness.subagentMaxDepth``: 0 offers no ``task`` tool; 1 offers it
    to the agent, and its subagents get none."""
    config = {"harness": {"subagentMaxDepth": depth}}
    for session in await _both_hosts(tmp_path, config):
        assert session.tools is not None
        spawner = session.agent.env.subagents
        if depth == 0:
            assert "task" not in session.tools.names() and spawner is None
            assert "`task`" not in session.system_prompt
        else:
            assert "task" in session.tools.names()
            assert "task" not in spawner.tool_names(None)
            assert "task" not in spawner.tool_names(["read_file", "task"])
