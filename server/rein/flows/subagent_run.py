"""A subagent's run inside its parent's tool call.

:func:`run_subagent` runs the child on its prompt (or the answer it waits
for) and keeps it part of the parent's call:

* **events**: every inner event reaches the client as ``subagent_activity``
  (child id + the inner event); text deltas are joined, one forwarded delta
  per interval at most (:data:`DELTA_INTERVAL_S` by default), and what is
  buffered goes out before any other event;
* **steering**: the parent's steering is the child's external source, and a
  steer that arrives while the child runs wakes the child's tools;
* **usage**: the child's tokens count in the parent's record (the turn that
  called it);
* **abort**: aborting the parent aborts the child, which closes its own
  transcript (aborted results, ``run_end``) before the cancellation goes on.

Which child runs, and what the ``task`` call answers, is
:mod:`rein.flows.subagents`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio

from rein.harness.agent import Agent, RunResult
from rein.harness.events import Event, SubagentActivity
from rein.harness.messages import UserMessage
from rein.harness.run.steering import ExternalSteeringProbe, ExternalSteeringSource, Steering
from rein.harness.tools import ToolContext

__all__ = ["DELTA_INTERVAL_S", "run_subagent"]

#: Forwarded text deltas are joined: at most one per this many seconds.
DELTA_INTERVAL_S = 0.2


class _Deltas:
    """Joins a child's text deltas: one forwarded delta per interval, and
    whatever is buffered before any other event."""

    def __init__(self, interval_s: float, clock: Callable[[], float]) -> None:
        self.interval_s = interval_s
        self.clock = clock
        self.parts: list[str] = []
        self.since = 0.0

    def add(self, delta: str) -> str | None:
        if not self.parts:
            self.since = self.clock()
        self.parts.append(delta)
        if self.clock() - self.since >= self.interval_s:
            return self.take()
        return None

    def take(self) -> str | None:
        if not self.parts:
            return None
        text, self.parts = "".join(self.parts), []
        return text


def _steering_of(parent: Steering) -> tuple[ExternalSteeringSource, ExternalSteeringProbe]:
    """The child's external source and probe: its parent's steering."""

    async def source() -> list[UserMessage]:
        return await parent.take()

    async def probe() -> bool:
        return await parent.probe()

    return source, probe


async def run_subagent(
    ctx: ToolContext,
    child: Agent,
    child_id: str,
    name: str,
    prompt: str,
    delta_interval_s: float = DELTA_INTERVAL_S,
    clock: Callable[[], float] = time.monotonic,
) -> RunResult:
    """Run ``child`` on ``prompt`` (or the answer it waits for) inside the
    tool call ``ctx``, forwarding its events, with the parent's steering as
    its external source; an abort of the parent aborts the child, whose
    transcript is closed properly before the cancellation goes on."""
    deltas = _Deltas(delta_interval_s, clock)

    def send(event: dict[str, Any]) -> None:
        ctx.emit(
            SubagentActivity(
                child_id=child_id, name=name, tool_call_id=ctx.tool_call_id, event=event
            )
        )

    def forward(event: Event) -> None:
        if event.type == "message_delta":
            if event.kind == "text":
                joined = deltas.add(event.delta)
                if joined is not None:
                    send({"type": "message_delta", "kind": "text", "delta": joined})
            return
        joined = deltas.take()
        if joined is not None:
            send({"type": "message_delta", "kind": "text", "delta": joined})
        send(event.model_dump(mode="json"))

    if ctx.steering is not None:
        child.external_steering_source, child.external_steering_probe = _steering_of(ctx.steering)
    unsubscribe = child.subscribe(forward)
    box: dict[str, RunResult] = {}
    done = anyio.Event()

    async def run() -> None:
        # Shielded: the child ends through its own abort, so it can close its
        # transcript (aborted results, run_end) before the parent unwinds.
        with anyio.CancelScope(shield=True):
            box["result"] = await child.prompt(prompt)
        # The child's tokens are the parent's too: they count in the turn
        # that called it (aborted or not).
        ctx.record.note_subagent_usage(box["result"].usage)
        done.set()

    async def wake_on_steering() -> None:
        # The parent's person sent a message: it is the child's to take at
        # its next boundary; wake its running tools now.
        await ctx.steering_arrived.wait()
        if not done.is_set():
            child.poke_steering()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            tg.start_soon(wake_on_steering)
            try:
                await done.wait()
                tg.cancel_scope.cancel()
            except anyio.get_cancelled_exc_class():
                child.abort("the parent run was aborted")
                raise
    finally:
        unsubscribe()
    return box["result"]
