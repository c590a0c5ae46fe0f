from __future__ import annotations

from pathlib import Path

import pytest

from rein.harness import Agent
from rein.harness.errors import ConfigError
from rein.providers.replay import ReplayModel
from rein.providers.script import load_script
from tests.fakes.tools import EchoTool


async def test_script_from_yaml_file_plays_and_records(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: demo\n"
        "turns:\n"
        "  - thinking: hmm\n"
        "    text: calling\n"
        "    tool_calls: [{name: echo, arguments: {text: hi}, id: t1}]\n"
        "  - text: finished\n"
        "    expect: {last_message_contains: 'echo: hi', tools_include: [echo], system_contains: SYS}\n"
    )
    model = ReplayModel(path)
    agent = Agent(model, tools=[EchoTool()], system_prompt="SYS prompt")
    result = await agent.prompt("go")
    assert result.status == "completed" and result.text == "finished"
    assert model.remaining == 0
    assert [r.tools for r in model.requests] == [["echo"], ["echo"]]
    assert model.requests[0].system == "SYS prompt"
    assistant = agent.messages[1]
    assert assistant.thinking == "hmm" and assistant.tool_calls[0].id == "t1"  # type: ignore[union-attr]


async def test_failed_expectation_fails_the_run_loudly() -> None:
    model = ReplayModel([{"text": "x", "expect": {"last_message_contains": "never said"}}])
    result = await Agent(model).prompt("hello")
    assert result.status == "failed"
    assert "turn 1" in (result.error or "") and "never said" in (result.error or "")


async def test_running_out_of_script_fails_loudly() -> None:
    model = ReplayModel([{"tool_calls": [{"name": "echo", "arguments": {"text": "a"}}]}])
    result = await Agent(model, tools=[EchoTool()]).prompt("hello")
    assert result.status == "failed"
    assert "ran out" in (result.error or "") and "1 turns" in (result.error or "")


def test_invalid_script_names_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("turns:\n  - txet: typo\n")
    with pytest.raises(ConfigError, match="txet"):
        load_script(path)
    path.write_text("turns: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_script(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_script(tmp_path / "missing.yaml")


async def test_text_is_streamed_in_chunks() -> None:
    model = ReplayModel([{"text": "abcdefghij", "chunk_size": 3}])
    agent = Agent(model)
    deltas: list[str] = []
    agent.subscribe(lambda e: deltas.append(e.delta) if e.type == "message_delta" else None)
    await agent.prompt("x")
    assert deltas == ["abc", "def", "ghi", "j"]
