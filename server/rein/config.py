"""The whole ``rein`` configuration section, typed.

camelCase on the wire (LSP ``workspace/configuration``, initializationOptions,
a JSON/YAML file), snake_case in Python. :func:`load_config` validates and
names the bad key in its error; callers that must go on (the language
server) keep the last good configuration.

The ``approval`` and ``tools`` sections are the tools' own models
(:mod:`rein.tools.settings`, where their defaults live);
:meth:`ReinConfig.tool_settings` turns the validated configuration into the
frozen :class:`~rein.tools.settings.ToolSettings` a session hands its tools.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from rein.harness.config import GatesConfig, HarnessConfig
from rein.harness.errors import ConfigError
from rein.providers.config import ModelConfig
from rein.tools.settings import ApprovalSettings, ToolOptions, ToolSettings

__all__ = ["ReinConfig", "SessionLimits", "load_config"]


class SessionLimits(BaseModel):
    """How many sessions the language server keeps in memory, and for how
    long an idle one stays there. An evicted session stays in the store and
    is loaded again, transcript and all, by the next request that names it."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    #: A session that ran and has been idle this long leaves memory (0: never).
    idle_evict_ms: int = Field(600_000, ge=0)
    #: At most this many idle sessions in memory; the least recently used go first.
    max_in_memory: int = Field(32, ge=1)


class ReinConfig(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    model: ModelConfig = Field(default_factory=ModelConfig)
    harness: HarnessConfig = HarnessConfig()
    gates: GatesConfig = GatesConfig()
    approval: ApprovalSettings = ApprovalSettings()
    tools: ToolOptions = ToolOptions()
    auto_repair: Literal["off", "onSave"] = "off"
    sessions: SessionLimits = SessionLimits()
    #: Where the session database lives (default: the user data dir).
    storage_path: str | None = None

    def tool_settings(self) -> ToolSettings:
        """The tools' settings of a session with this configuration (built
        from sections already validated here; frozen)."""
        return ToolSettings(
            approval=self.approval,
            tools=self.tools,
            max_tool_result_chars=self.harness.max_tool_result_chars,
        )


def _key_of(error: Any) -> str:
    return ".".join(str(p) for p in error["loc"]) or "(root)"


def load_config(data: Any, source: str = "configuration") -> ReinConfig:
    """Validate a ``rein`` section; ConfigError names the first bad key."""
    if data is None:
        data = {}
    try:
        return ReinConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        key = _key_of(first)
        raise ConfigError(f"invalid {source}: rein.{key}: {first['msg']}", key) from exc
