"""Subagents: a child Agent run inside a tool call, with the parent's parity.

The child has the same harness, a subset of the tools, its own context and
turn budget, and its own memory in the session. What it does stays part of
its parent's run (docs/flows.md lists the invariants and their tests):

* **changes**: the child runs inside the parent's tool call, so its changes
  land in the parent's run record too (origin ``"subagent"``) and the
  parent's gates validate them at the parent's final check;
* **questions**: a child's ask_user that got no answer ends the child
  "waiting"; the ``task`` result says so and the parent run waits too. The
  person's answer resumes the child (:meth:`SubagentSpawner.resumer`), then
  the parent goes on with the child's result. The waiting child is in the
  session's state (:meth:`SubagentSpawner.state`), so a new server resumes it;
* **steering**: the parent's steering is the child's external source, so a
  steer sent while a child runs is delivered to the child (its
  ``steering_applied`` reaches the client inside ``subagent_activity``);
* **hooks**: the parent's tool-call hooks see the child's calls, with
  :func:`~rein.harness.hooks.current_caller` naming the child and its depth;
* **depth**: children may start children while ``harness.subagentMaxDepth``
  allows; beyond it ``task`` is not offered, and refused if called;
* **events**: every inner event reaches the client as ``subagent_activity``
  (child id + the inner event); text deltas are joined, one forwarded delta
  per :attr:`SubagentSpawner.delta_interval_s` at most;
* **usage**: the child's tokens count in the parent's turn that called it
  (``turn_end.usage``) and so in the parent's run usage.

Aborting the parent aborts the child; a child that runs out of budget
returns an error result and never hangs the parent. The child's run inside
the call (its events, steering, usage and abort) is
:mod:`rein.flows.subagent_run`'s; this module makes the children, answers
the ``task`` call and keeps the waiting ones.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from pydantic import BaseModel, ConfigDict

from rein.flows.subagent_kinds import SubagentKind, kind_prompt, kind_tools
from rein.flows.subagent_run import DELTA_INTERVAL_S, run_subagent
from rein.harness.agent import Agent, RunResult
from rein.harness.config import HarnessConfig
from rein.harness.errors import ToolError
from rein.harness.hooks import HookCaller, Hooks, hooks_for_child
from rein.harness.messages import AssistantMessage, Message
from rein.harness.ports import Model, ModelOptions, Persistence
from rein.harness.run.run_types import ResumeCall
from rein.harness.tools import ToolContext, ToolEnvironment, ToolRegistry, ToolResult

__all__ = ["PendingChild", "SubagentSpawner", "new_child_id", "run_task"]

#: The tool that starts subagents.
TASK = "task"


class PendingChild(BaseModel):
    """A child waiting for the person, as the session's state keeps it."""

    model_config = ConfigDict(frozen=True)

    #: The parent's ``task`` call that waits with it.
    tool_call_id: str
    child_id: str
    name: str
    tools: list[str] | None = None
    max_turns: int
    #: The question the person is asked.
    question: str
    #: The child's own waiting call (its ask_user, or its own ``task``).
    waiting_for: str
    #: The child's own waiting child, when the question is a grandchild's.
    inner: PendingChild | None = None
    #: The child's kind (a custom agent's name), when it has one.
    agent: str | None = None


