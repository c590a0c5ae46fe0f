"""The mock server on a free 127.0.0.1 port, in-process, one per test, and
helpers to run a provider turn against it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest

from rein.harness.messages import AssistantMessage, Message, UserMessage
from rein.harness.ports import (
    ModelDelta,
    ModelOptions,
    ModelRequest,
    TextDelta,
    ToolSchema,
    TurnDone,
)
from rein.providers._http import HttpModel
from rein.providers._retries import RetryPolicy
from rein.providers.anthropic import AnthropicModel
from rein.providers.config import ModelConfig
from rein.providers.mock_server import MockServer
from rein.providers.openai import OpenAIModel

#: Retries in tests wait microseconds, not seconds.
FAST_RETRY = RetryPolicy(max_retries=4, base_delay=0.001, max_delay=0.005)

ECHO = ToolSchema(
    name="echo",
    description="Echo the text back.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}},
)


@pytest.fixture
async def mock_server() -> AsyncIterator[MockServer]:
    async with MockServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def make_model(
    provider: str,
    server: MockServer | None,
    *,
    retry: RetryPolicy = FAST_RETRY,
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    transport: httpx.AsyncBaseTransport | None = None,
    **config: Any,
) -> HttpModel:
    """A provider pointed at the mock server (OpenAI's base URL ends in /v1),
    or at ``transport`` when there is no server."""
    url = server.url if server is not None else "http://127.0.0.1:9"
    config.setdefault("base_url", url + "/v1" if provider == "openai" else url)
    cfg = ModelConfig.model_validate({"provider": provider, "model": f"{provider}-test", **config})
    cls = OpenAIModel if provider == "openai" else AnthropicModel
    return cls(cfg, retry=retry, sleep=sleep, transport=transport)


def request(
    messages: Sequence[Message] | str = "hello",
    *,
    system: str = "You are a test.",
    tools: Sequence[ToolSchema] = (),
    **options: Any,
) -> ModelRequest:
    if isinstance(messages, str):
        messages = [UserMessage(content=messages)]
    return ModelRequest(system, list(messages), list(tools), ModelOptions(**options))


@dataclass
class Turn:
    deltas: list[ModelDelta] = field(default_factory=list)
    message: AssistantMessage | None = None

    @property
    def text_deltas(self) -> list[str]:
        return [d.text for d in self.deltas if isinstance(d, TextDelta)]

    @property
    def done(self) -> AssistantMessage:
        assert self.message is not None, "the stream ended without TurnDone"
        return self.message


async def run_turn(model: HttpModel, req: ModelRequest, turn: Turn | None = None) -> Turn:
    """Consume one stream; ``turn`` (when given) keeps what arrived before
    an error. Checks that TurnDone comes exactly once, last."""
    turn = turn if turn is not None else Turn()
    with anyio.fail_after(10):
        async for delta in model.stream(req):
            assert turn.message is None, "a delta after TurnDone"
            if isinstance(delta, TurnDone):
                turn.message = delta.message
            else:
                turn.deltas.append(delta)
    return turn
