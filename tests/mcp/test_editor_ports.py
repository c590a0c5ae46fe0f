"""rein.lsp.mcp_ports: inputs through rein/askUser (hidden, remembered by
the extension), trust through rein/confirm naming the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcMethodNotFound

from rein.config import ReinConfig
from rein.harness.redaction import REDACTOR, redact
from rein.lsp.client_timeout import ClientTimeout
from rein.lsp.mcp_ports import EditorMcpPorts
from rein.mcp.config import load_servers
from tests.fakes.channel import FakeClientChannel

_FILE = {
    "inputs": [
        {"type": "promptString", "id": "token", "description": "GitHub token", "password": True},
        {"type": "pickString", "id": "region", "options": ["eu", "us"], "default": "eu"},
    ],
    "servers": {
        "gh": {
            "command": "gh-mcp",
            "args": ["--region", "${input:region}"],
            "env": {"GH_TOKEN": "${input:token}"},
        }
    },
}


@pytest.fixture(autouse=True)
def _forget_secrets() -> Any:
    yield
    REDACTOR.forget_all()


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".vscode").mkdir(parents=True)
    (root / ".vscode" / "mcp.json").write_text(json.dumps(_FILE))
    return root


@pytest.mark.anyio
async def test_trust_then_inputs_are_asked_through_the_editor(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    client = FakeClientChannel(
        {
            "rein/confirm": [{"approved": True}],
            "rein/askUser": [{"answer": "eu"}, {"answer": "ghp-token-value-1234"}],
        }
    )
    result = await load_servers(root, ReinConfig(), EditorMcpPorts(client, tmp_path / "st"))  # type: ignore[arg-type]
    [spec] = result.servers
    assert spec.args == ("--region", "eu") and dict(spec.env) == {
        "GH_TOKEN": "ghp-token-value-1234"
    }
    (confirm, trust_params), (_, region), (_, token) = client.requests
    assert confirm == "rein/confirm"
    assert trust_params["tool"] == "mcp"
    assert trust_params["title"] == "Trust the MCP server 'gh' from .vscode/mcp.json?"
    assert "gh-mcp --region '${input:region}'" in trust_params["detail"]
    assert region == {
        "title": "MCP server input: region",
        "question": "The value of ${input:region}",
        "password": False,
        "remember": "mcp-input:region",
        "options": ["eu", "us"],
        "default": "eu",
    }
    assert token == {
        "title": "MCP server input: token",
        "question": "GitHub token",
        "password": True,
        "remember": "mcp-input:token",
    }
    assert redact("GH_TOKEN=ghp-token-value-1234") == "GH_TOKEN=[redacted]"
    # Trust is remembered in the storage folder: the next load asks only the inputs
    # (which the extension answers from its SecretStorage).
    client.answers["rein/askUser"] = [{"answer": "us"}, {"answer": "ghp-token-value-1234"}]
    again = await load_servers(root, ReinConfig(), EditorMcpPorts(client, tmp_path / "st"))  # type: ignore[arg-type]
    assert [s.args for s in again.servers] == [("--region", "us")]
    assert [m for m, _ in client.requests[3:]] == ["rein/askUser", "rein/askUser"]


@pytest.mark.parametrize(
    ("confirm", "reason"),
    [
        pytest.param({"approved": False}, "", id="denied"),
        pytest.param(
            ClientTimeout("rein/confirm", 600),
            " (the editor did not answer rein/confirm within 600 s (approval.timeoutMs))",
            id="timeout",
        ),
        pytest.param(
            JsonRpcMethodNotFound("no"),
            " (this editor cannot ask (rein/confirm is not supported))",
            id="not-supported",
        ),
    ],
)
@pytest.mark.anyio
async def test_no_trust_no_server_and_no_input_asked(
    tmp_path: Path, confirm: Any, reason: str
) -> None:
    root = _workspace(tmp_path)
    client = FakeClientChannel({"rein/confirm": [confirm]})
    result = await load_servers(root, ReinConfig(), EditorMcpPorts(client, tmp_path / "st"))  # type: ignore[arg-type]
    assert result.servers == []
    assert [s.reason for s in result.skipped] == [
        "not trusted: .vscode/mcp.json defines it to run gh-mcp --region '${input:region}'" + reason
    ]
    assert [m for m, _ in client.requests] == ["rein/confirm"]


@pytest.mark.anyio
async def test_a_dismissed_or_invalid_input_skips_the_server(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    client = FakeClientChannel(
        {
            "rein/confirm": [{"approved": True}] * 2,
            "rein/askUser": [{"answer": None}, {"answer": "mars"}],
        }
    )
    ports = EditorMcpPorts(client, tmp_path / "st")
    first = await load_servers(root, ReinConfig(), ports)  # type: ignore[arg-type]
    assert [s.reason for s in first.skipped] == [".vscode/mcp.json: input 'region' was not given"]
    second = await load_servers(root, ReinConfig(), ports)  # type: ignore[arg-type]
    assert [s.reason for s in second.skipped] == [
        ".vscode/mcp.json: input 'region' was not given (the answer is not one of eu, us)"
    ]
