"""Provider faults over HTTP against the mock server."""

from __future__ import annotations

from typing import Any

from rein.evals._registry import Outcome, Rig, scenario
from rein.evals.scenarios._common import (
    Events,
)
from rein.harness import Agent

# --------------------------------------------------------------- providers


async def _over_http(turns: list[dict[str, Any]], prompt: str = "hi") -> tuple[Any, Any, Events]:
    from rein.providers._http import RetryPolicy
    from rein.providers.config import ModelConfig
    from rein.providers.mock_server import MockServer
    from rein.providers.openai import OpenAIModel

    events = Events()
    async with MockServer(turns) as server:
        config = ModelConfig(
            provider="openai", model="mock", base_url=server.url + "/v1", api_key_env=""
        )
        model = OpenAIModel(
            config, retry=RetryPolicy(max_retries=3, base_delay=0.001, max_delay=0.005)
        )
        a = Agent(model)
        a.subscribe(events)
        result = await a.prompt(prompt)
        return result, server, events


@scenario("provider", budget=2)
async def eval_provider_retry_then_success(rig: Rig) -> Outcome:
    result, server, events = await _over_http(
        [{"fault": {"kind": "status", "status": 429, "body": "slow down"}}, {"text": "hello"}]
    )
    return Outcome(result.status, len(server.requests), list(events), check=result.text == "hello")


@scenario("provider", budget=1)
async def eval_provider_cut_after_content(rig: Rig) -> Outcome:
    result, server, events = await _over_http(
        [
            {
                "text": "partial answer here",
                "chunk_size": 4,
                "fault": {"kind": "cut", "after_chunks": 2},
            }
        ]
    )
    return Outcome(
        result.status,
        len(server.requests),
        list(events),
        expect_status="failed",
        check="model error" in (result.error or ""),
    )
