"""Model implementations: replay (scripted) and, over httpx, OpenAI-compatible
and Anthropic. This package is the only place httpx is imported.

:func:`create_model` builds a :class:`~rein.harness.ports.Model` from a
:class:`ModelConfig`; the HTTP providers are imported only when asked for,
so the replay model does not pay for httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rein.harness.errors import ConfigError
from rein.harness.ports import Model
from rein.providers.config import ModelConfig

if TYPE_CHECKING:
    from rein.providers._http import HttpClients

__all__ = ["ModelConfig", "create_model", "shared_http_clients"]


def shared_http_clients() -> HttpClients:
    """A set of HTTP clients for a host's models to share (closed by the host)."""
    from rein.providers._http import HttpClients

    return HttpClients()


def create_model(config: ModelConfig, *, clients: HttpClients | None = None) -> Model:
    """The model ``config`` describes. Raises ConfigError for an unusable one.
    ``clients``: HTTP clients shared with the host's other models (the
    language server's, so that sessions do not each keep a connection pool)."""
    config.check_usable()
    if config.provider == "replay":
        if not config.script:
            raise ConfigError("the replay provider needs model.script (a YAML file)", "script")
        from rein.providers.replay import ReplayModel

        return ReplayModel(config.script, name=config.model or "replay")
    if config.provider == "anthropic":
        from rein.providers.anthropic import AnthropicModel

        return AnthropicModel(config, clients=clients)
    from rein.providers.openai import OpenAIModel

    return OpenAIModel(config, clients=clients)
