"""Wire dumps: raw requests and SSE lines in JSONL, keys redacted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rein.harness.errors import AuthError
from rein.providers.mock_server import MockServer
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