class SubagentSpawner:
    """Makes the ``task`` tool's children (``env.subagents``): they share the
    parent's model and environment (the model is read when a child starts:
    with ``model_source``, the parent agent's current model, so a child
    started after a model change uses the new one while a running child
    keeps its own), run gates-free (the parent's gates
    validate their changes, which count in the parent's run record), and
    ``persistence_for(child_id)`` gives each its own memory
    (``<child_id>:memory``). ``depth`` is that of the agent whose ``task``
    calls this spawner serves (0: the session's agent); ``system_prompt`` is
    a text, or a function of the child's tools that makes its prompt."""

    #: Forwarded text deltas are joined: at most one per this many seconds.
    delta_interval_s: float = DELTA_INTERVAL_S

    def __init__(
        self,
        model: Model,
        tools: ToolRegistry,
        env: ToolEnvironment,
        *,
        config: HarnessConfig | None = None,
        system_prompt: str | Callable[[ToolRegistry], str] = "",
        default_tools: Sequence[str] = (),
        persistence_for: Callable[[str], Persistence | None] | None = None,
        depth: int = 0,
        clock: Callable[[], float] = time.monotonic,
        model_source: Callable[[], Model] | None = None,
    ) -> None:
        self._model = model
        #: Where a new child's model comes from (None: always ``model``).
        self.model_source = model_source
        self.tools = tools
        self.env = env
        self.config = config or HarnessConfig()
        self.system_prompt = system_prompt
        self.default_tools = list(default_tools)
        self.persistence_for = persistence_for
        self.depth = depth
        self.clock = clock
        #: Children waiting for the person, by the ``task`` call waiting on them.
        self.waiting: dict[str, PendingChild] = {}
        #: The transcripts of restored waiting children (after a restart).
        self.transcripts: dict[str, list[Message]] = {}
        self._live: dict[str, Agent] = {}
        #: The named subagent types ``task(agent=...)`` starts.
        self.kinds: dict[str, SubagentKind] = {}

    @property
    def model(self) -> Model:
        """The model of the next child: the source's current one, if any."""
        return self.model_source() if self.model_source is not None else self._model

    @property
    def max_depth(self) -> int:
        return self.config.subagent_max_depth

    @property
    def allowed(self) -> bool:
        """May the agent this spawner serves start a child?"""
        return self.depth < self.max_depth

    def nested(
        self, model: Model | None = None, tools: ToolRegistry | None = None
    ) -> SubagentSpawner:
        """The spawner of a child's own ``task`` calls, one level deeper;
        with ``model`` (the child's routed model) its children run on it too;
        with ``tools`` (the child's own), its children get only those: a
        child never gives more than it has."""
        inner = SubagentSpawner(
            model or self._model,
            self.tools if tools is None else tools,
            self.env,
            config=self.config,
            system_prompt=self.system_prompt,
            default_tools=self.default_tools,
            persistence_for=self.persistence_for,
            depth=self.depth + 1,
            clock=self.clock,
            model_source=self.model_source if model is None else None,
        )
        inner.delta_interval_s = self.delta_interval_s
        inner.kinds = self.kinds
        inner.transcripts = self.transcripts
        return inner

    def tool_names(self, tools: Sequence[str] | None) -> list[str]:
        """The child's tools: those asked for, else the defaults (else all);
        ``task`` only while a child of the child would be within the depth
        (and by default then)."""
        names = list(tools or self.default_tools or self.tools.names())
        deeper = self.depth + 1 < self.max_depth and TASK in self.tools.names()
        names = [n for n in names if n != TASK]
        if deeper and (tools is None or TASK in tools):
            names.append(TASK)
        return names

    def kind_names(self, kind: SubagentKind) -> list[str]:
        """A kind's child's tools: its own among this spawner's (``task``
        only within the depth, as for any child)."""
        listed = kind_tools(kind, self.tools.names())
        names = [n for n in listed if n != TASK]
        if TASK in listed and self.depth + 1 < self.max_depth:
            names.append(TASK)
        return names

    def spawn(
        self,
        child_id: str,
        tools: Sequence[str] | None,
        max_turns: int,
        *,
        name: str = "",
        hooks: Hooks | None = None,
        messages: Sequence[Message] = (),
        waiting_for: str | None = None,
        model: Model | None = None,
        kind: SubagentKind | None = None,
    ) -> Agent:
        """A child on ``model`` (the parent turn's routed model), else on
        :attr:`model`; of ``kind``, with its tools, instructions and model."""
        if kind is not None and kind.model is not None:
            model = kind.model
        names = self.tool_names(tools) if kind is None else self.kind_names(kind)
        offered = self.tools.subset(names)
        child_env = replace(self.env, subagents=self.nested(model, offered))
        caller = HookCaller(subagent_id=child_id, depth=self.depth + 1, subagent_name=name)
        system = self.system_prompt
        # A callable builds the prompt from the tools this child is offered.
        prompt = system if isinstance(system, str) else system(offered)
        child = Agent(
            model or self.model,
            tools=offered,
            config=self.config.model_copy(update={"max_model_turns_per_run": max_turns}),
            system_prompt=prompt if kind is None else kind_prompt(prompt, kind),
            options=ModelOptions(),
            env=child_env,
            hooks=hooks_for_child(hooks, caller) if hooks is not None else None,
            persistence=self.persistence_for(child_id) if self.persistence_for else None,
            messages=messages,
            waiting_for=waiting_for,
        )
        self._live[child_id] = child
        return child

    def __call__(self, child_id: str, tools: Sequence[str] | None, max_turns: int) -> Agent:
        return self.spawn(child_id, tools, max_turns)

    # ------------------------------------------------------ waiting children

    def resumer(self, tool_call_id: str, answer: str) -> ResumeCall | None:
        """What resumes the child the ``task`` call ``tool_call_id`` waits
        on with the person's ``answer`` (None: no child waits there)."""
        pending = self.waiting.get(tool_call_id)
        if pending is None:
            return None
        return ResumeCall(tool_call_id, TASK, partial(self._resume, pending, answer))

    async def _resume(self, pending: PendingChild, answer: str, ctx: ToolContext) -> ToolResult:
        self.waiting.pop(pending.tool_call_id, None)
        kind = self.kinds.get(pending.agent) if pending.agent else None
        if pending.agent and kind is None:
            raise ToolError(
                f"The subagent ({pending.name}) was the agent {pending.agent!r}, which is no "
                "longer defined (its file was removed, renamed or made invalid, or "
                "setup.agents is off): it cannot be resumed; start a new task."
            )
        child = self._live.get(pending.child_id)
        if child is None:
            child = self.spawn(
                pending.child_id,
                pending.tools,
                pending.max_turns,
                name=pending.name,
                hooks=ctx.hooks,
                messages=self.transcripts.pop(pending.child_id, []),
                waiting_for=pending.waiting_for,
                kind=kind,
            )
            if pending.inner is not None:
                child.env.subagents.restore(pending.inner)
        result = await self.run(ctx, child, pending.child_id, pending.name, answer)
        return self.outcome(ctx, child, pending.child_id, pending.name, result, pending, kind=kind)

    async def run(
        self, ctx: ToolContext, child: Agent, child_id: str, name: str, prompt: str
    ) -> RunResult:
        """:func:`run_subagent` with this spawner's delta interval and clock."""
        return await run_subagent(
            ctx, child, child_id, name, prompt, self.delta_interval_s, self.clock
        )

    def outcome(
        self,
        ctx: ToolContext,
        child: Agent,
        child_id: str,
        name: str,
        result: RunResult,
        origin: PendingChild | None = None,
        tools: Sequence[str] | None = None,
        max_turns: int = 20,
        kind: SubagentKind | None = None,
    ) -> ToolResult:
        """The ``task`` call's result for how the child's run ended; a
        waiting child is kept until the answer resumes it."""
        if result.status != "waiting" or child.waiting_for is None:
            self._live.pop(child_id, None)
            done = report(child_id, name, result)
            if kind is not None and kind.note:
                done.content = f"({kind.note})\n\n{done.content}"
            return done
        # The child's own waiting child, when its spawner keeps one (a plain
        # factory keeps none).
        spawner = child.env.subagents
        inner = (
            spawner.waiting.get(child.waiting_for) if isinstance(spawner, SubagentSpawner) else None
        )
        question = inner.question if inner is not None else _question(child, child.waiting_for)
        self.waiting[ctx.tool_call_id] = PendingChild(
            tool_call_id=ctx.tool_call_id,
            child_id=child_id,
            name=name,
            tools=origin.tools if origin else list(tools) if tools is not None else None,
            max_turns=origin.max_turns if origin else max_turns,
            question=question,
            waiting_for=child.waiting_for,
            inner=inner,
            agent=origin.agent if origin else kind.name if kind else None,
        )
        return ToolResult(
            f"The subagent ({name}) asked the person: {question}\n"
            "It waits for the answer; the answer will resume it.",
            details={
                "child_id": child_id,
                "status": result.status,
                "turns": result.turns,
                "no_answer": True,
                "question": question,
                "subagent_waiting": True,
            },
        )

    def state(self, tool_call_id: str | None) -> dict[str, Any] | None:
        """The waiting child of ``tool_call_id`` as JSON for the session's state."""
        pending = self.waiting.get(tool_call_id) if tool_call_id else None
        return pending.model_dump(mode="json") if pending is not None else None

    def restore(self, pending: PendingChild) -> None:
        """A waiting child from the session's state (its transcript, and
        those of its own waiting children, in :attr:`transcripts`)."""
        self.waiting[pending.tool_call_id] = pending


