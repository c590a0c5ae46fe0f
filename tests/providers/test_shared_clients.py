"""The language server's models share one HTTP client per set of timeouts
(one connection pool however many sessions), and the server closes it."""

from __future__ import annotations

from rein.harness import UserMessage
from rein.harness.ports import ModelRequest, TurnDone
from rein.lsp.server import ReinServer
from rein.providers import ModelConfig, create_model, shared_http_clients
from rein.providers._http import HttpModel
from rein.providers.mock_server import MockServer


def _config(url: str, **fields: object) -> ModelConfig:
    return ModelConfig.model_validate(
        {"provider": "openai", "baseUrl": url + "/v1", "model": "m", "apiKeyEnv": "", **fields}
    )


async def _answer(model: HttpModel) -> str:
    request = ModelRequest("system", [UserMessage(content="hi")], [])
    async for delta in model.stream(request):
        if isinstance(delta, TurnDone):
            return delta.message.text
    raise AssertionError("no TurnDone")


async def test_models_made_with_shared_clients_use_one_client_and_leave_it_open() -> None:
    async with MockServer() as mock:
        mock.load([{"text": "one"}, {"text": "two"}, {"text": "three"}])
        clients = shared_http_clients()
        first = create_model(_config(mock.url), clients=clients)
        second = create_model(_config(mock.url), clients=clients)
        assert isinstance(first, HttpModel) and isinstance(second, HttpModel)
        assert await _answer(first) == "one" and await _answer(second) == "two"
        assert first._get_client() is second._get_client()
        assert clients.open == 1
        # Another timeout is another pool; a model never closes a shared client.
        other = create_model(_config(mock.url, requestTimeout=5), clients=clients)
        assert isinstance(other, HttpModel)
        assert await _answer(other) == "three"
        assert clients.open == 2
        await first.aclose()
        assert not second._get_client().is_closed
        await clients.aclose()
        assert clients.open == 0


async def test_without_shared_clients_each_model_has_its_own() -> None:
    a = create_model(_config("http://127.0.0.1:9"))
    b = create_model(_config("http://127.0.0.1:9"))
    assert isinstance(a, HttpModel) and isinstance(b, HttpModel)
    assert a._get_client() is not b._get_client()
    await a.aclose()
    await b.aclose()


async def test_the_language_servers_sessions_share_its_clients() -> None:
    server = ReinServer()
    a = server.create_model(_config("http://127.0.0.1:9"))
    b = server.create_model(_config("http://127.0.0.1:9"))
    assert isinstance(a, HttpModel) and isinstance(b, HttpModel)
    assert a._get_client() is b._get_client()
    assert server.state()["httpClients"] == 1
    await server.shutdown_sessions()
    assert server.state()["httpClients"] == 0
