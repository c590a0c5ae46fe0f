"""Model implementations: replay (scripted), the editor's language models
(vscode-lm, through an :class:`~rein.providers.vscode_lm.LmHost`) and, over
httpx, OpenAI-compatible and Anthropic. This package is the only place httpx
is imported.

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
    from rein.providers.vscode_lm import LmHost

__all__ = ["ModelConfig", "create_model", "shared_http_clients"]


def shared_http_clients() -> HttpClients:
    """A set of HTTP clients for a host's models to share (closed by the host)."""
    from rein.providers._http import HttpClients

    return HttpClients()


def create_model(
    config: ModelConfig, *, clients: HttpClients | None = None, lm_host: LmHost | None = None
) -> Model:
    """The model ``config`` describes. Raises ConfigError for an unusable one.
    ``clients``: HTTP clients shared with the host's other models (the
    language server's, so that sessions do not each keep a connection pool).
    ``lm_host``: the editor that answers the vscode-lm provider (None: a
    host without an editor, where vscode-lm is a ConfigError). An HTTP
    provider missing its key or model name is a ConfigError naming them
    (:meth:`ModelConfig.check_ready`): nothing is sent."""
    config.check_usable()
    if config.provider == "vscode-lm":
        if lm_host is None:
            raise ConfigError(
                "the vscode-lm provider uses VS Code's language models: it works only in "
                "the VS Code extension (rein serve), not here",
                "provider",
            )
        from rein.providers.vscode_lm import VsCodeLmModel

        return VsCodeLmModel(
            lm_host,
            config.model,
            max_tokens=config.max_tokens,
            idle_timeout=config.stream_idle_timeout,
        )
    if config.provider == "replay":
        if not config.script:
            raise ConfigError(
                "the replay provider needs rein.model.script (a YAML file; --script for rein run)",
                "script",
            )
        from rein.providers.replay import ReplayModel

        return ReplayModel(config.script, name=config.model or "replay")
    # An HTTP provider without its key or model name stops here, before any request.
    config.check_ready()
    if config.provider == "anthropic":
        from rein.providers.anthropic import AnthropicModel

        return AnthropicModel(config, clients=clients)
    from rein.providers.openai import OpenAIModel

    return OpenAIModel(config, clients=clients)
