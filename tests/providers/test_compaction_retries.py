"""Compaction's summary request is retried as a turn's is, and the person
sees it: each retry's wait is announced (``model_retry``, ``purpose``
"compaction") as it begins and kept with the run's retries, and an abort
during the wait ends it at once. Real provider code over real HTTP (the mock
server); the window is small so the first request must be summarised."""

from __future__ import annotations

import anyio

from rein.harness import Agent, HarnessConfig, RunResult
from rein.harness.messages import AssistantMessage, Message, TextPart, UserMessage
from rein.providers._retries import RetryPolicy
from rein.providers.mock_server import MockServer
from tests.fakes.events import WaitingEventLog
from tests.providers.conftest import make_model


def _history() -> list[Message]:
    """Four long exchanges (~610 tokens each): over a 2,000-token window, and
    user prompts cannot be elided, so the run must summarise first."""
    messages: list[Message] = []
    for i in range(4):
        messages.append(UserMessage(content=f"question {i} " + "z" * 2400))
        messages.append(AssistantMessage(content=(TextPart(text=f"answer {i}"),)))
    return messages


def _agent(mock_server: MockServer, retry: RetryPolicy) -> tuple[Agent, WaitingEventLog]:
    model = make_model("openai", mock_server, retry=retry)
    config = HarnessConfig(max_context_tokens=2000, run_idle_timeout_ms=0)
    agent = Agent(model, config=config, messages=_history())
    log = WaitingEventLog()
    agent.subscribe(log)
    return agent, log


async def test_a_retried_summary_request_is_announced_as_compactions(
    mock_server: MockServer,
) -> None:
    mock_server.load(
        [
            {"fault": {"status": 503, "retry_after": 0.01}},
            {"text": "SUMMARY: four long questions"},
            {"text": "done", "expect": {"messages_contain": ["SUMMARY: four long questions"]}},
        ]
    )
    agent, log = _agent(mock_server, RetryPolicy())
    with anyio.fail_after(10):
        result = await agent.prompt("go on")
    assert result.status == "completed", result.error
    [retry] = log.of("model_retry")
    assert retry.purpose == "compaction"
    assert (retry.attempt, retry.max_attempts, retry.wait_s) == (1, 4, 0.01)
    assert "HTTP 503" in retry.reason
    assert result.model_retries == [retry]
    types = log.types()
    # Announced after the turn began, before the summary's compaction event
    # and the turn's reply.
    at = types.index("model_retry")
    assert types.index("turn_start") < at < types.index("compaction") < len(types) - 1
    assert "message_start" not in types[types.index("turn_start") : at]
    assert [r.outcome for r in mock_server.requests] == ["fault:status", "completed", "completed"]


async def test_an_abort_during_the_summarys_retry_wait_ends_it_at_once(
    mock_server: MockServer,
) -> None:
    mock_server.load([{"fault": {"status": 429, "retry_after": 30}}, {"text": "never"}])
    agent, log = _agent(mock_server, RetryPolicy())
    results: list[RunResult] = []
    # Within 5 s: not the 30 s the server asked for.
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                results.append(await agent.prompt("go on"))

            tg.start_soon(run)
            await log.wait_for(lambda events: any(e.type == "model_retry" for e in events))
            agent.abort("stop")
    [result] = results
    assert result.status == "aborted"
    [retry] = log.of("model_retry")
    assert (retry.purpose, retry.wait_s) == ("compaction", 30.0)
    assert len(mock_server.requests) == 1
    assert not log.of("compaction")
