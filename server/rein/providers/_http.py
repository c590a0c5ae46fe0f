"""The shared shell of the HTTP providers: one streamed POST per attempt,
SSE events fed to a wire-format assembler, retries with backoff, idle
timeout, wire dumps, and httpx failures mapped into Rein's error tree.

A wire format (openai.py, anthropic.py) supplies the URL, headers and
payload, and an assembler that turns SSE events into Rein deltas and, at
the end, one :class:`AssistantMessage`.
"""

from __future__ import annotations

import json
import logging
import math
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import Any, ClassVar, Protocol
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx
from httpx_sse import EventSource, ServerSentEvent

from rein.harness.conversation.wire import header_secrets, redact_headers, redact_payload
from rein.harness.errors import ModelError, ProviderError, StreamError, TransientError
from rein.harness.messages import AssistantMessage
from rein.harness.ports import ModelDelta, ModelRequest, RetryWait, TurnDone
from rein.providers import _limits
from rein.providers._errors import (
    header_retry_after,
    redirect_error,
    server_says_retry,
    status_error,
    transport_error,
)
from rein.providers._limits import BoundedStream, Progress
from rein.providers._retries import Held, RetryPolicy, retry_wait, server_asked
from rein.providers._secrets import config_secrets, shown_url
from rein.providers._wire import TapStream, WireDump
from rein.providers.config import ModelConfig

__all__ = [
    "IMAGES_OFF",
    "HttpClients",
    "HttpModel",
    "StreamAssembler",
    "decode_json",
    "incomplete",
]

log = logging.getLogger(__name__)

_MAX_ERROR_BODY = 64 * 1024
_DRAIN_SECONDS = 1.0


class StreamAssembler(Protocol):
    """Turns one response's SSE events into deltas and a final message."""

    #: True once the wire format's end marker was seen.
    done: bool

    def feed(self, event: ServerSentEvent) -> list[ModelDelta]:
        """Deltas for one event. Raises ModelError (StreamError for
        malformed data, a ProviderError for an error event)."""
        ...

    def finish(self) -> AssistantMessage:
        """The whole message; raises TransientError when the stream ended
        before its end marker."""
        ...


def decode_json(data: str, label: str) -> Any:
    """``json.loads`` that fails with a StreamError naming the bad data."""
    try:
        return json.loads(data)
    except ValueError as exc:
        raise StreamError(f"{label} sent a malformed JSON chunk ({exc}): {data[:200]!r}") from exc


class HttpClients:
    """The HTTP clients a host's models share: one ``httpx.AsyncClient``
    (one connection pool) per set of timeouts, however many sessions made a
    model. The host closes them once (:meth:`aclose`); a model made with
    them never closes a shared client itself."""

    def __init__(self) -> None:
        self._clients: dict[tuple[float | None, float | None], httpx.AsyncClient] = {}

    def client(
        self, request_timeout: float | None, idle_timeout: float | None
    ) -> httpx.AsyncClient:
        key = (request_timeout, idle_timeout)
        client = self._clients.get(key)
        if client is None or client.is_closed:
            client = httpx.AsyncClient(timeout=_timeout(request_timeout, idle_timeout))
            self._clients[key] = client
        return client

    @property
    def open(self) -> int:
        """How many clients are open (the server's ``rein/serverState``)."""
        return sum(1 for c in self._clients.values() if not c.is_closed)

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()


def _timeout(request_timeout: float | None, idle_timeout: float | None) -> httpx.Timeout:
    return httpx.Timeout(
        connect=request_timeout, write=request_timeout, pool=request_timeout, read=idle_timeout
    )


#: Why an image was not sent to a model configured as text-only.
IMAGES_OFF = "this model takes no images (rein.model.images is false)"


