"""The whole agent with a real provider: Agent -> OpenAI-compatible HTTP ->
the mock server, a tool-call turn and a final turn."""

from __future__ import annotations

import pytest

from rein.harness import Agent, HarnessConfig
from rein.harness.messages import AssistantMessage, ToolResultMessage
from rein.providers.mock_server import MockServer
from tests.fakes.events import EventLog
from tests.fakes.tools import EchoTool
from tests.providers.conftest import make_model

PROVIDERS = [pytest.param("openai", id="openai"), pytest.param("anthropic", id="anthropic")]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_agent_runs_a_tool_turn_and_a_final_turn(
    mock_server: MockServer, provider: str
) -> None:
    mock_server.load(
        [
            {
                "text": "Let me echo.",
                "chunk_size": 4,
                "tool_calls": [{"name": "echo", "arguments": {"text": "over http"}, "id": "c1"}],
                "expect": {"tools_include": ["echo"], "system_contains": "helpful"},
            },
            {
                "text": "The tool said: echo: over http",
                "expect": {"last_role": "tool", "last_message_contains": "echo: over http"},
            },
        ]
    )
    model = make_model(provider, mock_server)
    agent = Agent(
        model,
        tools=[EchoTool()],
        system_prompt="You are helpful.",
        config=HarnessConfig(run_idle_timeout_ms=10_000),
    )
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("please echo")
    await model.aclose()

    assert result.status == "completed", result.error
    assert result.text == "The tool said: echo: over http"
    assert result.turns == 2
    roles = [m.role for m in agent.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    first = agent.messages[1]
    assert isinstance(first, AssistantMessage) and first.tool_calls[0].arguments == {
        "text": "over http"
    }
    tool_result = agent.messages[2]
    assert isinstance(tool_result, ToolResultMessage) and tool_result.content == "echo: over http"
    # Text deltas reached the agent's listeners as they streamed.
    streamed = [e.delta for e in log.of("message_delta") if e.kind == "text"]
    assert streamed[:3] == ["Let ", "me e", "cho."]
    assert [r.outcome for r in mock_server.requests] == ["completed", "completed"]


async def test_a_provider_failure_fails_the_run_with_its_message(mock_server: MockServer) -> None:
    mock_server.load([{"fault": {"status": 401}}])
    agent = Agent(make_model("openai", mock_server), config=HarnessConfig(run_idle_timeout_ms=0))
    result = await agent.prompt("hi")
    assert result.status == "failed"
    assert "HTTP 401" in (result.error or "") and "OPENAI_API_KEY" in (result.error or "")