def _question(child: Agent, call_id: str) -> str:
    for message in reversed(child.messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.id == call_id:
                    return str(call.arguments.get("question", ""))
    return ""


def new_child_id() -> str:
    return "task_" + uuid.uuid4().hex[:8]


async def run_task(
    ctx: ToolContext,
    name: str,
    prompt: str,
    tools: Sequence[str] | None,
    max_turns: int,
    agent: str | None = None,
) -> ToolResult:
    """The ``task`` tool: start a child (of the kind ``agent`` names) on
    ``prompt`` and report how it ended."""
    spawner = ctx.env.subagents
    if spawner is None:
        raise ToolError("Subagents are not available in this session; do the work yourself.")
    if isinstance(spawner, SubagentSpawner) and not spawner.allowed:
        raise ToolError(
            f"Subagents nest at most {spawner.max_depth} level(s) deep "
            "(harness.subagentMaxDepth): do this subtask yourself."
        )
    child_id = new_child_id()
    if not isinstance(spawner, SubagentSpawner):
        # A plain factory (child_id, tools, max_turns) -> Agent: no resume.
        if agent is not None:
            raise ToolError(
                f"Custom agents are not available here: no agent {agent!r}; call task "
                "without agent."
            )
        child = spawner(child_id, tools, max_turns)
        return report(child_id, name, await run_subagent(ctx, child, child_id, name, prompt))
    kind = None
    if agent is not None:
        kind = spawner.kinds.get(agent)
        if kind is None:
            known = ", ".join(spawner.kinds) or "none"
            raise ToolError(f"no agent named {agent!r}; the agents are: {known}")
    # A turn ``prepare_next_turn`` routed to another model runs its child there.
    child = spawner.spawn(
        child_id, tools, max_turns, name=name, hooks=ctx.hooks, model=ctx.model, kind=kind
    )
    result = await spawner.run(ctx, child, child_id, name, prompt)
    return spawner.outcome(
        ctx, child, child_id, name, result, tools=tools, max_turns=max_turns, kind=kind
    )


def report(child_id: str, name: str, result: RunResult) -> ToolResult:
    """The ``task`` result of a child that completed or did not finish."""
    details = {"child_id": child_id, "status": result.status, "turns": result.turns}
    if result.status == "completed":
        return ToolResult(result.text or "(the subagent gave no answer)", details=details)
    return ToolResult(
        f"The subagent ({name}) did not finish: {result.error or result.status}."
        + (f"\nIts last answer: {result.text}" if result.text else ""),
        is_error=True,
        details=details,
    )
