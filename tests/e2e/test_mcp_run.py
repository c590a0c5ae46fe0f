"""MCP tool servers through `rein run`: the OpenAI provider over real HTTP
against the mock server (whose scenario checks the tools it was offered),
calling real stdio MCP servers (mcp-server-time from PyPI, the tests'
toolbox)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from rein.providers.mock_server import MockServer
from tests.forkserver import REIN
from tests.mcp.conftest import TOOLBOX

pytestmark = pytest.mark.e2e


TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
BOX = {"command": sys.executable, "args": [str(TOOLBOX)]}


def _config(tmp_path: Path, url: str, servers: dict[str, object], **approval: object) -> Path:
    section = {
        "model": {"provider": "openai", "baseUrl": url + "/v1", "model": "m", "apiKeyEnv": ""},
        "mcp": {"servers": servers},
        "approval": approval,
    }
    path = tmp_path / "rein.json"
    path.write_text(json.dumps({"rein": section}))
    return path


def _rein_run(root: Path, config: Path) -> list[str]:
    return [
        *REIN,
        "run",
        "what time is it",
        "-w",
        str(root),
        "--config",
        str(config),
        "--json",
    ]


async def test_rein_run_calls_an_mcp_tool_over_http_and_names_collide_deterministically(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    scenario = [
        {
            "expect": {
                "tools_include": [
                    "mcp__time__get_current_time",
                    "mcp__my_box__echo",
                    "mcp__my_box__echo_2",
                ],
            },
            "tool_calls": [
                {"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}},
                {"name": "mcp__my_box__echo_2", "arguments": {"text": "second"}},
            ],
        },
        {"expect": {"last_message_contains": "echo: second"}, "text": "it is late"},
    ]
    async with MockServer(scenario) as mock:
        servers = {"time": TIME, "my.box": BOX, "my_box": BOX}
        config = _config(tmp_path, mock.url, servers, mcp="allow")
        done = await anyio.run_process(
            _rein_run(root, config),
            check=False,
        )
        outcomes = [r.outcome for r in mock.requests]
    stdout = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert outcomes == ["completed", "completed"]
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    ends = [e for e in events if e.get("type") == "tool_call_end"]
    assert len(ends) == 2 and not any(e["is_error"] for e in ends), ends
    # The calls run in parallel: their ends come in either order.
    content = {e["name"]: e["content"] for e in ends}
    assert '"timezone": "UTC"' in content["mcp__time__get_current_time"]
    assert content["mcp__my_box__echo_2"] == "echo: second"
    starts = {e["name"]: e for e in events if e.get("type") == "tool_call_start"}
    # "my.box" and "my_box" both sanitise to my_box: sorted, "my.box" keeps the name.
    assert starts["mcp__my_box__echo_2"]["details"] == {"mcpServer": "my_box", "mcpTool": "echo"}
    assert any(
        e.get("type") == "mcp_server_state" and e["server"] == "time" and e["state"] == "running"
        for e in events
    )


async def test_rein_run_without_an_approver_denies_mcp_calls(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    scenario = [
        {"tool_calls": [{"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"expect": {"last_message_contains": "Denied"}, "text": "could not"},
    ]
    async with MockServer(scenario) as mock:
        config = _config(tmp_path, mock.url, {"time": TIME})  # the one it calls
        done = await anyio.run_process(
            _rein_run(root, config),
            check=False,
            stdin=subprocess.DEVNULL,
        )
        outcomes = [r.outcome for r in mock.requests]
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert outcomes == ["completed", "completed"]


def _image_config(tmp_path: Path, url: str, provider: str, images: bool) -> Path:
    base = url + "/v1" if provider == "openai" else url
    model = {"provider": provider, "baseUrl": base, "model": "m", "apiKeyEnv": "", "images": images}
    section = {
        "model": model,
        "mcp": {"servers": {"box": BOX}},
        "approval": {"mcp": "allow"},
    }
    path = tmp_path / "rein.json"
    path.write_text(json.dumps({"rein": section}))
    return path


def _images_sent(provider: str, body: dict[str, object]) -> list[object]:
    """The images of a request body, as the provider's wire has them."""
    messages = body["messages"]
    assert isinstance(messages, list)
    found: list[object] = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            inner = part.get("content") if part.get("type") == "tool_result" else [part]
            for block in inner if isinstance(inner, list) else []:
                if block.get("type") in ("image", "image_url"):
                    found.append(block)
    return found


@pytest.mark.parametrize(
    ("provider", "images"),
    [("anthropic", True), ("openai", True), ("openai", False)],
    ids=["anthropic", "openai", "openai-text-only"],
)
async def test_an_mcp_tools_image_reaches_the_model_over_http(
    tmp_path: Path, provider: str, images: bool
) -> None:
    from tests.mcp_servers.toolbox import PNG

    root = tmp_path / "ws"
    root.mkdir()
    scenario = [
        {"tool_calls": [{"name": "mcp__box__image", "arguments": {}}]},
        {"expect": {"messages_contain": ["[image 1: image/png"]}, "text": "a tiny picture"},
    ]
    async with MockServer(scenario) as mock:
        config = _image_config(tmp_path, mock.url, provider, images)
        done = await anyio.run_process(_rein_run(root, config), check=False)
        requests = list(mock.requests)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert [r.outcome for r in requests] == ["completed", "completed"]
    sent = _images_sent(provider, requests[1].body)
    data = base64.b64encode(PNG).decode()
    if not images:
        assert sent == []
        assert "rein.model.images is false" in json.dumps(requests[1].body)
    elif provider == "anthropic":
        assert sent == [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
        ]
    else:
        assert sent == [
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}
        ]
