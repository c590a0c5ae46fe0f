"""``rein acp`` where the model's commands cannot run sandboxed (issue 38):
the session is told once, after its ``session/new`` answer."""

from __future__ import annotations

import os
from pathlib import Path

from rein.providers.mock_server import MockServer
from tests.acp.conftest import Home, rein_config, started, write_config


async def test_a_session_is_told_once_that_commands_cannot_run_sandboxed(
    tmp_path: Path, home: Home, mock: MockServer
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    missing = tmp_path / "no-bwrap"
    config = rein_config(home.path, mock.url, sandbox={"bwrap": str(missing)})
    write_config(home.config_file, config)
    # The rein under test, also when it is not the one installed.
    path = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
    async with started(ws, home, env=path) as (agent, sid):
        told = await agent.editor.wait_for(
            sid,
            lambda u: (
                u["sessionUpdate"] == "agent_message_chunk" and "sandbox" in u["content"]["text"]
            ),
        )
        said = [u for u in agent.editor.sent(sid) if "sandbox" in str(u)]
    assert told["content"]["text"] == (
        f"Rein: sandbox: commands cannot run sandboxed here (bubblewrap ({missing}) is not "
        "installed: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; "
        "Fedora: dnf install bubblewrap)); every command asks; the commands of gates, "
        "preview, install (sandbox.also) run unsandboxed.\n\n"
    )
    assert len(said) == 1