class HttpModel(ABC):
    """A :class:`~rein.harness.ports.Model` over one streamed HTTP POST."""

    provider: ClassVar[str]

    def __init__(
        self,
        config: ModelConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        clients: HttpClients | None = None,
    ) -> None:
        self.config = config
        #: Shared clients (the language server's); None: this model's own.
        self._clients = clients
        self.base_url = config.resolved_base_url()
        self.api_key_env = config.resolved_api_key_env()
        self.retry = retry or RetryPolicy(
            max_retries=config.max_retries, max_total=config.max_retry_wait
        )
        self._transport = transport
        self._sleep = sleep
        #: A server's Retry-After whose wait was ended early (a steer): the
        #: next request waits out what is left of it first.
        self._held: Held | None = None
        self._client: httpx.AsyncClient | None = None
        # Credentials in the URL (https://user:pass@proxy, https://token@host,
        # ?api-key=...) and in extra headers are secrets: remembered in every
        # form, and the URL a message names (an error, a model_retry) has
        # them replaced.
        self._secrets = config_secrets(self.base_url, config.extra_headers)
        self._dump: WireDump | None = None
        if config.wire_dump:
            self._dump = WireDump(config.wire_dump, [config.api_key(), *self._secrets])
        self.label = f"{self.provider} ({shown_url(self.base_url)})"

    @property
    def name(self) -> str:
        return self.config.model or self.provider

    # ------------------------------------------------------- wire format hooks

    @abstractmethod
    def endpoint(self) -> str: ...

    def url(self) -> str:
        """The endpoint's URL: ``endpoint()`` after the base URL's path and
        before its query (a base URL like ``.../openai/v1?api-version=...``
        keeps its query last)."""
        parts = urlsplit(self.base_url)
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + self.endpoint()))

    @abstractmethod
    def headers(self) -> dict[str, str]: ...

    @abstractmethod
    def payload(self, request: ModelRequest) -> dict[str, Any]: ...

    @abstractmethod
    def assembler(self, request: ModelRequest) -> StreamAssembler: ...

    def serialize(self, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        """What goes on the wire for ``request`` (the Agent's ``model_request``
        event with ``wire_dump``): URL, headers and JSON body, the API key
        redacted wherever it appears."""
        headers = self.headers()
        record = {
            "url": shown_url(self.url()),
            "headers": redact_headers(headers.items()),
            "body": self.payload(request),
        }
        secrets = header_secrets(headers.items()) | {self.config.api_key() or ""} | self._secrets
        return self.provider, redact_payload(record, secrets)

    def events_from_json(self, data: Any) -> list[ServerSentEvent] | None:
        """A server that answered a streaming request with plain JSON: the
        events equivalent to that body, or None when it cannot be used."""
        return None

    # --------------------------------------------------------------- plumbing

    def _get_client(self) -> httpx.AsyncClient:
        if self._clients is not None and self._transport is None:
            return self._clients.client(
                self.config.request_timeout, self.config.stream_idle_timeout
            )
        if self._client is None:
            timeout = _timeout(self.config.request_timeout, self.config.stream_idle_timeout)
            self._client = httpx.AsyncClient(transport=self._transport, timeout=timeout)
        return self._client

    async def aclose(self) -> None:
        """Close this model's own client (a shared one is the host's to close)."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    def stream(self, request: ModelRequest) -> AsyncGenerator[ModelDelta, None]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[ModelDelta, None]:
        payload = self.payload(request)
        body = json.dumps(payload).encode()
        held = self._held
        if held is not None and (left := held.until - anyio.current_time()) > 0:
            # The server's Retry-After outlives a request dropped during its
            # wait: no request goes before it (an abort still ends the wait).
            yield RetryWait(self.label, held.reason, held.attempt, self.retry.max_retries, left)
            await self._sleep(left)
        self._held = None
        retry = 0
        #: Seconds spent on retries: the waits and the retried attempts.
        spent = 0.0
        while True:
            streamed = False
            started = anyio.current_time()
            # A retried attempt has what is left of the budget to begin its
            # reply (once it streams it is no longer retried: its bounds are
            # the stream's).
            deadline = started + max(self.retry.max_total - spent, 0.0) if retry else None
            try:
                async with aclosing(
                    self._attempt(request, payload, body, retry, deadline)
                ) as deltas:
                    async for delta in deltas:
                        streamed = True
                        yield delta
                return
            except ModelError as exc:
                if retry:
                    spent += anyio.current_time() - started
                wait = retry_wait(self.retry, exc, streamed, retry, spent)
                reason = str(exc)
                asked = server_asked(exc)
            retry += 1
            log.warning(
                "%s; retry %d/%d in %.2f s",
                reason if self.label in reason else f"{self.label}: {reason}",
                retry,
                self.retry.max_retries,
                wait,
            )
            if asked:
                self._held = Held(anyio.current_time() + wait, reason, retry)
            # Announced as the wait begins; the consumer ends the wait early
            # by closing this stream (an abort, a steer).
            yield RetryWait(self.label, reason, retry, self.retry.max_retries, wait)
            await self._sleep(wait)
            self._held = None
            spent += wait

    async def _attempt(
        self,
        request: ModelRequest,
        payload: dict[str, Any],
        body: bytes,
        attempt: int,
        deadline: float | None = None,
    ) -> AsyncGenerator[ModelDelta, None]:
        """One POST and its reply's deltas; with ``deadline`` (a retried
        attempt: ``anyio.current_time()`` at which the retry budget ends),
        a reply not begun by then fails it."""
        url = self.url()
        client = self._get_client()
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            **self.headers(),
            # Lower-cased so that an extra header replaces a built-in one.
            **{name.lower(): value for name, value in self.config.extra_headers.items()},
            # Last, so that no extra header changes it: the body's bounds
            # count the bytes as they arrive, which only an unencoded body
            # makes the bytes the reply takes (_refuse_encoded).
            "accept-encoding": "identity",
        }
        http_request = client.build_request("POST", url, content=body, headers=headers)
        chunks: list[bytes] = []
        if self._dump is not None:
            self._dump.request(http_request, payload, provider=self.provider, attempt=attempt)
        response: httpx.Response | None = None
        error: BaseException | None = None
        try:
            try:
                with anyio.CancelScope(
                    deadline=math.inf if deadline is None else deadline
                ) as scope:
                    response = await client.send(http_request, stream=True)
                    self._bound(response, chunks)
                    if response.status_code >= 400:
                        raise await self._status_error(response)
                if scope.cancelled_caught or response is None:
                    raise self._past_budget()
                if 300 <= response.status_code < 400:
                    raise redirect_error(response, label=self.label, url=shown_url(url))
                _refuse_encoded(response, self.label)
                assembler = self.assembler(request)
                progress = Progress(self.config.stream_progress_timeout, self.label)
                async with aclosing(self._events(response)) as events:
                    while (event := await self._next(progress, events, deadline)) is not None:
                        deltas = assembler.feed(event)
                        if deltas:
                            deadline = None  # the reply has begun
                        for delta in deltas:
                            yield delta
                        progress.saw(deltas)
                        if assembler.done:
                            break
                    if assembler.done:
                        # Read to the end so the connection can be reused,
                        # but never wait on a server that keeps it open.
                        with anyio.move_on_after(_DRAIN_SECONDS):
                            async for _ in events:
                                pass
                message = assembler.finish()
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                raise transport_error(
                    exc,
                    label=self.label,
                    url=shown_url(url),
                    idle_timeout=self.config.stream_idle_timeout,
                ) from exc
            yield TurnDone(message)
        except GeneratorExit:
            raise  # closed by the consumer: not an error
        except BaseException as exc:
            error = exc
            raise
        finally:
            if response is not None:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
            if self._dump is not None:
                self._dump.response(
                    response, chunks, provider=self.provider, attempt=attempt, error=error
                )

    async def _next(
        self,
        progress: Progress,
        events: AsyncGenerator[ServerSentEvent, None],
        deadline: float | None,
    ) -> ServerSentEvent | None:
        """The reply's next event; before ``deadline`` when there is one."""
        if deadline is None:
            return await progress.next(events)
        with anyio.CancelScope(deadline=deadline):
            return await progress.next(events)
        raise self._past_budget()

    def _past_budget(self) -> TransientError:
        return TransientError(
            f"{self.label} had not begun its reply when the time for retries ran out "
            "(the attempt was cancelled)"
        )

    def _bound(self, response: httpx.Response, chunks: list[bytes]) -> None:
        """Bound the response's body (:mod:`rein.providers._limits`) and,
        with a wire dump, keep a copy of it in ``chunks``."""
        if not isinstance(response.stream, httpx.AsyncByteStream):
            return
        response.stream = BoundedStream(
            response.stream,
            label=self.label,
            max_total=_limits.MAX_RESPONSE_BYTES,
            max_line=_limits.MAX_LINE_BYTES,
        )
        if self._dump is not None:
            response.stream = TapStream(response.stream, chunks)

    async def _status_error(self, response: httpx.Response) -> ProviderError:
        body = await _error_body(response)
        error = status_error(
            response.status_code,
            body,
            label=self.label,
            api_key_env=self.api_key_env,
            key_present=self.config.api_key() is not None,
            retry_after=header_retry_after(response.headers),
        )
        return server_says_retry(error, response.headers.get("x-should-retry"), body)

    async def _events(self, response: httpx.Response) -> AsyncGenerator[ServerSentEvent, None]:
        content_type = response.headers.get("content-type", "")
        if "text/event-stream" in content_type:
            async for event in EventSource(response).aiter_sse():
                yield event
            return
        raw = await response.aread()
        text = raw.decode("utf-8", errors="replace")
        events = None
        if "json" in content_type:
            events = self.events_from_json(decode_json(text, self.label))
        if events is None:
            raise StreamError(
                f"{self.label} answered with {content_type or 'no content type'} instead of "
                f"an event stream: {text[:200]!r}"
            )
        for event in events:
            yield event


