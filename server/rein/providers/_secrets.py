"""The secrets a model's configuration holds besides its API key, and its
base URL as messages name it.

A base URL can carry credentials (``https://user:pass@proxy``,
``https://token@host``, ``?api-key=...``) and an extra header can carry a
key (``api-key: ...``). Each is remembered by the process's redactor in
every form it may come back in (as written, percent-decoded), so that an
error body or an httpx message that echoes it is redacted; and the URL a
message names (the model's label, an error) has them replaced already, so
that a form nobody thought of never reaches an event either.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from rein.harness.conversation.wire import header_secrets
from rein.harness.redaction import REDACTED, remember_secret

__all__ = ["config_secrets", "shown_url"]

#: Query parameters known to hold no secret (remembering Azure's
#: ``api-version=2024-10-21`` would redact that date everywhere).
_PLAIN_PARAMS = frozenset({"api-version"})
#: Words in an extra header's name that make its value a credential, beyond
#: the known secret headers (``x-goog-api-key``, ``ocp-apim-subscription-key``).
_SECRET_WORDS = ("key", "token", "secret", "auth", "password", "signature")


def _forms(value: str) -> set[str]:
    """``value`` as written and percent-decoded (``+`` as a space too)."""
    return {value, unquote(value), unquote(value.replace("+", " "))}


def _url_secrets(url: str) -> set[str]:
    parts = urlsplit(url)
    found: set[str] = set()
    netloc = parts.netloc
    if "@" in netloc:
        userinfo = netloc.rpartition("@")[0]
        user, _, password = userinfo.partition(":")
        # With a password the user name is only a name; alone it is the token.
        found |= _forms(password) if password else _forms(user)
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name.lower() not in _PLAIN_PARAMS:
            found |= _forms(value)
    for piece in parts.query.split("&"):
        name, _, raw = piece.partition("=")
        if raw and unquote(name).lower() not in _PLAIN_PARAMS:
            found.add(raw)  # as written, before parse_qsl decoded it
    return found


def config_secrets(base_url: str, extra_headers: Mapping[str, str]) -> set[str]:
    """The credentials in ``base_url`` and ``extra_headers``, every form
    remembered by the redactor (and returned, for a wire dump)."""
    found = _url_secrets(base_url)
    found |= header_secrets(extra_headers.items())
    found |= {
        value
        for name, value in extra_headers.items()
        if any(word in name.lower() for word in _SECRET_WORDS)
    }
    for secret in found:
        remember_secret(secret)
    return {s for s in found if s}


def shown_url(url: str) -> str:
    """``url`` as a message names it: a password (or a user name standing
    alone, a token) and every query value but the known plain ones replaced
    by ``[redacted]``."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        netloc = f"{user}:{REDACTED}@{host}" if colon else f"{REDACTED}@{host}"
    query = "&".join(_shown_param(piece) for piece in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _shown_param(piece: str) -> str:
    name, equals, value = piece.partition("=")
    if not equals or not value or unquote(name).lower() in _PLAIN_PARAMS:
        return piece
    return f"{name}={REDACTED}"
