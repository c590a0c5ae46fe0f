"""Model configuration: snake_case in Python, camelCase on the wire (the
``model`` object of the ``rein`` configuration section)."""

from __future__ import annotations

import os
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator
from pydantic.alias_generators import to_camel

from rein.harness.cost.pricing import ModelPrice
from rein.harness.errors import ConfigError
from rein.harness.redaction import remember_secret
from rein.process.environment import remember_secret_name

__all__ = ["MAX_RETRIES", "ModelConfig", "ProviderName"]

ProviderName = Literal["openai", "anthropic", "replay", "vscode-lm"]

_DEFAULT_BASE_URL = {
    "openai": ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
    "anthropic": ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
}
_DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
#: The most ``maxRetries`` may be (see :attr:`ModelConfig.max_retries`).
MAX_RETRIES = 10
#: Where a person who left a setting out reads how to set it.
_DOCS = 'docs/providers.md ("Configuration" and "Pointing Rein at a server")'


class ModelConfig(BaseModel):
    """Which model to talk to and how.

    ``None`` for ``base_url`` and ``api_key_env`` means the ecosystem's
    default: ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` (else the public
    endpoint) and ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``.

    A configuration whose endpoint settings were invalid is *unusable*
    (:meth:`unusable_because`): it never resolves a base URL and
    :func:`rein.providers.create_model` refuses it, so an invalid provider
    or base URL never falls back to another endpoint.
    """

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    provider: ProviderName = "openai"
    base_url: str | None = None
    #: The model name; for vscode-lm a VS Code model selector: ``vendor/family``
    #: (``copilot/gpt-4o``) or a model id, empty for the editor's first model.
    model: str = ""
    #: The NAME of the environment variable that holds the API key (never the key).
    api_key_env: str | None = None
    max_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    extra_headers: dict[str, str] = Field(default_factory=dict)
    #: Replay only: the path of the YAML script to play.
    script: str | None = None
    #: Retries after the first attempt for 429, 5xx, connection errors and
    #: stalls. At most 10: the backoff reaches its 20 s ceiling by the 7th,
    #: so more only press a server that keeps failing (the vendors' SDKs
    #: make 2), and each attempt may itself take ``stream_idle_timeout``.
    max_retries: int = Field(4, ge=0, le=MAX_RETRIES)
    #: Seconds one model request may spend on retries: the waits between
    #: attempts and the retried attempts themselves. A retry whose wait
    #: would pass it is not made, and a retried attempt that has not begun
    #: its reply when it runs out is cancelled: the turn fails, naming this
    #: setting.
    max_retry_wait: float = Field(120.0, gt=0, le=3600, allow_inf_nan=False)
    #: The timeouts are finite (.inf would be a wait without end).
    #: Seconds without a byte from the server before the stream counts as stalled.
    stream_idle_timeout: float = Field(60.0, gt=0, allow_inf_nan=False)
    #: Seconds a stream may go on without a part of the reply: keep-alives
    #: (Anthropic's ``ping`` events, ``: comment`` lines) reset
    #: ``stream_idle_timeout`` but not this.
    stream_progress_timeout: float = Field(300.0, gt=0, allow_inf_nan=False)
    #: Seconds to connect and to send the request.
    request_timeout: float = Field(30.0, gt=0, allow_inf_nan=False)
    #: Append raw requests and response streams (keys redacted) to this JSONL file.
    wire_dump: str | None = None
    #: Anthropic: enable extended thinking with this many budget tokens.
    thinking_budget: int | None = Field(None, ge=1024)
    #: Send images (an MCP tool's screenshot) to the model. False for a
    #: text-only model: each image becomes a placeholder naming it.
    images: bool = True
    #: USD per million tokens by model name (``{input, output, cacheRead,
    #: cacheWrite}``), over the built-in table of well-known models
    #: (:data:`rein.harness.cost.pricing.BUILTIN_PRICES`). A model in neither
    #: has no cost.
    prices: dict[str, ModelPrice] = Field(default_factory=dict)

    #: Why this configuration cannot be used (None: it can).
    _unusable: str | None = PrivateAttr(None)

    def model_post_init(self, context: Any, /) -> None:
        # The key's variable leaves every child's environment from the moment
        # a configuration names it: the analyzers, the tests gate and the
        # hooks start before the first model request (the first read of the
        # key), and a variable with a plain name (apiKeyEnv: MYLLM) passed
        # to them until then.
        remember_secret_name(self.resolved_api_key_env())

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None  # empty: the ecosystem's default
        parts = urlsplit(value.strip())
        try:
            parts.port  # noqa: B018 - raises on an invalid port
        except ValueError as exc:
            raise ValueError(f"invalid port: {exc}") from exc
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL with a host")
        return value.strip()

    def unusable_because(self, reason: str) -> ModelConfig:
        """A copy that no model is built from: every use raises
        ConfigError with ``reason``."""
        copy = self.model_copy()
        copy._unusable = reason
        return copy

    @property
    def unusable(self) -> str | None:
        """Why no model may be built from this configuration, or None."""
        return self._unusable

    def check_usable(self) -> None:
        """Raise ConfigError (with the reason) when this configuration is unusable."""
        if self._unusable is not None:
            raise ConfigError(
                f"the model settings cannot be used: {self._unusable}. No model request "
                "is sent until the setting is fixed.",
                "model",
            )

    def resolved_base_url(self) -> str:
        """The base URL without a trailing slash, defaults applied (ConfigError
        when the configuration is unusable: never a default endpoint)."""
        self.check_usable()
        if self.base_url:
            return self.base_url.rstrip("/")
        env, default = _DEFAULT_BASE_URL.get(self.provider, ("", ""))
        return (os.environ.get(env) or default).rstrip("/")

    def resolved_api_key_env(self) -> str:
        """The variable to read; ``""`` (set explicitly) means "send no key"."""
        if self.api_key_env is not None:
            return self.api_key_env
        return _DEFAULT_KEY_ENV.get(self.provider, "")

    def missing(self) -> list[str]:
        """What an HTTP provider (openai, anthropic) needs and this
        configuration does not give: its key's variable unset (unless
        ``apiKeyEnv`` is ``""``: a server that needs no key) and the model's
        name. Each says the setting or variable to set. Empty when ready."""
        if self.provider not in _DEFAULT_KEY_ENV:
            return []
        missing = []
        name = self.resolved_api_key_env()
        if name and not os.environ.get(name):
            missing.append(
                f"the API key: the environment variable {name} is not set (set it, name "
                'another variable in rein.model.apiKeyEnv, or set rein.model.apiKeyEnv to "" '
                "for a server that needs no key)"
            )
        if not self.model.strip():
            missing.append(
                "the model's name: rein.model.model is empty (set it, or pass --model or "
                "REIN_MODEL to rein run)"
            )
        return missing

    def check_ready(self) -> None:
        """Raise ConfigError naming what is missing (:meth:`missing`) before
        any request is sent: a request without them fails anyway (after
        retries, at the public endpoint when no base URL is set)."""
        self.check_usable()
        missing = self.missing()
        if missing:
            raise ConfigError(
                f"the {self.provider} model cannot be used: missing "
                + "; and ".join(missing)
                + f". No request was sent. See {_DOCS} and docs/configuration.md.",
                "model",
            )

    def api_key(self) -> str | None:
        """The key read from :meth:`resolved_api_key_env`, or None when unset."""
        name = self.resolved_api_key_env()
        remember_secret_name(name)
        key = (os.environ.get(name) or None) if name else None
        remember_secret(key)
        return key