def _encoding(response: httpx.Response) -> str | None:
    """The response's content encoding, or None for an unencoded body."""
    value = response.headers.get("content-encoding", "").strip().lower()
    return None if value in ("", "identity") else value


def _refuse_encoded(response: httpx.Response, label: str) -> None:
    """An encoded body Rein did not ask for is never decoded: its bounds
    (:mod:`rein.providers._limits`) count the bytes on the wire, and 400 KB
    of gzip decode to 400 MB."""
    encoding = _encoding(response)
    if encoding is not None:
        raise StreamError(
            f"{label} answered with a {encoding}-encoded body though Rein asked for none "
            "(Accept-Encoding: identity); it is not decoded (a proxy that compresses "
            "anyway must be told not to): the request was cancelled"
        )


async def _error_body(response: httpx.Response) -> str:
    """The start of an error response's body (enough for its message); an
    encoded one is not read, since a few KB of gzip can hold GBs."""
    encoding = _encoding(response)
    if encoding is not None:
        return f"(a {encoding}-encoded body, not read: Rein asks for identity)"
    raw = bytearray()
    try:
        async for piece in response.aiter_bytes():
            raw += piece
            if len(raw) > _MAX_ERROR_BODY:
                break
    except httpx.HTTPError:
        pass  # the status alone is enough to report
    return raw.decode("utf-8", errors="replace")


def incomplete(label: str) -> TransientError:
    return TransientError(f"the {label} stream ended before the reply was complete")
