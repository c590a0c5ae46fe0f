"""The mock server itself: control API, non-streaming replies, running out,
delays, and the command-line entry point."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest

from rein.harness.errors import ConfigError
from rein.providers.mock_server import MockServer, run_mock_server

SCENARIO = """\
name: two-turns
turns:
  - text: first reply
    tool_calls: [{name: echo, arguments: {text: hi}, id: c1}]
    usage: {input_tokens: 5, output_tokens: 3}
  - text: second reply
"""


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "two.yaml"
    path.write_text(SCENARIO)
    return path


def _chat(stream: bool = False, model: str = "m") -> dict[str, object]:
    return {"model": model, "stream": stream, "messages": [{"role": "user", "content": "hi"}]}


async def test_control_api_switches_reports_and_resets(
    mock_server: MockServer, scenario_file: Path
) -> None:
    async with httpx.AsyncClient(base_url=mock_server.url) as client:
        loaded = await client.post("/mock/scenario", json={"file": str(scenario_file)})
        assert loaded.status_code == 200
        assert loaded.json() == {
            "file": str(scenario_file),
            "name": "two-turns",
            "index": 0,
            "turns": 2,
        }
        reply = await client.post("/v1/chat/completions", json=_chat(model="gpt-x"))
        assert reply.status_code == 200
        state = (await client.get("/mock/scenario")).json()
        assert state["index"] == 1
        requests = (await client.get("/mock/requests")).json()["requests"]
        assert len(requests) == 1
        assert requests[0]["body"] == _chat(model="gpt-x")
        assert requests[0]["turn"] == 1 and requests[0]["outcome"] == "completed"
        assert requests[0]["api"] == "openai" and requests[0]["disconnected"] is False

        reset = await client.post("/mock/reset")
        # The fixture's server started with no scenario: reset returns to it.
        assert reset.json() == {"ok": True, "index": 0, "file": None, "name": "empty"}
        assert (await client.get("/mock/scenario")).json()["turns"] == 0
        assert (await client.get("/mock/requests")).json() == {"requests": []}
        await client.post("/mock/scenario", json={"file": str(scenario_file)})
        again = await client.post("/v1/chat/completions", json=_chat())
        assert again.json()["choices"][0]["message"]["content"] == "first reply"

        inline = await client.post("/mock/scenario", json={"turns": [{"text": "inline"}]})
        assert inline.json()["file"] is None and inline.json()["turns"] == 1
        bad = await client.post("/mock/scenario", json={"file": "/nope/missing.yaml"})
        assert bad.status_code == 400 and "cannot read" in bad.json()["error"]["message"]
        unknown = await client.get("/mock/unknown")
        assert unknown.status_code == 404 and "no such endpoint" in unknown.text
        assert (await client.get("/mock/health")).json() == {"ok": True}


async def test_non_streaming_replies(mock_server: MockServer, scenario_file: Path) -> None:
    mock_server.load(scenario_file)
    async with httpx.AsyncClient(base_url=mock_server.url) as client:
        chat = (await client.post("/v1/chat/completions", json=_chat(model="local"))).json()
        assert chat["object"] == "chat.completion" and chat["model"] == "local"
        choice = chat["choices"][0]
        assert choice["finish_reason"] == "tool_calls"
        assert choice["message"]["content"] == "first reply"
        assert choice["message"]["tool_calls"][0]["function"] == {
            "name": "echo",
            "arguments": '{"text":"hi"}',
        }
        assert chat["usage"]["prompt_tokens"] == 5 and chat["usage"]["completion_tokens"] == 3
        body = {"model": "claude", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}
        message = (await client.post("/v1/messages", json=body)).json()
        assert message["type"] == "message" and message["stop_reason"] == "end_turn"
        assert message["content"] == [{"type": "text", "text": "second reply"}]
        # Past the end: a 400 that says so, in the caller's error shape.
        ran_out = await client.post("/v1/messages", json=body)
        assert ran_out.status_code == 400
        assert ran_out.json()["type"] == "error"
        assert "ran out: it has 2 turns and turn 3 was requested" in ran_out.text
        not_json = await client.post("/v1/chat/completions", content=b"{oops")
        assert not_json.status_code == 400 and "invalid JSON body" in not_json.text


async def test_turn_delay_and_server_delay_add_up() -> None:
    async with MockServer([{"text": "late", "delay": 0.1}], delay=0.05) as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            started = time.perf_counter()
            reply = await client.post("/v1/chat/completions", json=_chat())
            elapsed = time.perf_counter() - started
    assert reply.json()["choices"][0]["message"]["content"] == "late"
    assert elapsed >= 0.15


async def test_reset_returns_to_the_starting_scenario_and_delay(
    scenario_file: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("name: other\nturns: [{text: from other}]\n")
    async with MockServer(scenario_file, delay=0.0) as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            first = await client.post("/v1/chat/completions", json=_chat())
            assert first.json()["choices"][0]["message"]["content"] == "first reply"
            await client.post("/mock/scenario", json={"file": str(other)})
            await client.post("/mock/delay", json={"ms": 5})
            switched = await client.post("/v1/chat/completions", json=_chat())
            assert switched.json()["choices"][0]["message"]["content"] == "from other"

            reset = await client.post("/mock/reset")
            assert reset.status_code == 200
            assert reset.json() == {
                "ok": True,
                "index": 0,
                "file": str(scenario_file),
                "name": "two-turns",
            }
            assert (await client.get("/mock/delay")).json() == {"ms": 0.0}
            again = await client.post("/v1/chat/completions", json=_chat())
            assert again.json()["choices"][0]["message"]["content"] == "first reply"
            # The file is read again: an edited start scenario is what reset serves.
            await anyio.Path(scenario_file).write_text(
                "name: edited\nturns: [{text: edited reply}]\n"
            )
            assert (await client.post("/mock/reset")).json()["name"] == "edited"
            edited = await client.post("/v1/chat/completions", json=_chat())
            assert edited.json()["choices"][0]["message"]["content"] == "edited reply"
            # A start file that became unreadable: a 400 that says so.
            await anyio.Path(scenario_file).write_text("turns: [{nonsense: 1}]\n")
            broken = await client.post("/mock/reset")
            assert broken.status_code == 400 and "cannot reset" in broken.text


async def test_delay_changes_at_runtime() -> None:
    async with MockServer([{"text": "a"}, {"text": "b"}]) as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            assert (await client.get("/mock/delay")).json() == {"ms": 0.0}
            changed = await client.post("/mock/delay", json={"ms": 150})
            assert changed.status_code == 200 and changed.json() == {"ms": 150.0}
            assert server.delay == 0.15
            started = time.perf_counter()
            reply = await client.post("/v1/chat/completions", json=_chat())
            assert time.perf_counter() - started >= 0.15
            assert reply.json()["choices"][0]["message"]["content"] == "a"
            for body in ({"ms": -1}, {"ms": "10"}, {"seconds": 1}, [1], {"ms": True}):
                bad = await client.post("/mock/delay", json=body)
                assert bad.status_code == 400, body
                assert "cannot set the delay" in bad.json()["error"]["message"]
            not_json = await client.post("/mock/delay", content=b"{oops")
            assert not_json.status_code == 400
            assert (await client.get("/mock/delay")).json() == {"ms": 150.0}


def test_only_loopback_is_served() -> None:
    assert run_mock_server("0.0.0.0", 0, None) == 2


@pytest.mark.parametrize("delay", [-0.5, float("nan"), float("inf")])
def test_a_bad_delay_is_refused_at_start(delay: float) -> None:
    with pytest.raises(ConfigError, match="the delay must be a finite number >= 0"):
        MockServer(delay=delay)
    assert run_mock_server("127.0.0.1", 0, None, delay) == 2


def test_command_line_server_serves_a_scenario(scenario_file: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rein.providers.mock_server", "--port", "0",
         "--scenario", str(scenario_file)],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once it accepts connections
        assert line.startswith("rein mock server listening on http://127.0.0.1:")
        url = line.rsplit(" ", 1)[1].strip()
        reply = httpx.post(url + "/v1/chat/completions", json=_chat(stream=True))
        assert reply.headers["content-type"].startswith("text/event-stream")
        assert '"content":"first reply"' in reply.text and reply.text.endswith("data: [DONE]\n\n")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
