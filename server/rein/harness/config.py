"""Harness configuration: snake_case in Python, camelCase on the wire."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = [
    "AnalyzerGateConfig",
    "CommandGateConfig",
    "DependencyGateConfig",
    "GatesConfig",
    "HarnessConfig",
    "QueueMode",
    "RuntimeGateConfig",
    "ToolExecution",
]

ToolExecution = Literal["parallel", "sequential"]
QueueMode = Literal["one-at-a-time", "all"]


class HarnessConfig(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    max_model_turns_per_run: int = Field(50, ge=1)
    max_repair_attempts: int = Field(3, ge=0)
    tool_execution: ToolExecution = "parallel"
    steering_mode: QueueMode = "all"
    follow_up_mode: QueueMode = "one-at-a-time"
    max_empty_retries: int = Field(1, ge=0)
    #: No event for this long outside tool execution aborts the run; 0 disables.
    run_idle_timeout_ms: int = Field(300_000, ge=0)
    max_tool_result_chars: int = Field(16_000, ge=200)
    max_context_tokens: int = Field(100_000, ge=1_000)
    context_window_cap: int | None = Field(None, ge=1_000)
    #: A tool running longer than this emits heartbeat events.
    tool_heartbeat_ms: int = Field(5_000, ge=10)
    #: A tool running longer than this (unless it declares its own limit) is
    #: cancelled and the model is told; 0 disables.
    tool_timeout_ms: int = Field(600_000, ge=0)

    @property
    def context_window(self) -> int:
        if self.context_window_cap is None:
            return self.max_context_tokens
        return min(self.max_context_tokens, self.context_window_cap)


class _Camel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class AnalyzerGateConfig(_Camel):
    enabled: bool = True
    #: Diagnostics at or above this severity block: "error" | "warning" |
    #: "information" | "hint".
    severity: Literal["error", "warning", "information", "hint"] = "error"
    #: Quiet period after the last diagnostics change before a verdict.
    quiet_period_ms: int = Field(150, ge=0)
    #: Bound on the wait for fresh diagnostics; past it the verdict is stale.
    max_wait_ms: int = Field(5_000, ge=100)


class DependencyGateConfig(_Camel):
    enabled: bool = True
    #: Manifest glob -> install command, run in the workspace root.
    commands: dict[str, str] = Field(default_factory=dict)
    timeout_ms: int = Field(600_000, ge=1_000)


class CommandGateConfig(_Camel):
    name: str = "custom"
    command: str
    timeout_ms: int = Field(600_000, ge=1_000)


class RuntimeGateConfig(_Camel):
    #: A one-shot command such as the test suite; empty: no runtime gate.
    command: str | None = None
    timeout_ms: int = Field(600_000, ge=1_000)


class GatesConfig(_Camel):
    analyzer: AnalyzerGateConfig = AnalyzerGateConfig()
    dependencies: DependencyGateConfig = DependencyGateConfig()
    runtime: RuntimeGateConfig = RuntimeGateConfig()
    custom: list[CommandGateConfig] = Field(default_factory=list)
