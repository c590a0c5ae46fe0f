"""Subagents: a child Agent run inside a tool call.

The child has the same harness, a subset of the tools, its own context and
turn budget, and its own memory in the session. Its events reach the client
as ``subagent_activity`` events (child id + the inner event), so a client can
render one box per child. The child's usage counts in the parent's turn that
called it (``turn_end.usage``) and so in the parent's run usage. Aborting the
parent aborts the child; a child that runs out of budget returns an error
result and never hangs the parent.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

import anyio

from rein.harness.agent import Agent, RunResult
from rein.harness.config import HarnessConfig
from rein.harness.events import Event, SubagentActivity
from rein.harness.ports import Model, ModelOptions, Persistence
from rein.harness.tools import ToolContext, ToolEnvironment, ToolRegistry

__all__ = ["SubagentSpawner", "run_subagent"]

#: Inner events not forwarded (their content arrives in message_end).
_NOT_FORWARDED = frozenset({"message_delta"})


class SubagentSpawner:
    """Makes the ``task`` tool's children (``env.subagents``): they share the
    parent's model, environment and gates-free harness (the parent's gates
    validate their changes, which count in the parent's run record);
    ``persistence_for(child_id)`` gives each its own memory
    (``<child_id>:memory``)."""

    def __init__(
        self,
        model: Model,
        tools: ToolRegistry,
        env: ToolEnvironment,
        *,
        config: HarnessConfig | None = None,
        system_prompt: str = "",
        default_tools: Sequence[str] = (),
        persistence_for: Callable[[str], Persistence | None] | None = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.env = env
        self.config = config or HarnessConfig()
        self.system_prompt = system_prompt
        self.default_tools = list(default_tools)
        self.persistence_for = persistence_for

    def __call__(self, child_id: str, tools: Sequence[str] | None, max_turns: int) -> Agent:
        names = [n for n in (tools or self.default_tools or self.tools.names()) if n != "task"]
        return Agent(
            self.model,
            tools=self.tools.subset(names),
            config=self.config.model_copy(update={"max_model_turns_per_run": max_turns}),
            system_prompt=self.system_prompt,
            options=ModelOptions(),
            env=self.env,
            persistence=self.persistence_for(child_id) if self.persistence_for else None,
        )


def new_child_id() -> str:
    return "task_" + uuid.uuid4().hex[:8]


#: The steer a running subagent gets when its parent's person sends a message.
WRAP_UP = (
    "Wrap up now: the person sent a new message to the agent that started you. Stop "
    "starting new work, and report what you found and did so far."
)


async def run_subagent(
    ctx: ToolContext, child: Agent, child_id: str, name: str, prompt: str
) -> RunResult:
    """Run ``child`` on ``prompt`` inside the tool call ``ctx``, forwarding
    its events; an abort of the parent aborts the child, whose transcript is
    closed properly before the cancellation goes on."""

    def forward(event: Event) -> None:
        if event.type in _NOT_FORWARDED:
            return
        ctx.emit(
            SubagentActivity(
                child_id=child_id,
                name=name,
                tool_call_id=ctx.tool_call_id,
                event=event.model_dump(mode="json"),
            )
        )

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

    async def yield_to_steering() -> None:
        # The parent's person sent a message: the child wraps up softly (a
        # steer of its own), so the parent gets its report and the message sooner.
        await ctx.steering_arrived.wait()
        if not done.is_set():
            child.steer(WRAP_UP)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            tg.start_soon(yield_to_steering)
            try:
                await done.wait()
                tg.cancel_scope.cancel()
            except anyio.get_cancelled_exc_class():
                child.abort("the parent run was aborted")
                raise
    finally:
        unsubscribe()
    return box["result"]
