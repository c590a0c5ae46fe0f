"""Secrets never leave (issue 17): a provider key seeded in the server's
environment is searched for in every byte Rein wrote or sent.

The real `rein serve` over stdio talks to the mock server over real HTTP.
The model runs a command that prints the environment, reads a file holding
a key-shaped string, tries to read and search a secret file
(``tools.secretFiles``: ``.npmrc``), and a second prompt is answered 401 with a body that
echoes the key (as OpenAI's "Incorrect API key provided: sk-..." does). The
key is sent where it belongs (the Authorization header) and nowhere else:
not in a child's environment, a tool result, an event, a response, the
store, the server's debug log, or a later model request.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp

from rein.providers.mock_server import MockServer
from tests.fakes.editor import Editor, make_client, wire

pytestmark = pytest.mark.e2e

KEY = "sk-proj-SEEDEDkey0123456789abcdefABCDEF"
#: In the workspace's .npmrc: no key shape, so only the secret-file rule keeps it.
NPM_SECRET = "npmrc-value-Zq8w7e6r5t4y"
SHAPED = "sk-ant-api03-OTHERkey0123456789abcdefABCDEF"  # a key Rein does not hold


def _scenario() -> list[dict[str, Any]]:
    command = 'env | sort; echo "seen=$REIN_TEST_KEY"; echo "npm=$NPM_TOKEN"'
    return [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
        {
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "notes.txt"}},
                # A secret file (tools.secretFiles) holds a value Rein does not know.
                {"name": "read_file", "arguments": {"path": ".npmrc"}},
                {"name": "grep", "arguments": {"pattern": "authToken"}},
            ]
        },
        {"text": "done"},
        {
            "fault": {
                "kind": "status",
                "status": 401,
                "body": {"error": {"message": f"Incorrect API key provided: {KEY}."}},
            }
        },
    ]


async def test_a_seeded_key_is_in_no_byte_rein_wrote_or_sent(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text(f"deploy with {SHAPED}\n")
    (root / ".npmrc").write_text(f"//registry.npmjs.org/:_authToken={NPM_SECRET}\n")
    storage, log_path = tmp_path / "storage", tmp_path / "server.log"
    env = {**os.environ, "REIN_TEST_KEY": KEY, "NPM_TOKEN": "npm-pass-value"}
    env["REIN_TEST_LOG"] = str(log_path)
    async with MockServer(scenario=_scenario()) as mock:
        settings = {
            "storagePath": str(storage),
            "model": {
                "provider": "openai",
                "baseUrl": f"{mock.url}/v1",
                "model": "m",
                "apiKeyEnv": "REIN_TEST_KEY",
                "maxRetries": 0,
            },
            "approval": {"command": "allow"},
            "tools": {"passEnv": ["NPM_TOKEN"]},
        }
        client = make_client()
        ed = Editor(client, root)
        wire(ed)
        client.set_configuration(settings, section="rein")
        # The server's stderr (its debug log, pygls's lines included) goes to a file.
        script = 'exec "$0" -m rein serve --log-level debug 2>"$REIN_TEST_LOG"'
        await client.start_io("sh", "-c", script, sys.executable, env=env)
        try:
            await client.initialize_session(
                lsp.InitializeParams(
                    capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
                    root_uri=root.as_uri(),
                    initialization_options=settings,
                )
            )
            first = await client.protocol.send_request_async("rein/prompt", {"text": "go"})
            second = await client.protocol.send_request_async("rein/prompt", {"text": "again"})
            await asyncio.wait_for(client.shutdown_async(None), 10)
            client.exit(None)
        finally:
            await asyncio.wait_for(client.stop(), 10)
        requests = list(mock.requests)

    assert first["status"] == "completed", first
    assert second["status"] == "failed" and "401" in second["error"], second
    # The child never had the key; a variable passed on by configuration it had.
    ends = [e["event"] for e in ed.events if e["event"]["type"] == "tool_call_end"]
    [command_end] = [e for e in ends if e["name"] == "run_command"]
    output = command_end["content"]
    assert "seen=\n" in output and "REIN_TEST_KEY=" not in output
    assert "npm=npm-pass-value" in output
    # A key-shaped string in a file is redacted from the tool result.
    reads = [e for e in ends if e["name"] == "read_file"]  # run in parallel: any order
    [secret_end] = [e for e in reads if e["is_error"]]
    [read_end] = [e for e in reads if not e["is_error"]]
    assert "deploy with [redacted]" in read_end["content"]
    # A secret file is refused, and a search skips it.
    assert ".npmrc is a secret file" in secret_end["content"]
    [grep_end] = [e for e in ends if e["name"] == "grep"]
    assert grep_end["content"].startswith("No matches for 'authToken'"), grep_end
    # The key went where it belongs, so the search below is meaningful ...
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in requests)
    # ... and nowhere else.
    written: dict[str, bytes] = {"server log": log_path.read_bytes()}
    written |= {f"store {p.name}": p.read_bytes() for p in storage.rglob("*") if p.is_file()}
    written["events"] = json.dumps(ed.events).encode()
    written["responses"] = json.dumps([first, second]).encode()
    written["model requests"] = json.dumps([r.body for r in requests]).encode()
    for where, data in written.items():
        assert KEY.encode() not in data, f"the key leaked into the {where}"
        assert SHAPED.encode() not in data, f"the key-shaped string leaked into the {where}"
        assert NPM_SECRET.encode() not in data, f"the secret file leaked into the {where}"
    assert b"rein/prompt" in written["server log"]  # the debug log was on and written
