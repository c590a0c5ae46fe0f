"""A model request's retries, as the person meets them: each retry is
announced (a ``RetryWait`` delta, the ``model_retry`` event) as its wait
begins, with the provider, the reason as the error says it (never the key),
attempt n of max and the wait; the retries are bounded in number
(``maxRetries`` at most 10) and in time (``maxRetryWait``); an abort or a
steer during a wait ends it at once. Real provider code over real HTTP (the
mock server, tests/providers/raw_server.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import anyio
import httpx
import pytest
from pydantic import ValidationError

from rein.config import resolve_config
from rein.harness import Agent, HarnessConfig, RunResult
from rein.harness.errors import RateLimitError, TransientError
from rein.harness.ports import RetryWait, TurnDone
from rein.providers._http import HttpModel
from rein.providers._retries import RetryPolicy
from rein.providers.config import MAX_RETRIES, ModelConfig
from rein.providers.mock_server import MockServer
from rein.providers.openai import OpenAIModel
from tests.fakes.events import WaitingEventLog
from tests.providers.conftest import make_model, request
from tests.providers.raw_server import RawServer

PROVIDERS = [pytest.param("openai", id="openai"), pytest.param("anthropic", id="anthropic")]
# No known key shape: only remembering the key redacts it (an ``sk-...`` key
# would be redacted by its shape alone, and the test could not fail).
KEY = "RetryKEY-0123456789-abcdefABCDEF"


async def _consume(model: HttpModel, order: list[object]) -> None:
    """Stream one turn, logging each retry's announcement and each delta
    into ``order`` (the model's sleep logs into it too)."""
    with anyio.fail_after(10):
        async for delta in model.stream(request()):
            order.append(delta if isinstance(delta, RetryWait | TurnDone) else type(delta))


def _sleeps_into(order: list[object]):  # type: ignore[no-untyped-def]
    async def sleep(seconds: float) -> None:
        order.append(("sleep", seconds))
        await anyio.lowlevel.checkpoint()

    return sleep


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_each_retry_is_announced_as_its_wait_begins(
    mock_server: MockServer, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REIN_RETRY_KEY", KEY)
    mock_server.load(
        [
            {"fault": {"status": 503, "body": {"error": {"message": f"overloaded ({KEY})"}}}},
            {"fault": {"status": 429, "retry_after": 0.25}},
            {"text": "finally"},
        ]
    )
    order: list[object] = []
    model = make_model(
        provider, mock_server, sleep=_sleeps_into(order), api_key_env="REIN_RETRY_KEY"
    )
    await _consume(model, order)
    await model.aclose()

    first, sleep1, second, sleep2 = order[:4]
    assert isinstance(first, RetryWait) and isinstance(second, RetryWait)
    # Each announcement comes before its wait, and says what the wait is.
    assert sleep1 == ("sleep", first.wait_s) and sleep2 == ("sleep", 0.25)
    assert second.wait_s == 0.25  # the server's Retry-After
    assert (first.attempt, second.attempt) == (1, 2)
    assert first.max_attempts == second.max_attempts == 4
    assert first.provider == second.provider == model.label
    assert "HTTP 503" in first.reason and "overloaded" in first.reason
    assert "HTTP 429" in second.reason
    assert KEY not in first.reason  # the body echoed the key: never told
    assert isinstance(order[-1], TurnDone) and order[-1].message.text == "finally"


async def test_a_server_that_never_sends_headers_is_announced_each_idle_timeout() -> None:
    """Connected, the request read, no response: each attempt waits out
    ``streamIdleTimeout``, then its retry is announced as its wait begins."""

    async def silent(_path: str, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    order: list[object] = []
    async with RawServer(silent) as server:
        model = make_model(
            "openai",
            None,
            base_url=server.url + "/v1",
            stream_idle_timeout=0.2,
            retry=RetryPolicy(max_retries=2, base_delay=0.001, max_delay=0.002),
            sleep=_sleeps_into(order),
        )
        started = time.monotonic()
        with pytest.raises(TransientError, match=r"gave up after 3 attempts") as info:
            await _consume(model, order)
        elapsed = time.monotonic() - started
        await model.aclose()
    assert "no data for 0.2 s (streamIdleTimeout)" in str(info.value)
    kinds = ["retry" if isinstance(o, RetryWait) else o[0] for o in order]  # type: ignore[index]
    assert kinds == ["retry", "sleep", "retry", "sleep"]
    retries = [o for o in order if isinstance(o, RetryWait)]
    assert [r.attempt for r in retries] == [1, 2]
    assert all("streamIdleTimeout" in r.reason for r in retries)
    # Three attempts of 0.2 s each: the idle timeout is each attempt's wait.
    assert 0.6 <= elapsed < 5


async def test_a_silent_server_costs_three_attempts_with_the_default_ratio() -> None:
    """docs/providers.md's arithmetic, scaled down: with ``maxRetryWait``
    twice ``streamIdleTimeout`` (120 s and 60 s by default; the policy's
    ``max_total`` is ``maxRetryWait``), a server that
    never answers gets three attempts, not ``maxRetries`` + 1, and the
    failure names the setting."""

    async def silent(_path: str, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    async with RawServer(silent) as server:
        config = ModelConfig(
            provider="openai",
            model="m",
            base_url=server.url + "/v1",
            api_key_env="",
            # Not smaller: under a loaded suite an attempt's end came 0.1 s
            # late, and at 0.2 s the third attempt never began (CI-g).
            stream_idle_timeout=0.6,
        )
        order: list[object] = []
        # The backoff scaled down too (0.5 s, 1 s, 2 s: tiny beside 60 s).
        policy = RetryPolicy(max_total=1.2, base_delay=0.001, max_delay=0.002)
        model = OpenAIModel(config, retry=policy, sleep=_sleeps_into(order))
        with pytest.raises(TransientError, match=r"rein\.model\.maxRetryWait \(1\.2 s\)") as info:
            await _consume(model, order)
        await model.aclose()
    assert "gave up after 3 attempts" in str(info.value)
    assert [o.attempt for o in order if isinstance(o, RetryWait)] == [1, 2]
    assert len(server.paths) == 3


async def test_the_retry_time_is_bounded_and_the_failure_names_the_setting(
    mock_server: MockServer,
) -> None:
    mock_server.load([{"fault": {"status": 429, "retry_after": 0.3}}] * 3 + [{"text": "late"}])
    order: list[object] = []
    config = ModelConfig(
        provider="openai", model="m", base_url=mock_server.url + "/v1", max_retry_wait=0.5
    )
    model = OpenAIModel(config, sleep=_sleeps_into(order))
    assert model.retry.max_total == 0.5 and model.retry.max_retries == 4
    with pytest.raises(RateLimitError, match=r"rein\.model\.maxRetryWait \(0\.5 s\)") as info:
        await _consume(model, order)
    await model.aclose()
    assert "gave up after 2 attempts" in str(info.value)
    assert [o for o in order if isinstance(o, tuple)] == [("sleep", 0.3)]
    assert len(mock_server.requests) == 2


async def test_a_retried_attempt_ends_when_the_retry_time_does() -> None:
    """maxRetryWait bounds the retried attempts too, not only the waits: a
    retried attempt has what is left of it to begin its reply."""

    async def slow_failure(_request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(1.0)  # each attempt takes 1 s, then fails
        return httpx.Response(503, json={"error": {"message": "overloaded"}})

    policy = RetryPolicy(max_retries=4, base_delay=0.05, max_delay=0.05, max_total=0.3)
    model = make_model("openai", None, retry=policy, transport=httpx.MockTransport(slow_failure))
    failed_at: list[float] = []
    with pytest.raises(TransientError, match=r"maxRetryWait \(0\.3 s\)") as info:
        async for delta in model.stream(request()):
            failed_at.append(time.monotonic())  # the first attempt failed: retries begin
            assert isinstance(delta, RetryWait)
    spent = time.monotonic() - failed_at[0]
    await model.aclose()
    assert "had not begun its reply when the time for retries ran out" in str(info.value)
    assert len(failed_at) == 1
    assert spent < 0.8  # the budget (0.3 s) and slack, not a whole second's attempt


def test_max_retries_is_bounded() -> None:
    assert ModelConfig(max_retries=MAX_RETRIES).max_retries == 10
    with pytest.raises(ValidationError, match="less than or equal to 10"):
        ModelConfig(max_retries=10_000)
    with pytest.raises(ValidationError):
        ModelConfig(max_retry_wait=float("inf"))
    # In the settings: reported once, the default kept (never a turn without end).
    resolved = resolve_config({"model": {"maxRetries": 10_000, "maxRetryWait": 30}})
    assert resolved.config.model.max_retries == 4
    assert resolved.config.model.max_retry_wait == 30
    [issue] = resolved.issues
    assert issue.key == "model.maxRetries" and "less than or equal to 10" in issue.problem


def _agent(model: HttpModel) -> tuple[Agent, WaitingEventLog]:
    agent = Agent(model, config=HarnessConfig(run_idle_timeout_ms=0))
    log = WaitingEventLog()
    agent.subscribe(log)
    return agent, log


async def _during_the_wait(
    agent: Agent, log: WaitingEventLog, act: Callable[[], object], within_s: float = 5.0
) -> RunResult:
    """Prompt ``agent``; at its first ``model_retry``, ``act`` (an abort, a
    steer); the run's result, within ``within_s`` (never the wait's own length)."""
    results: list[RunResult] = []
    with anyio.fail_after(within_s):
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                results.append(await agent.prompt("hi"))

            tg.start_soon(run)
            await log.wait_for(lambda events: any(e.type == "model_retry" for e in events))
            act()
    return results[0]


async def test_an_abort_during_a_retry_wait_ends_it_at_once(mock_server: MockServer) -> None:
    mock_server.load([{"fault": {"status": 429, "retry_after": 30}}, {"text": "never"}])
    agent, log = _agent(make_model("openai", mock_server, retry=RetryPolicy()))
    # Within 5 s: not the 30 s the server asked for.
    result = await _during_the_wait(agent, log, lambda: agent.abort("stop"))
    assert result.status == "aborted"
    [retry] = log.of("model_retry")
    assert (retry.attempt, retry.max_attempts, retry.wait_s) == (1, 4, 30.0)
    assert len(mock_server.requests) == 1


async def test_a_steer_during_a_backoff_wait_ends_it_and_is_sent_at_once(
    mock_server: MockServer,
) -> None:
    # A wait of Rein's choosing (no Retry-After: a backoff of 15 to 30 s).
    # A wait the server asked for is kept (the next test).
    mock_server.load(
        [
            {"fault": {"status": 503}},
            {"text": "steered", "expect": {"last_message_contains": "use the other file"}},
        ]
    )
    backoff = RetryPolicy(base_delay=30.0, max_delay=30.0)
    agent, log = _agent(make_model("openai", mock_server, retry=backoff))
    # Within 5 s: not the 15 to 30 s of the backoff.
    result = await _during_the_wait(agent, log, lambda: agent.steer("use the other file"))
    assert result.status == "completed", result.error
    assert result.text == "steered"
    types = log.types()
    # The wait ended, the turn closed with nothing said, the steer went in.
    at = types.index("model_retry")
    assert types[at + 1] == "turn_end"
    assert types.index("steering_applied", at) < types.index("turn_start", at)
    assert [r.outcome for r in mock_server.requests] == ["fault:status", "completed"]


async def test_a_steer_during_the_servers_retry_after_is_sent_when_it_ends(
    mock_server: MockServer,
) -> None:
    mock_server.load(
        [
            {"fault": {"status": 503, "retry_after": 30}},
            {"text": "steered", "expect": {"last_message_contains": "use the other file"}},
        ]
    )
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 1:
            await anyio.sleep_forever()  # the server's wait, until the steer ends it

    agent, log = _agent(make_model("openai", mock_server, retry=RetryPolicy(), sleep=sleep))
    result = await _during_the_wait(agent, log, lambda: agent.steer("use the other file"))
    assert result.status == "completed", result.error
    # The steer ended the turn's wait and went in; the steered request
    # waited out the rest of the server's 30 s before it was sent, announced.
    first, rest = log.of("model_retry")
    assert waits[0] == first.wait_s == 30.0
    assert 25.0 < waits[1] <= 30.0 and rest.wait_s == round(waits[1], 3)
    assert rest.attempt == 1 and "HTTP 503" in rest.reason
    types = log.types()
    assert types.index("steering_applied") < types.index(
        "model_retry", types.index("model_retry") + 1
    )
    assert [r.outcome for r in mock_server.requests] == ["fault:status", "completed"]


async def test_credentials_in_the_base_url_are_not_in_the_retry_event(
    mock_server: MockServer,
) -> None:
    mock_server.load([{"fault": {"status": 503, "retry_after": 0.01}}, {"text": "ok"}])
    secret = "urlPASSWORD0123456789abcdef"
    base = mock_server.url.replace("http://", f"http://proxyuser:{secret}@") + "/v1"
    agent, log = _agent(make_model("openai", mock_server, retry=RetryPolicy(), base_url=base))
    result = await agent.prompt("hi")
    assert result.status == "completed", result.error
    [retry] = log.of("model_retry")
    assert secret not in retry.provider and secret not in retry.reason
    assert retry.provider.startswith("openai (http://proxyuser:[redacted]@127.0.0.1:")


async def test_secrets_in_the_url_and_headers_are_in_no_retry_event_or_error() -> None:
    """Each in every form it may be echoed in: a password percent-encoded
    in the URL and decoded, a query-string key, extra headers' keys. None
    has a known key shape: only remembering them redacts them."""
    password, decoded = "Pw%2FnoShape-0123456789", "Pw/noShape-0123456789"
    query_key, header_key = "QueryNoShape0123456789", "HeaderNoShape-0123456789ab"
    custom_key = "CustomNoShape-0123456789ab"
    echoed = f"refused {password} {decoded} {query_key} {header_key} {custom_key}"

    def refuse(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, json={"error": {"message": echoed}})

    model = make_model(
        "openai",
        None,
        retry=RetryPolicy(max_retries=1, base_delay=0.01),
        transport=httpx.MockTransport(refuse),
        base_url=f"https://proxyuser:{password}@proxy.example/v1?api-key={query_key}",
        extra_headers={"api-key": header_key, "Ocp-Apim-Subscription-Key": custom_key},
    )
    agent, log = _agent(model)
    result = await agent.prompt("hi")
    await model.aclose()
    assert result.status == "failed" and "HTTP 502" in (result.error or "")
    [retry] = log.of("model_retry")
    assert (
        retry.provider
        == "openai (https://proxyuser:[redacted]@proxy.example/v1?api-key=[redacted])"
    )
    for text in (retry.provider, retry.reason, result.error or ""):
        for secret in (password, decoded, query_key, header_key, custom_key):
            assert secret not in text
