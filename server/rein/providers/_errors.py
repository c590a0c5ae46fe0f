"""Mapping foreign failures into Rein's error tree: HTTP statuses, provider
error bodies, ``Retry-After`` and httpx exceptions."""

from __future__ import annotations

import json
import math
import ssl
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from rein.harness.errors import (
    AuthError,
    ContextLengthError,
    ModelError,
    ProviderError,
    RateLimitError,
    RequestError,
    StreamError,
    TransientError,
)
from rein.harness.redaction import redact

__all__ = [
    "error_from_payload",
    "error_message",
    "header_retry_after",
    "is_context_length",
    "parse_retry_after",
    "quota_code",
    "redirect_error",
    "server_says_retry",
    "status_error",
    "transport_error",
]

_MAX_MESSAGE = 600


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an
    HTTP-date); None when absent, unreadable, or not above 0 (a date in the
    past, ``0``, ``-5``): the backoff then decides, as in the vendors' SDKs."""
    if not value:
        return None
    value = value.strip()
    try:
        return _positive(float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return _positive(when.timestamp() - current)


def _positive(seconds: float) -> float | None:
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def header_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from a response's headers: ``retry-after-ms`` (what
    the vendors' SDKs read first), else ``Retry-After``; None when neither
    is readable and above 0."""
    try:
        millis = _positive(float(headers.get("retry-after-ms") or ""))
    except ValueError:
        millis = None
    if millis is not None:
        return millis / 1000
    return parse_retry_after(headers.get("retry-after"))


def server_says_retry(error: ProviderError, header: str | None, body: str) -> ProviderError:
    """``x-should-retry`` (Anthropic's and OpenAI's SDKs obey it): ``false``
    forbids a retry, ``true`` asks for one of a refusal Rein does not know
    to be final (a 409, a plain 4xx). The SDKs obey ``true`` whatever the
    status; Rein never retries what no wait changes, whatever the header
    says: a rejected key (401, 403), a quota or spend limit (429 and its
    code in ``body``), a prompt over the context window. Anything else
    changes nothing."""
    value = (header or "").strip().lower()
    if value == "false" and error.retryable:
        error.retryable = False
        error.args = (f"{error.args[0]} (not retried: the server said x-should-retry: false)",)
    elif value == "true" and not error.retryable and not _final(error, body):
        error.retryable = True
    return error


def _final(error: ProviderError, body: str) -> bool:
    """Whether a refusal is one that retrying never lifts."""
    if isinstance(error, AuthError | ContextLengthError):
        return True
    return error.status == 429 and quota_code(body) is not None


def error_message(body: str) -> str:
    """The provider's own message from an error body: OpenAI and Anthropic
    ``{"error": {"message"}}``, Ollama ``{"error": "..."}``, ``{"message"}``,
    ``{"detail"}``; else the (shortened) text itself."""
    text = body.strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = None
    message: Any = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            message = error.get("message") or error.get("type")
        elif isinstance(error, str):
            message = error
        message = message or data.get("message") or data.get("detail")
    result: str = message if isinstance(message, str) and message.strip() else text
    result = result or "(empty response body)"
    if len(result) > _MAX_MESSAGE:
        result = result[:_MAX_MESSAGE] + "..."
    return result


#: How providers word "the prompt is longer than the window" (lower case):
#: OpenAI's ``context_length_exceeded`` code and its message, Anthropic's
#: "prompt is too long", and the wording of OpenAI-compatible servers
#: (vLLM, llama.cpp, OpenRouter).
_CONTEXT_LENGTH_MARKERS = (
    "context_length_exceeded",
    "prompt is too long",
    "maximum context length",
    "context window",
    "exceeds the context",
    "available context size",
)


def is_context_length(status: int | None, body: str) -> bool:
    """Whether an error (its HTTP status and body) says the prompt does not
    fit the model's context window."""
    if status is not None and status not in (400, 413, 422):
        return False
    text = body.lower()
    try:
        data: Any = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("code") == "context_length_exceeded":
            return True
    return any(marker in text for marker in _CONTEXT_LENGTH_MARKERS)


#: The codes of a 429 that waiting does not lift: OpenAI's billing and quota
#: codes (``error.code``, ``error.type``), Anthropic's monthly spend cap
#: (``error.details.error_code``).
_QUOTA_CODES = frozenset(
    {
        "insufficient_quota",
        "credit_balance_exhausted",
        "organization_spend_limit_exceeded",
        "project_spend_limit_exceeded",
        "organization_usage_limit_exceeded",
        "enforced_spend_limit_reached",
    }
)


def quota_code(body: str) -> str | None:
    """The quota or spend-limit code of a 429's body, or None for a rate
    limit that passes with time."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return None
    details = error.get("details")
    candidates = [error.get("code"), error.get("type")]
    if isinstance(details, dict):
        candidates.append(details.get("error_code"))
    return next((c for c in candidates if isinstance(c, str) and c in _QUOTA_CODES), None)


def status_error(
    status: int,
    body: str,
    *,
    label: str,
    api_key_env: str,
    key_present: bool,
    retry_after: float | None = None,
) -> ProviderError:
    """The Rein error for an HTTP error status answered by ``label``."""
    message = redact(error_message(body))
    if status in (401, 403):
        state = "is set" if key_present else "is not set"
        source = (
            f"the API key was read from the environment variable {api_key_env} ({state})"
            if api_key_env
            else "no API key environment variable is configured (apiKeyEnv)"
        )
        what = "rejected the credentials" if status == 401 else "denied access"
        return AuthError(f"{label} {what} (HTTP {status}): {message}; {source}", status=status)
    quota = quota_code(body) if status == 429 else None
    if quota is not None:
        return RequestError(
            f"{label} refused the request: a quota or spend limit is reached (HTTP 429, "
            f"{quota}): {message}; not retried, since waiting does not lift it (add "
            "credits or raise the limit)",
            status=status,
        )
    if status == 429:
        return RateLimitError(
            f"{label} rate limit (HTTP 429): {message}", status=status, retry_after=retry_after
        )
    if status >= 500 or status == 408:
        return TransientError(
            f"{label} server error (HTTP {status}): {message}",
            status=status,
            retry_after=retry_after,
        )
    text = f"{label} refused the request (HTTP {status}): {message}"
    if is_context_length(status, body):
        return ContextLengthError(text, status=status)
    return RequestError(text, status=status)


_TRANSIENT_TYPES = {"overloaded_error", "api_error", "server_error", "timeout_error"}


def error_from_payload(data: dict[str, Any], *, label: str) -> ProviderError:
    """An error reported inside a stream (Anthropic ``event: error``, an
    OpenRouter ``{"error": ...}`` chunk)."""
    error = data.get("error")
    kind = ""
    code: Any = None
    if isinstance(error, dict):
        kind = str(error.get("type") or "")
        code = error.get("code")
    message = redact(error_message(json.dumps(data)))
    text = f"{label} reported an error in the stream: {message}"
    status = code if isinstance(code, int) else None
    if kind == "rate_limit_error" or status == 429:
        return RateLimitError(text, status=status)
    if kind in _TRANSIENT_TYPES or (status is not None and status >= 500):
        return TransientError(text, status=status)
    if is_context_length(status, json.dumps(data)):
        return ContextLengthError(text, status=status)
    return RequestError(text, status=status)


def transport_error(exc: Exception, *, label: str, url: str, idle_timeout: float) -> ModelError:
    """Map an httpx exception (or ``httpx.InvalidURL``) to a Rein error."""
    if isinstance(exc, httpx.ReadTimeout):
        return TransientError(
            f"{label} went silent: no data for {idle_timeout:g} s (streamIdleTimeout); "
            "the request was cancelled"
        )
    if isinstance(exc, httpx.TimeoutException):
        return TransientError(f"timed out talking to {url}: {type(exc).__name__} {exc}".strip())
    if isinstance(exc, httpx.ConnectError):
        if _caused_by(exc, ssl.SSLCertVerificationError):
            return RequestError(
                f"cannot verify the TLS certificate of {url}: {exc}; not retried. A server "
                "whose certificate a private CA signed: set SSL_CERT_FILE (or SSL_CERT_DIR) "
                "to that CA's certificate for Rein"
            )
        return TransientError(f"cannot connect to {url}: {exc}")
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError | httpx.InvalidURL):
        return RequestError(f"cannot send the request to {url}: {exc}")
    if isinstance(exc, httpx.TooManyRedirects):
        return RequestError(f"too many redirects from {url}: {exc}")
    if isinstance(exc, httpx.DecodingError):
        return StreamError(f"cannot decode the response from {url}: {exc}")
    if isinstance(exc, httpx.RemoteProtocolError | httpx.NetworkError):
        return TransientError(f"the connection to {url} failed: {_described(exc)}")
    return TransientError(f"HTTP error talking to {url}: {type(exc).__name__}: {exc}")


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc`` or one of its causes is a ``kind``."""
    error: BaseException | None = exc
    for _ in range(8):  # a chain is a few links; never loop on a cycle
        if error is None:
            return False
        if isinstance(error, kind):
            return True
        error = error.__cause__ or error.__context__
    return False


def _described(exc: BaseException) -> str:
    """An exception's text; for one without (httpx's ReadError of a reset
    connection), the first of its causes that has one (``[Errno 104]
    Connection reset by peer``), else its type's name."""
    error: BaseException | None = exc
    for _ in range(8):  # a chain is a few links; never loop on a cycle
        if error is None:
            break
        if str(error).strip():
            return str(error)
        error = error.__cause__ or error.__context__
    return f"{type(exc).__name__} (the connection was closed)"


def redirect_error(response: httpx.Response, *, label: str, url: str) -> RequestError:
    """A redirect (3xx): never followed, since the request would carry the
    API key to another address; the message names where it points."""
    status = response.status_code
    location = response.headers.get("location") or "(no Location header)"
    return RequestError(
        f"{label} answered {url} with a redirect (HTTP {status}) to {redact(location)}; "
        "Rein does not follow redirects (the API key would go with the request): "
        "set rein.model.baseUrl to the address the server should be reached at",
        status=status,
    )
