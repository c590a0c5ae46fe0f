"""The panel sees the model's retries: the real `rein serve` over stdio, the
real OpenAI-compatible provider over HTTP to the mock server. A 429 with a
short ``Retry-After`` reaches the editor as a ``model_retry`` event before
the reply starts; a steer sent during the server's wait goes in at once, and
the steered request waits out the rest of it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from rein.providers.mock_server import MockServer
from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server

pytestmark = pytest.mark.e2e


def _model(mock: MockServer) -> dict[str, Any]:
    return {"provider": "openai", "baseUrl": f"{mock.url}/v1", "model": "m", "apiKeyEnv": ""}


async def _request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(editor.client.protocol.send_request_async(method, params), 60)


async def test_a_retry_reaches_the_panel_before_the_reply(workspace: Path, tmp_path: Path) -> None:
    scenario = [{"fault": {"status": 429, "retry_after": 0.05}}, {"text": "done after waiting"}]
    async with (
        MockServer(scenario=scenario) as mock,
        running_server(workspace, tmp_path, model=_model(mock)) as editor,
    ):
        result = await _request(editor, "rein/prompt", {"text": "go"})
        url = mock.url
    assert result["status"] == "completed", result
    events = [e["event"] for e in editor.events]
    [retry] = [e for e in events if e["type"] == "model_retry"]
    assert retry == {
        "type": "model_retry",
        "provider": f"openai ({url}/v1)",
        "reason": retry["reason"],
        "attempt": 1,
        "max_attempts": 4,
        "wait_s": 0.05,
        "purpose": "turn",
    }
    assert retry["reason"].startswith(f"openai ({url}/v1) rate limit (HTTP 429)")
    types = [e["type"] for e in events]
    assert types.index("model_retry") < types.index("message_start", types.index("turn_start"))


async def test_a_steer_during_the_servers_wait_goes_in_and_the_rest_is_waited_out(
    workspace: Path, tmp_path: Path
) -> None:
    # A steer ends a wait of Rein's choosing at once, never the server's
    # (tests/providers/test_retry_waits.py has both): here it goes in at
    # once, and the steered request waits out the rest of the Retry-After,
    # announced again.
    scenario = [
        {"fault": {"status": 503, "retry_after": 2}},
        {"text": "steered", "expect": {"last_message_contains": "use the other file"}},
    ]
    async with (
        MockServer(scenario=scenario) as mock,
        running_server(workspace, tmp_path, model=_model(mock)) as editor,
    ):
        prompt = asyncio.ensure_future(_request(editor, "rein/prompt", {"text": "go"}))
        retry = await editor.wait_event(lambda e: e["event"]["type"] == "model_retry")
        assert retry["event"]["wait_s"] == 2
        steer = {"sessionId": retry["sessionId"], "text": "use the other file"}
        assert (await _request(editor, "rein/steer", steer))["queued"] is True
        result = await asyncio.wait_for(prompt, 30)
        outcomes = [r.outcome for r in mock.requests]
    assert result["status"] == "completed", result
    assert outcomes == ["fault:status", "completed"]
    events = [e["event"] for e in editor.events]
    types = [e["type"] for e in events]
    first = types.index("model_retry")
    rest = types.index("model_retry", first + 1)
    assert first < types.index("steering_applied", first) < rest
    assert events[rest]["attempt"] == 1 and 0 < events[rest]["wait_s"] <= 2
