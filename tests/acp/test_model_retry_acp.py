"""An ACP editor sees the model's retries: the real ``rein acp`` over stdio,
its openai provider over HTTP to the mock server, which answers 429 with a
short ``Retry-After`` first. ACP has no status line: the retry is a tool
call every client shows ("Model retry 1/4 in 0.05 s", the reason as its
content), in progress while the request waits, completed once the reply
starts."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp.helpers import text_block

from rein.providers.mock_server import MockServer
from tests.acp.conftest import REQUEST_S, Home, load_scenario, started

pytestmark = pytest.mark.e2e


async def test_a_retry_is_a_call_that_ends_when_the_reply_starts(
    tmp_path: Path, home: Home, mock: MockServer
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    await load_scenario(
        mock,
        "retry",
        [{"fault": {"status": 429, "retry_after": 0.05}}, {"text": "done after waiting"}],
    )
    async with started(ws, home) as (agent, session_id):
        with anyio.fail_after(REQUEST_S):
            done = await agent.conn.prompt(session_id=session_id, prompt=[text_block("go")])
        sent = agent.editor.sent(session_id)
    assert done.stop_reason == "end_turn"
    retry = [u for u in sent if str(u.get("toolCallId", "")).startswith("rein-retry-")]
    start, end = retry
    assert start["sessionUpdate"] == "tool_call" and start["status"] == "in_progress"
    assert start["title"] == "Model retry 1/4 in 0.05 s" and start["kind"] == "other"
    [content] = start["content"]
    assert content["content"]["text"].startswith(f"openai ({mock.url}/v1) rate limit (HTTP 429)")
    assert start["rawInput"] == {
        "provider": f"openai ({mock.url}/v1)",
        "attempt": 1,
        "maxAttempts": 4,
        "waitS": 0.05,
    }
    assert end == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": start["toolCallId"],
        "status": "completed",
    }
    # Completed before the reply's first chunk: the status clears as it starts.
    first_chunk = next(i for i, u in enumerate(sent) if u["sessionUpdate"] == "agent_message_chunk")
    assert sent.index(start) < sent.index(end) < first_chunk
    assert agent.editor.said(session_id).strip() == "done after waiting"
