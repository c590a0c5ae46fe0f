"""Each provider against a real local HTTP server that misbehaves in ways
the scenario mock server does not: keep-alives without end, an endless
line, an endless stream, a redirect, a reset connection. Every one ends
the turn with an error that says what happened, within a bound."""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
import json
import os
import ssl
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from rein.harness.errors import (
    AuthError,
    RateLimitError,
    RequestError,
    StreamError,
    TransientError,
)
from rein.harness.ports import TextDelta, ThinkingDelta, ToolCallDelta
from rein.providers import _limits
from rein.providers._retries import RetryPolicy
from tests.fakes.providers import SleepLog
from tests.forkserver import REIN
from tests.providers.conftest import FAST_RETRY, make_model, request, run_turn
from tests.providers.raw_server import SSE_HEAD, RawServer, reset, sse

NO_RETRY = RetryPolicy(max_retries=0)
ROOT = Path(__file__).resolve().parents[2]

_ANTHROPIC_START = sse(
    {
        "type": "message_start",
        "message": {"id": "m", "role": "assistant", "content": [], "model": "x", "usage": {}},
    },
    "message_start",
) + sse(
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    "content_block_start",
)
_OPENAI_START = sse({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant"}}]})


def _start(provider: str) -> bytes:
    return _ANTHROPIC_START if provider == "anthropic" else _OPENAI_START


def _text(provider: str, text: str) -> bytes:
    if provider == "anthropic":
        return sse(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
            "content_block_delta",
        )
    return sse({"id": "c", "choices": [{"index": 0, "delta": {"content": text}}]})


def _keepalive(provider: str) -> bytes:
    """Anthropic's ping event; the SSE comment OpenAI-compatible servers send."""
    return sse({"type": "ping"}, "ping") if provider == "anthropic" else b": keep-alive\n\n"


def _model(provider: str, server: RawServer, **config: object):  # type: ignore[no-untyped-def]
    base = server.url + "/v1" if provider == "openai" else server.url
    return make_model(provider, None, retry=NO_RETRY, base_url=base, **config)


PROVIDERS = [pytest.param("anthropic", id="anthropic"), pytest.param("openai", id="openai")]


def _empty(provider: str) -> bytes:
    """An event that carries nothing: an empty delta, an empty text_delta."""
    if provider == "anthropic":
        return _text(provider, "")
    return sse({"id": "c", "choices": [{"index": 0, "delta": {}}]})


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("beat", [_keepalive, _empty])
async def test_keepalives_without_a_reply_end_at_the_progress_timeout(
    provider: str, beat: Callable[[str], bytes]
) -> None:
    """Keep-alives reset the idle timeout but carry no reply: a server that
    sends only those fails the turn after streamProgressTimeout, naming it.
    Defect (_empty): any event with data counted as progress, so empty
    deltas every 0.3 s kept a turn open without end."""

    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + _start(provider))
        while True:
            writer.write(beat(provider))
            await writer.drain()
            await asyncio.sleep(0.02)

    async with RawServer(handler) as server:
        model = _model(provider, server, stream_idle_timeout=5, stream_progress_timeout=0.3)
        with anyio.fail_after(4), pytest.raises(TransientError) as caught:
            await run_turn(model, request())
        await model.aclose()
    assert "only keep-alives (streamProgressTimeout)" in str(caught.value)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_reply_that_keeps_coming_is_not_cut_by_the_progress_timeout(
    provider: str,
) -> None:
    """Parts of the reply (not keep-alives) restart the progress clock: 8
    parts 0.3 s apart outlast a 1.5 s timeout (a clock that did not
    restart would cut the reply), each well within it (0.4 s with parts
    0.15 s apart was cut once under a full CI's load)."""

    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + _start(provider))
        for piece in "abcdefgh":
            writer.write(_keepalive(provider) + _text(provider, piece))
            await writer.drain()
            await asyncio.sleep(0.3)
        if provider == "anthropic":
            writer.write(sse({"type": "message_stop"}, "message_stop"))
        else:
            writer.write(sse("[DONE]"))

    async with RawServer(handler) as server:
        model = _model(provider, server, stream_progress_timeout=1.5)
        turn = await run_turn(model, request())
        await model.aclose()
    assert turn.done.text == "abcdefgh"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_endless_line_is_cut_at_its_bound(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One line without end (a broken proxy, a server bug) is refused once
    it passes MAX_LINE_BYTES, before it fills the memory."""
    monkeypatch.setattr(_limits, "MAX_LINE_BYTES", 64 * 1024)

    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + _start(provider) + b"data: ")
        while True:
            writer.write(b"x" * 8192)
            await writer.drain()

    async with RawServer(handler) as server:
        model = _model(provider, server)
        with anyio.fail_after(4), pytest.raises(StreamError) as caught:
            await run_turn(model, request())
        await model.aclose()
    assert "sent a line of more than 0.0625 MB" in str(caught.value)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_endless_stream_is_cut_at_its_bound(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_limits, "MAX_RESPONSE_BYTES", 256 * 1024)

    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + _start(provider))
        while True:
            writer.write(_text(provider, "y" * 1000))
            await writer.drain()

    async with RawServer(handler) as server:
        model = _model(provider, server)
        with anyio.fail_after(4), pytest.raises(StreamError) as caught:
            await run_turn(model, request())
        await model.aclose()
    assert "sent more than 0.25 MB in one response" in str(caught.value)


def _gzipped(code: int, content_type: str, body: bytes) -> bytes:
    packed = gzip.compress(body)
    return (
        f"HTTP/1.1 {code} X\r\ncontent-type: {content_type}\r\ncontent-encoding: gzip\r\n"
        f"content-length: {len(packed)}\r\nconnection: close\r\n\r\n"
    ).encode() + packed


async def test_an_encoded_body_is_refused_not_decoded_past_the_bounds() -> None:
    # Defect: the bounds counted the still-encoded bytes and the line bound
    # was off for an encoded body: 407 KB of gzip holding 400 MB without a
    # newline took 1.3 GB. Rein now asks for identity and decodes nothing.
    bomb = _gzipped(200, "text/event-stream", b"data: " + b"a" * (4 << 20))
    assert len(bomb) < 8192

    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        writer.write(bomb if len(server.paths) == 1 else _gzipped(429, "application/json", b"{}"))

    async with RawServer(handler) as server:
        model = _model("openai", server)
        with anyio.fail_after(4), pytest.raises(StreamError) as caught:
            await run_turn(model, request())
        with anyio.fail_after(4), pytest.raises(RateLimitError) as limited:
            await run_turn(model, request())
        await model.aclose()
    assert "answered with a gzip-encoded body though Rein asked for none" in str(caught.value)
    assert "(a gzip-encoded body, not read: Rein asks for identity)" in str(limited.value)
    assert all("\r\naccept-encoding: identity\r\n" in head.lower() for head in server.heads)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_redirect_is_not_followed_and_says_where_it_points(provider: str) -> None:
    """Following it would send the key to another address."""

    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        if path.startswith("/moved"):
            writer.write(SSE_HEAD)
            return
        writer.write(
            b"HTTP/1.1 308 Permanent Redirect\r\nlocation: /moved"
            + path.encode()
            + b"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )

    async with RawServer(handler) as server:
        model = _model(provider, server)
        with anyio.fail_after(4), pytest.raises(RequestError) as caught:
            await run_turn(model, request())
        await model.aclose()
    message = str(caught.value)
    assert "(HTTP 308) to /moved/" in message
    assert "set rein.model.baseUrl" in message
    assert [p.startswith("/moved") for p in server.paths] == [False]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_reset_connection_is_named(provider: str) -> None:
    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + _start(provider) + _text(provider, "partial"))
        await writer.drain()
        await asyncio.sleep(0.05)
        reset(writer)

    async with RawServer(handler) as server:
        model = _model(provider, server)
        with anyio.fail_after(4), pytest.raises(TransientError) as caught:
            await run_turn(model, request())
        await model.aclose()
    assert "Connection reset by peer" in str(caught.value)
    assert "part of the reply had already been streamed" in str(caught.value)


def _self_signed(folder: Path) -> ssl.SSLContext:
    """A server context with a fresh self-signed certificate for 127.0.0.1."""
    crypto = pytest.importorskip("cryptography")  # comes with the mcp extra
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    assert crypto is not None
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return context


async def test_a_certificate_that_cannot_be_verified_is_not_retried(tmp_path: Path) -> None:
    # Defect: a TLS verification failure was a TransientError, retried four
    # times with backoff; a certificate does not change between attempts.
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=_self_signed(tmp_path))
    port = server.sockets[0].getsockname()[1]
    sleeps = SleepLog()
    model = make_model("anthropic", None, base_url=f"https://127.0.0.1:{port}", sleep=sleeps)
    try:
        with anyio.fail_after(5), pytest.raises(RequestError) as caught:
            await run_turn(model, request())
    finally:
        await model.aclose()
        server.close()
        await server.wait_closed()
    message = str(caught.value)
    assert f"cannot verify the TLS certificate of https://127.0.0.1:{port}/v1/messages" in message
    assert "CERTIFICATE_VERIFY_FAILED" in message and "SSL_CERT_FILE" in message
    assert sleeps.waits == []


async def test_an_openai_reply_without_its_usage_chunk_gets_an_estimate_not_zero() -> None:
    # Defect: a stream cut after its finish_reason (before the usage chunk
    # and [DONE]), or a server that ignores stream_options, completed the
    # turn with 0 tokens in and out: the run's usage and spend said nothing
    # was used.
    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + _start("openai") + _text("openai", "the whole answer"))
        writer.write(
            sse({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        )

    async with RawServer(handler) as server:
        model = _model("openai", server)
        turn = await run_turn(model, request("a question of some length"))
        await model.aclose()
    usage = turn.done.usage
    assert turn.done.text == "the whole answer"
    assert usage.estimated
    assert usage.input_tokens > 5 and usage.output_tokens >= 3


@pytest.mark.parametrize(
    ("usage", "reported_input"),
    [
        pytest.param({}, None, id="empty"),
        pytest.param({"prompt_tokens": None, "completion_tokens": None}, None, id="nulls"),
        pytest.param({"prompt_tokens": 420, "completion_tokens": None}, 420, id="input-only"),
    ],
)
async def test_an_openai_usage_without_numbers_is_estimated_not_zero(
    usage: dict[str, object], reported_input: int | None
) -> None:
    # Defect: any usage object counted as reported, so {} or null counts
    # gave 0 tokens in and out, not marked as an estimate. A real usage
    # before a later empty one is kept (the second chunk).
    real = {"prompt_tokens": 7, "completion_tokens": 3}

    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + _start("openai") + _text("openai", "the whole answer"))
        writer.write(
            sse({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        )
        if len(server.paths) == 2:
            writer.write(sse({"id": "c", "choices": [], "usage": real}))
        writer.write(sse({"id": "c", "choices": [], "usage": usage}) + sse("[DONE]"))

    async with RawServer(handler) as server:
        model = _model("openai", server)
        guessed = (await run_turn(model, request("a question of some length"))).done.usage
        kept = (await run_turn(model, request("a question of some length"))).done.usage
        await model.aclose()
    assert guessed.estimated and guessed.output_tokens >= 3
    if reported_input is None:
        assert guessed.input_tokens > 5
        assert (kept.input_tokens, kept.output_tokens, kept.estimated) == (7, 3, False)
    else:  # the count given is kept, the other estimated; the later usage wins
        assert guessed.input_tokens == kept.input_tokens == reported_input
        assert kept.estimated and kept.output_tokens >= 3


def _where(tmp_path: Path, server: RawServer) -> list[str]:
    return [
        "-w", str(tmp_path / "ws"), "--storage", str(tmp_path / "store"),
        "--config", str(tmp_path / "rein.yaml"),
        "--provider", "anthropic", "--model", "m", "--base-url", server.url,
    ]  # fmt: skip


async def test_rein_run_ends_a_keepalive_only_stream_and_never_shows_the_key(
    tmp_path: Path,
) -> None:
    """A real ``rein run``: before streamProgressTimeout it hung until killed
    on a server that sent only pings. The key is in no output and no store."""
    key = "sk-ant-e17-0123456789abcdefghij"

    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + _start("anthropic"))
        while True:
            writer.write(_keepalive("anthropic"))
            await writer.drain()
            await asyncio.sleep(0.05)

    (tmp_path / "ws").mkdir()
    (tmp_path / "rein.yaml").write_text(
        "rein: {model: {streamProgressTimeout: 0.5, maxRetries: 1, apiKeyEnv: E17_RUN_KEY},"
        " gates: {analyzer: {enabled: false}}}\n"
    )
    env = {
        **os.environ,
        "E17_RUN_KEY": key,
        "PYTHONPATH": f"{ROOT / 'server'}{os.pathsep}{ROOT}",
    }
    async with RawServer(handler) as server:
        with anyio.fail_after(60):
            done = await anyio.run_process(
                [*REIN, "run", "hi", "--json", *_where(tmp_path, server)],
                env=env,
                check=False,
            )
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 1, err
    end = next(json.loads(x) for x in out.splitlines() if '"type":"run_end"' in x)
    assert end["status"] == "failed"
    assert "only keep-alives (streamProgressTimeout)" in end["reason"]
    assert "gave up after 2 attempts" in end["reason"]
    assert len(server.paths) == 2
    stored = b"".join(p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file())
    assert key not in out + err and key.encode() not in stored


def _status(code: int, headers: str, error_type: str = "api_error") -> bytes:
    body = json.dumps({"type": "error", "error": {"type": error_type, "message": "no"}}).encode()
    return (
        f"HTTP/1.1 {code} X\r\ncontent-type: application/json\r\n{headers}"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


def _then_a_reply(first: bytes) -> Callable[[str, asyncio.StreamWriter], Awaitable[None]]:
    """A handler that answers ``first``, then a whole Anthropic reply."""
    answered: list[str] = []

    async def handler(path: str, writer: asyncio.StreamWriter) -> None:
        answered.append(path)
        if len(answered) == 1:
            writer.write(first)
            return
        writer.write(SSE_HEAD + _start("anthropic") + _text("anthropic", "ok"))
        writer.write(sse({"type": "message_stop"}, "message_stop"))

    return handler


@pytest.mark.parametrize(
    ("first", "requests", "waits"),
    [
        # Defect: the headers the vendors' SDKs obey were ignored.
        pytest.param(
            _status(529, "x-should-retry: false\r\n", "overloaded_error"),
            1,
            [],
            id="should-retry-false",
        ),
        pytest.param(_status(409, "x-should-retry: true\r\n"), 2, None, id="should-retry-true"),
        # Defect: true made a refusal that no wait lifts retryable again
        # (while its message said it was not retried).
        pytest.param(
            _status(429, "x-should-retry: true\r\n", "insufficient_quota"),
            1,
            [],
            id="should-retry-true-quota",
        ),
        pytest.param(
            _status(400, "x-should-retry: true\r\n", "context_length_exceeded"),
            1,
            [],
            id="should-retry-true-context-length",
        ),
        pytest.param(_status(401, "x-should-retry: true\r\n"), 1, [], id="should-retry-true-401"),
        pytest.param(
            _status(429, "retry-after-ms: 250\r\nretry-after: 30\r\n", "rate_limit_error"),
            2,
            [0.25],
            id="retry-after-ms",
        ),
    ],
)
async def test_the_servers_retry_headers_are_obeyed(
    first: bytes, requests: int, waits: list[float] | None
) -> None:
    sleeps = SleepLog()
    async with RawServer(_then_a_reply(first)) as server:
        model = make_model("anthropic", None, base_url=server.url, sleep=sleeps)
        try:
            turn = await run_turn(model, request())
        except TransientError as exc:
            assert "not retried: the server said x-should-retry: false" in str(exc)
        except (RequestError, AuthError) as exc:
            assert "gave up" not in str(exc)
        else:
            assert turn.done.text == "ok"
        await model.aclose()
    assert len(server.paths) == requests
    if waits is not None:
        assert sleeps.waits == waits


def test_only_a_part_of_the_reply_is_progress() -> None:
    assert _limits.is_progress(TextDelta("a")) and _limits.is_progress(ThinkingDelta("t"))
    assert _limits.is_progress(ToolCallDelta(0, "call_1", "echo"))
    assert _limits.is_progress(ToolCallDelta(0, arguments_delta='{"te'))
    # An OpenAI tool_calls entry that repeats only its index, empty text.
    assert not _limits.is_progress(ToolCallDelta(0))
    assert not _limits.is_progress(TextDelta("")) and not _limits.is_progress(ThinkingDelta(""))


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param("retry-after: -5\r\n", id="negative"),
        pytest.param("retry-after: Wed, 21 Oct 2015 07:28:00 GMT\r\n", id="past-date"),
        pytest.param("retry-after-ms: -1\r\nretry-after: 0\r\n", id="ms-negative-and-zero"),
    ],
)
async def test_a_retry_after_of_no_time_leaves_the_backoff(headers: str) -> None:
    # Defect: each of these made the retry come at once (a wait of 0 s).
    sleeps = SleepLog()
    async with RawServer(_then_a_reply(_status(503, headers))) as server:
        model = make_model("anthropic", None, base_url=server.url, sleep=sleeps)
        turn = await run_turn(model, request())
        await model.aclose()
    assert turn.done.text == "ok" and len(server.paths) == 2
    base = FAST_RETRY.base_delay
    assert len(sleeps.waits) == 1 and base / 2 <= sleeps.waits[0] <= base
