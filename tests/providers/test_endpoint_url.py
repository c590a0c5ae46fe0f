"""The endpoint's URL keeps a base URL's query last (an Azure-style
``.../openai/v1?api-version=...``): before, the endpoint's path was
appended after the query, and such a base URL never reached the endpoint."""

from __future__ import annotations

import anyio
import httpx
import pytest

from rein.harness.errors import ModelError
from tests.providers.conftest import make_model, request


@pytest.mark.parametrize(
    ("provider", "base", "sent"),
    [
        (
            "openai",
            "https://h.example/openai/v1?api-version=2024-10-21",
            "https://h.example/openai/v1/chat/completions?api-version=2024-10-21",
        ),
        ("openai", "https://h.example/v1/", "https://h.example/v1/chat/completions"),
        ("anthropic", "https://h.example?beta=1", "https://h.example/v1/messages?beta=1"),
    ],
)
def test_the_endpoint_goes_before_the_base_urls_query(provider: str, base: str, sent: str) -> None:
    seen: list[str] = []

    def refuse(http_request: httpx.Request) -> httpx.Response:
        seen.append(str(http_request.url))
        return httpx.Response(400, json={"error": {"message": "no"}})

    model = make_model(
        provider, None, transport=httpx.MockTransport(refuse), base_url=base, api_key_env=""
    )
    assert model.url() == sent

    async def main() -> None:
        with pytest.raises(ModelError):
            async for _ in model.stream(request()):
                pass

    anyio.run(main)
    assert seen == [sent]
