"""What the server keeps, over the real `rein serve`: a rejected request
makes no session, idle sessions leave memory and come back from the store,
the models share one HTTP client, and progress tokens end with their work.
``rein/serverState`` reports what the server holds."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from rein.providers.mock_server import MockServer
from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server, write_script

pytestmark = [
    pytest.mark.e2e,
    # The test client was never told of the prompts' workDoneTokens.
    pytest.mark.filterwarnings("ignore:Unknown progress token"),
]


async def send(editor: Editor, method: str, params: Any) -> Any:
    if method == "workspace/executeCommand":
        params = lsp.ExecuteCommandParams(command=params["command"], arguments=params["arguments"])
    return await asyncio.wait_for(editor.client.protocol.send_request_async(method, params), 60)


async def state(editor: Editor) -> dict[str, Any]:
    result: dict[str, Any] = await send(editor, "rein/serverState", {})
    return result


def seqs(editor: Editor, session_id: str) -> list[int]:
    return [e["seq"] for e in editor.events if e["sessionId"] == session_id]


APP = "file:///nowhere/app.py"

REJECTED = [
    pytest.param("rein/prompt", {"text": ""}, id="prompt-empty-text"),
    pytest.param("rein/prompt", {"text": "hi", "sessionId": "ses_missing"}, id="prompt-no-session"),
    pytest.param("rein/prompt", {"text": "hi \ud800"}, id="prompt-lone-surrogate"),
    pytest.param(
        "rein/prompt", {"text": "hi", "context": {"range": {"start": "x"}}}, id="prompt-bad-range"
    ),
    pytest.param(
        "rein/prompt",
        {"text": "hi", "context": {"diagnostics": [{"range": 5}]}},
        id="prompt-bad-diagnostic",
    ),
    pytest.param(
        "workspace/executeCommand",
        {"command": "rein.fix", "arguments": [{"uri": APP, "range": {"start": {"line": "a"}}}]},
        id="fix-bad-range",
    ),
    pytest.param(
        "workspace/executeCommand",
        {"command": "rein.ask", "arguments": [{"uri": APP, "question": "why \ud800"}]},
        id="ask-lone-surrogate",
    ),
    pytest.param(
        "workspace/executeCommand",
        {"command": "rein.explain", "arguments": [{"uri": APP, "selection": "x \ud800"}]},
        id="explain-lone-surrogate",
    ),
    pytest.param(
        "workspace/executeCommand",
        {"command": "rein.explain", "arguments": [{"uri": APP, "diagnostics": [{"range": 3}]}]},
        id="explain-bad-diagnostic",
    ),
]


async def test_a_rejected_request_leaves_no_session(workspace: Path, tmp_path: Path) -> None:
    """Every case against one server, its sessions checked after each (a
    rejected request changes nothing): one start rather than one per case."""
    write_script(tmp_path, [{"text": "never asked"}])
    async with running_server(workspace, tmp_path) as editor:
        for case in REJECTED:
            method, params = case.values
            assert isinstance(method, str) and isinstance(params, dict)
            with pytest.raises(JsonRpcException) as raised:
                await send(editor, method, params)
            if str(case.id).endswith("lone-surrogate"):
                # Invalid params, naming the field, not an internal error.
                assert raised.value.code == -32602, (case.id, raised.value)
                assert "nicode" in str(raised.value), case.id
            assert (await send(editor, "rein/sessions", {}))["sessions"] == [], case.id
            assert (await state(editor))["sessionsInMemory"] == [], case.id
            assert editor.events == [], case.id


def mock_model(mock: MockServer) -> dict[str, Any]:
    """The ``rein.model`` settings of the mock over HTTP (one scenario for
    every session, so turns follow each other across sessions)."""
    return {"provider": "openai", "baseUrl": mock.url + "/v1", "model": "m", "apiKeyEnv": ""}


async def test_an_evicted_session_comes_back_from_the_store_and_goes_on(
    workspace: Path, tmp_path: Path
) -> None:
    async with MockServer() as mock:
        mock.load(
            [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
                {"text": "greet() says hello"},
                {"text": "second session"},
                {
                    "expect": {"messages_contain": ["what does greet do?", "greet() says hello"]},
                    "text": "and shout() shouts it",
                },
            ]
        )
        await _evict_and_reload(workspace, tmp_path, mock_model(mock))


async def _evict_and_reload(workspace: Path, tmp_path: Path, model: dict[str, Any]) -> None:
    limits = {"sessions": {"maxInMemory": 1}}
    async with running_server(workspace, tmp_path, model=model, settings=limits) as editor:
        first = await send(editor, "rein/prompt", {"text": "what does greet do?"})
        assert first["status"] == "completed", first.get("error")
        first_id = first["sessionId"]
        assert (await state(editor))["sessionsInMemory"] == [first_id]
        first_seqs = seqs(editor, first_id)
        second = await send(editor, "rein/prompt", {"text": "another task"})
        assert second["status"] == "completed", second.get("error")
        # Over the bound: the idle first session left memory, not the store.
        held = await state(editor)
        assert held["sessionsInMemory"] == [second["sessionId"]]
        assert held["streams"] == 1
        # Steering or aborting it is answered as for any idle session.
        steer = await send(editor, "rein/steer", {"sessionId": first_id, "text": "x"})
        assert steer["queued"] is False
        assert await send(editor, "rein/abort", {"sessionId": first_id}) == {"aborted": False}
        listed = [s["id"] for s in (await send(editor, "rein/sessions", {}))["sessions"]]
        assert sorted(listed) == sorted([first_id, second["sessionId"]])
        # Named again, it is loaded with its transcript and runs.
        third = await send(editor, "rein/prompt", {"text": "and shout?", "sessionId": first_id})
        assert third["status"] == "completed", third.get("error")
        assert third["text"] == "and shout() shouts it"
        assert (await state(editor))["sessionsInMemory"] == [first_id]
        # Its events go on from the seq it had reached: gap-free across the eviction.
        assert seqs(editor, first_id) == list(range(1, len(seqs(editor, first_id)) + 1))
        assert len(seqs(editor, first_id)) > len(first_seqs)


async def test_sessions_share_one_http_client_and_progress_tokens_end_with_their_work(
    workspace: Path, tmp_path: Path
) -> None:
    async with MockServer() as mock:
        mock.load([{"text": f"answer {i}"} for i in range(3)])
        async with running_server(workspace, tmp_path, model=mock_model(mock)) as editor:
            results = await asyncio.gather(
                *(
                    send(editor, "rein/prompt", {"text": f"task {i}", "workDoneToken": f"t{i}"})
                    for i in range(3)
                )
            )
            assert [r["status"] for r in results] == ["completed"] * 3
            assert len({r["sessionId"] for r in results}) == 3
            held = await state(editor)
            assert held["httpClients"] == 1
            assert held["progressTokens"] == 0
