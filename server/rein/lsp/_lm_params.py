"""Params of the model methods (``rein/models``, ``rein/setModel``,
``rein/lm/consent``), the client's model list, and a picker's choice
applied to the model settings."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from rein.providers.config import ModelConfig, ProviderName

__all__ = [
    "Choice",
    "ConsentParams",
    "LmModels",
    "ModelsParams",
    "SetModelParams",
    "chosen_config",
]

#: Settings that belong to one endpoint: dropped when a choice changes the provider.
_ENDPOINT_FIELDS = ("base_url", "api_key_env", "extra_headers", "script", "thinking_budget")


@dataclass(frozen=True, slots=True)
class Choice:
    provider: ProviderName
    model: str


def chosen_config(config: ModelConfig, choice: Choice | None) -> ModelConfig:
    """The model settings with ``choice`` applied: the same provider keeps
    its endpoint settings; another provider starts from its defaults (its
    own endpoint and key variable), keeping the provider-neutral ones
    (max tokens, temperature, timeouts, retries)."""
    if choice is None:
        return config
    if choice.provider == config.provider:
        return config.model_copy(update={"model": choice.model})
    neutral = config.model_dump(exclude={"provider", "model", *_ENDPOINT_FIELDS})
    return ModelConfig(provider=choice.provider, model=choice.model, **neutral)


class ModelsParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    session_id: str | None = Field(None, alias="sessionId")


class SetModelParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    session_id: str | None = Field(None, alias="sessionId")
    provider: ProviderName
    model: str = ""
    #: With ``sessionId``: the sessions made afterwards start with it too.
    new_sessions: StrictBool | None = Field(None, alias="newSessions")


class ConsentParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    granted: StrictBool


class LmModel(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    vendor: str = ""
    family: str = ""
    name: str = ""


class LmModels(BaseModel):
    """The client's answer to ``rein/lm/models``."""

    model_config = ConfigDict(extra="allow")

    models: list[LmModel]
