"""Wire dumps: raw requests and SSE lines in JSONL, keys redacted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rein.harness import Agent, HarnessConfig
from rein.harness.errors import AuthError
from rein.providers.mock_server import MockServer
from tests.fakes.events import EventLog
from tests.providers.conftest import make_model, request, run_turn

SECRET = "sk-live-0123456789abcdef"


@pytest.mark.parametrize(
    ("provider", "header"),
    [
        pytest.param("openai", "authorization", id="openai"),
        pytest.param("anthropic", "x-api-key", id="anthropic"),
    ],
)
async def test_dump_has_request_and_stream_without_the_key(
    mock_server: MockServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    header: str,
) -> None:
    monkeypatch.setenv("DUMP_TEST_KEY", SECRET)
    dump = tmp_path / "wire" / "dump.jsonl"
    mock_server.load([{"text": "dumped text", "chunk_size": 6}])
    model = make_model(provider, mock_server, api_key_env="DUMP_TEST_KEY", wire_dump=str(dump))
    # Even a key pasted into a message is scrubbed.
    await run_turn(model, request(f"my key is {SECRET}"))
    assert mock_server.requests[0].headers[header].endswith(SECRET)  # it was really sent

    text = dump.read_text()
    assert SECRET not in text
    sent, received = (json.loads(line) for line in text.splitlines())
    assert sent["kind"] == "request" and sent["provider"] == provider
    assert sent["headers"][header] == "[redacted]"
    assert sent["url"].startswith(mock_server.url)
    assert "my key is [redacted]" in json.dumps(sent["body"]["messages"])
    assert received["kind"] == "response" and received["status"] == 200
    assert received["error"] is None
    assert any("dumped" in line for line in received["lines"])
    assert any(line.startswith("data: ") for line in received["lines"])


async def test_dump_records_error_responses(mock_server: MockServer, tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    mock_server.load([{"fault": {"status": 401, "body": {"error": {"message": "bad key"}}}}])
    model = make_model("openai", mock_server, wire_dump=str(dump))
    with pytest.raises(AuthError):
        await run_turn(model, request())
    _, received = (json.loads(line) for line in dump.read_text().splitlines())
    assert received["status"] == 401
    assert received["lines"] == ['{"error": {"message": "bad key"}}']
    assert received["error"].startswith("AuthError")


async def test_no_dump_by_default(mock_server: MockServer, tmp_path: Path) -> None:
    mock_server.load([{"text": "x"}])
    model = make_model("openai", mock_server)
    await run_turn(model, request())
    assert model._dump is None


@pytest.mark.parametrize(
    ("provider", "header"),
    [
        pytest.param("openai", "authorization", id="openai"),
        pytest.param("anthropic", "x-api-key", id="anthropic"),
    ],
)
async def test_agent_wire_dump_event_is_the_providers_payload_without_the_key(
    mock_server: MockServer, monkeypatch: pytest.MonkeyPatch, provider: str, header: str
) -> None:
    """``Agent(wire_dump=True)``: the model_request event is what the
    provider sends (URL, headers, body), the key redacted everywhere."""
    monkeypatch.setenv("DUMP_TEST_KEY", SECRET)
    mock_server.load([{"text": "dumped"}])
    model = make_model(provider, mock_server, api_key_env="DUMP_TEST_KEY")
    agent = Agent(
        model,
        system_prompt="Be brief.",
        wire_dump=True,
        config=HarnessConfig(run_idle_timeout_ms=0),
    )
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt(f"my key is {SECRET}")
    await model.aclose()
    assert result.status == "completed", result.error

    [event] = log.of("model_request")
    assert event.format == provider and event.model == model.name
    assert SECRET not in event.model_dump_json()
    assert event.payload["url"] == mock_server.url + ("/v1" if provider == "openai" else "") + (
        model.endpoint()
    )
    assert event.payload["headers"][header] == "[redacted]"
    sent = mock_server.requests[0]
    assert sent.headers[header].endswith(SECRET)  # the real request carried it
    assert event.payload["body"] == json.loads(json.dumps(sent.body).replace(SECRET, "[redacted]"))
