"""Wire dumps in the core: the ``model_request`` event, and the redaction
every wire dump shares (the providers' JSONL dumps use it too).

With ``Agent(wire_dump=True)`` every model request of a run (a turn's, and a
compaction's summary request) is preceded by a
:class:`~rein.harness.events.ModelRequestEvent` carrying the outbound payload:

* a model that can say what it puts on the wire (a :class:`SerializingModel`,
  as the HTTP providers are) gives its own payload: the URL, the headers
  (secrets redacted) and the JSON body it sends;
* any other model (a scripted one, a replay) gets the provider-neutral
  :class:`~rein.harness.ports.ModelRequest` serialised (system, messages,
  tool schemas, options), ``format`` "neutral".

Either way :func:`redact_payload` runs over it before it is emitted: values
under secret keys (``authorization``, ``x-api-key``, ``api_key``, cookies)
become ``[redacted]``, and the secrets a serialiser names are scrubbed from
every string. The core never imports httpx: a provider serialises, the core
only redacts and emits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from rein.harness.events import Emit, ModelRequestEvent
from rein.harness.messages import MessageAdapter
from rein.harness.ports import Model, ModelDelta, ModelRequest

__all__ = [
    "MIN_SECRET",
    "REDACTED",
    "SECRET_HEADERS",
    "SerializingModel",
    "WireTap",
    "header_secrets",
    "redact_headers",
    "redact_payload",
    "scrub",
    "serialize_request",
]

REDACTED = "[redacted]"
#: Shorter strings are not scrubbed (they would match everywhere).
MIN_SECRET = 8
#: Headers whose value is a credential (compared lower-case).
SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "set-cookie"}
)
#: Keys of a payload whose value is a credential: the secret headers, and
#: their snake_case and run-together spellings (``api_key``, ``apikey``).
_SECRET_KEYS = SECRET_HEADERS | {"apikey", "x-apikey"}


def _is_secret_key(key: str) -> bool:
    return key.lower().replace("_", "-") in _SECRET_KEYS


def redact_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The headers with every credential's value replaced by ``[redacted]``."""
    return {name: REDACTED if name.lower() in SECRET_HEADERS else value for name, value in headers}


def header_secrets(headers: Iterable[tuple[str, str]]) -> set[str]:
    """The credentials the secret headers carry (a bearer token alone too),
    to scrub wherever else they appear."""
    found: set[str] = set()
    for name, value in headers:
        if name.lower() not in SECRET_HEADERS:
            continue
        scheme, _, token = value.partition(" ")
        candidates = [value, token] if scheme.lower() in ("bearer", "basic") else [value]
        found.update(c for c in candidates if len(c) >= MIN_SECRET)
    return found


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (of at least :data:`MIN_SECRET` characters)
    replaced by ``[redacted]``, longest first."""
    for secret in sorted((s for s in secrets if len(s) >= MIN_SECRET), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def redact_payload(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """A copy of the JSON-like ``value`` with credentials redacted: values
    under secret keys, and every ``secrets`` string wherever it appears."""
    known = {s for s in secrets if s and len(s) >= MIN_SECRET}
    return _redact(value, known)


def _redact(value: Any, secrets: set[str]) -> Any:
    if isinstance(value, Mapping):
        return {
            key: REDACTED
            if isinstance(key, str) and _is_secret_key(key) and item is not None
            else _redact(item, secrets)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact(item, secrets) for item in value]
    if isinstance(value, str):
        return scrub(value, secrets) if secrets else value
    return value


@runtime_checkable
class SerializingModel(Protocol):
    """A model that can say what it sends for a request (the HTTP providers).

    ``serialize`` returns ``(format, payload)``: the wire format's name
    ("openai", "anthropic", ...) and a JSON-able dict, e.g. ``{"url", "headers",
    "body"}`` with the headers already redacted. It must not do I/O.
    """

    def serialize(self, request: ModelRequest) -> tuple[str, dict[str, Any]]: ...


def serialize_request(model: object, request: ModelRequest) -> tuple[str, dict[str, Any]]:
    """What goes out for ``request``, redacted: the model's own payload when
    it can give one, else the provider-neutral request."""
    if isinstance(model, SerializingModel):
        fmt, payload = model.serialize(request)
    else:
        fmt = "neutral"
        payload = {
            "system": request.system,
            "messages": [MessageAdapter.dump_python(m, mode="json") for m in request.messages],
            "tools": [t.model_dump(mode="json") for t in request.tools],
            "options": request.options.model_dump(mode="json", exclude_none=True),
        }
    return fmt, redact_payload(payload)


class WireTap:
    """A :class:`~rein.harness.ports.Model` that emits a ``model_request``
    event (the redacted outbound payload) before each request it passes on."""

    def __init__(self, inner: Model, emit: Emit, turn: int) -> None:
        self.inner = inner
        self._emit = emit
        self._turn = turn

    @property
    def name(self) -> str:
        return self.inner.name

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        fmt, payload = serialize_request(self.inner, request)
        self._emit(
            ModelRequestEvent(turn=self._turn, model=self.inner.name, format=fmt, payload=payload)
        )
        return self.inner.stream(request)
