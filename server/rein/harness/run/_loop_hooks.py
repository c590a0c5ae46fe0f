"""What a run hears from outside at its boundaries: the embedder's hooks
(``on_user_prompt`` before the run, ``prepare_next_turn`` before each
request, ``on_stop`` when it would complete) and the steering messages
delivered between turns."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from rein.harness.calls.tool_calls import ToolExecutor
from rein.harness.config import HarnessConfig
from rein.harness.events import Event, SteeringApplied
from rein.harness.hooks import PromptVerdict, StopInfo, TurnInfo, TurnOverrides, call_hook
from rein.harness.messages import Message, UserMessage
from rein.harness.run.run_types import LoopContext

__all__ = ["RunHooks"]

_NO_OVERRIDES = TurnOverrides()
_NO_VERDICT = PromptVerdict()


class RunHooks:
    """Mixed into the loop's run state (:mod:`rein.harness.run.loop`)."""

    ctx: LoopContext
    config: HarnessConfig
    turn: int
    last_text: str
    tools: ToolExecutor
    stop_continuations: int
    emit: Callable[[Event], None]
    append_with_events: Callable[[Message], None]

    async def prompt_verdict(self, prompt: str | None) -> PromptVerdict:
        """What ``on_user_prompt`` says about the run's prompt (none: no verdict)."""
        hook = self.ctx.hooks.on_user_prompt
        if hook is None or prompt is None:
            return _NO_VERDICT
        verdict = await call_hook(self.emit, "on_user_prompt", hook, prompt)
        return verdict if isinstance(verdict, PromptVerdict) else _NO_VERDICT

    async def kept_going(self) -> bool:
        """``on_stop`` keeps a run that would complete going: its text is the
        next user message. False: the run completes."""
        hook = self.ctx.hooks.on_stop
        if hook is None:
            return False
        info = StopInfo(self.ctx.run_id, self.last_text, self.stop_continuations)
        reason = await call_hook(self.emit, "on_stop", hook, info)
        if not isinstance(reason, str) or not reason.strip():
            return False
        self.stop_continuations += 1
        self.append_with_events(UserMessage(content=reason, origin="hook"))
        return True

    async def turn_overrides(self) -> TurnOverrides:
        """What ``prepare_next_turn`` changes for this turn's request (the
        model, its options, the request's messages)."""
        ctx = self.ctx
        if ctx.hooks.prepare_next_turn is not None:
            overrides = await call_hook(
                self.emit,
                "prepare_next_turn",
                ctx.hooks.prepare_next_turn,
                TurnInfo(ctx.run_id, self.turn, ctx.messages),
            )
            if isinstance(overrides, TurnOverrides):
                return overrides
        return _NO_OVERRIDES

    async def poll_external_steering(self) -> None:
        """For the whole run, one task: during tool phases, ask the external
        probe on a slow timer; mail waiting sets the arrival signal
        (delivery stays at the boundary)."""
        steering = self.ctx.steering
        interval = self.config.external_steering_probe_ms / 1000.0
        while True:
            await anyio.sleep(interval)
            if self.tools.running and not steering.signal.is_set() and await steering.probe():
                steering.signal.set()

    async def apply_steering(self) -> None:
        steering = await self.ctx.steering.take()
        if steering:
            for message in steering:
                self.append_with_events(message)
            late = self.ctx.steering.is_late(steering)
            self.emit(SteeringApplied(texts=[m.content for m in steering], late=late))
