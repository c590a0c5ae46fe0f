"""Model implementations: replay (scripted) and, over httpx, OpenAI-compatible
and Anthropic. This package is the only place httpx is imported.

:func:`create_model` builds a :class:`~rein.harness.ports.Model` from a
:class:`ModelConfig`; the HTTP providers are imported only when asked for,
so the replay model does not pay for httpx.
"""

from __future__ import annotations

from rein.harness.errors import ConfigError
from rein.harness.ports import Model
from rein.providers.config import ModelConfig

__all__ = ["ModelConfig", "create_model"]


def create_model(config: ModelConfig) -> Model:
    """The model ``config`` describes. Raises ConfigError for an unusable one
    (an invalid provider or base URL: never another endpoint instead)."""
    config.check_usable()
    if config.provider == "replay":
        if not config.script:
            raise ConfigError("the replay provider needs model.script (a YAML file)", "script")
        from rein.providers.replay import ReplayModel

        return ReplayModel(config.script, name=config.model or "replay")
    if config.provider == "anthropic":
        from rein.providers.anthropic import AnthropicModel

        return AnthropicModel(config)
    from rein.providers.openai import OpenAIModel

    return OpenAIModel(config)
