"""The Agent's accessors under the reference API's names: the four hooks
one by one (``agent.before_tool_call = fn``), ``stream_function`` (Rein's
:attr:`~rein.harness.agent.Agent.model`) and ``tool_execution`` (the
config's ``harness.toolExecution``). Setters replace the Agent's ``hooks``
or ``config`` (never mutate a shared one); the next turn uses the change."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from rein.harness.config import HarnessConfig, QueueMode, ToolExecution
from rein.harness.hooks import (
    AfterToolCall,
    BeforeToolCall,
    Hooks,
    PrepareNextTurn,
    TransformContext,
)
from rein.harness.ports import Model

__all__ = ["ReferenceAccessors"]


class ReferenceAccessors:
    """Mixed into :class:`~rein.harness.agent.Agent`."""

    model: Model
    hooks: Hooks
    config: HarnessConfig

    @property
    def stream_function(self) -> Model:
        """The reference's name for :attr:`model`: the provider adapter every
        model call streams from (settable; the next turn uses the new one)."""
        return self.model

    @stream_function.setter
    def stream_function(self, model: Model) -> None:
        self.model = model

    @property
    def tool_execution(self) -> ToolExecution:
        """ "parallel" or "sequential" (``harness.toolExecution``); setting it
        replaces the config, and the next batch of tool calls uses it."""
        return self.config.tool_execution

    @tool_execution.setter
    def tool_execution(self, mode: ToolExecution) -> None:
        self.config = self.config.model_copy(update={"tool_execution": mode})

    @property
    def steering_mode(self) -> QueueMode:
        """How many queued steers a boundary delivers (``harness.steeringMode``)."""
        return self.config.steering_mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self.config = self.config.model_copy(update={"steering_mode": mode})

    @property
    def follow_up_mode(self) -> QueueMode:
        """How many queued follow-ups start a run (``harness.followUpMode``)."""
        return self.config.follow_up_mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self.config = self.config.model_copy(update={"follow_up_mode": mode})

    @property
    def max_empty_retries(self) -> int:
        """Empty replies retried before the turn is accepted (``harness.maxEmptyRetries``)."""
        return self.config.max_empty_retries

    @property
    def run_idle_timeout(self) -> timedelta:
        """The idle watchdog's limit (``harness.runIdleTimeoutMs``; zero: off)."""
        return timedelta(milliseconds=self.config.run_idle_timeout_ms)

    @property
    def before_tool_call(self) -> BeforeToolCall | None:
        return self.hooks.before_tool_call

    @before_tool_call.setter
    def before_tool_call(self, fn: BeforeToolCall | None) -> None:
        self.hooks = replace(self.hooks, before_tool_call=fn)

    @property
    def after_tool_call(self) -> AfterToolCall | None:
        return self.hooks.after_tool_call

    @after_tool_call.setter
    def after_tool_call(self, fn: AfterToolCall | None) -> None:
        self.hooks = replace(self.hooks, after_tool_call=fn)

    @property
    def transform_context(self) -> TransformContext | None:
        return self.hooks.transform_context

    @transform_context.setter
    def transform_context(self, fn: TransformContext | None) -> None:
        self.hooks = replace(self.hooks, transform_context=fn)

    @property
    def prepare_next_turn(self) -> PrepareNextTurn | None:
        return self.hooks.prepare_next_turn

    @prepare_next_turn.setter
    def prepare_next_turn(self, fn: PrepareNextTurn | None) -> None:
        self.hooks = replace(self.hooks, prepare_next_turn=fn)
