"""What the eval scenarios share: workspaces, agents, flows, helpers."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from rein.config import load_config
from rein.disk.disk_workspace import DiskWorkspace
from rein.evals._registry import Outcome, Rig
from rein.evals.mutations import merged
from rein.flows.plan_act import PlanActFlow
from rein.flows.plan_tools import planner_system_prompt, toolkit_overview
from rein.harness import Agent, HarnessConfig, ToolResultMessage
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import Model, ModelOptions, UserChannel
from rein.harness.tools import ToolEnvironment
from rein.headless.run import TerminalUserChannel
from rein.providers.replay import ReplayModel
from rein.tools.registry import default_tools

__all__ = [
    "APP",
    "Events",
    "agent",
    "build_agent",
    "call",
    "complete",
    "flow",
    "flow_outcome",
    "headless",
    "last_tool",
    "outcome",
    "plan",
    "prompt_unanswered",
    "script_turns",
    "when",
    "workspace",
]

APP = 'def greet(name: str) -> str:\n    return f"hello {name}"\n'


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


class Events(list[Any]):
    def __call__(self, event: Any) -> None:
        self.append(event)


def when(agent_: Agent, predicate: Any, action: Any) -> None:
    """Run ``action`` once, synchronously, on the first event matching
    ``predicate`` (no polling, no sleeps)."""
    fired = False

    def listener(event: Any) -> None:
        nonlocal fired
        if not fired and predicate(event):
            fired = True
            action()

    agent_.subscribe(listener)


def workspace(rig: Rig, files: dict[str, str] | None = None) -> ToolEnvironment:
    for rel, text in (files or {"app.py": APP}).items():
        path = rig.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    disk = DiskWorkspace(rig.root)
    return ToolEnvironment(
        workspace=TrackedWorkspace(disk, MutationLog()),
        settings=load_config({"approval": {"command": "allow"}}).tool_settings(),
    )


def build_agent(
    rig: Rig, model: Model, *, config: dict[str, Any] | None = None, **kw: Any
) -> Agent:
    """An Agent with the rig's switches applied: ``rig.harness`` over
    ``config``, then every ``rig.agent_setup``."""
    a = Agent(model, config=HarnessConfig(**{**(config or {}), **rig.harness}), **kw)
    for setup in rig.agent_setup:
        setup(a)
    return a


def agent(
    rig: Rig, turns: list[dict[str, Any]], *, files: dict[str, str] | None = None, **config: Any
) -> tuple[Agent, ReplayModel, Events]:
    env = workspace(rig, files)
    model = ReplayModel(turns)
    tools = default_tools(env.settings)
    a = build_agent(rig, model, tools=tools, env=env, config=config)
    events = Events()
    a.subscribe(events)
    return a, model, events


def script_turns(*models: ReplayModel) -> int:
    """The turns the scripts hold in all (see Outcome.script_turns)."""
    return sum(len(m.script.turns) for m in models)


def outcome(result: Any, model: ReplayModel, events: Events, **extra: Any) -> Outcome:
    return Outcome(
        status=result.status,
        model_calls=len(model.requests),
        events=list(events),
        script_turns=script_turns(model),
        **extra,
    )


def last_tool(agent_: Agent) -> ToolResultMessage:
    return [m for m in agent_.messages if isinstance(m, ToolResultMessage)][-1]


# -------------------------------------------------------------------- gates


def headless(
    rig: Rig,
    model: ReplayModel,
    config: dict[str, Any] | None = None,
    *,
    mode: Literal["agent", "plan"] = "agent",
    user: UserChannel | None = None,
    stored: bool = False,
    resume: str | None = None,
) -> Any:
    """A HeadlessSession (real analyzers, gates from the configuration) on the
    rig's folder; ``rig.config`` is merged last into ``config``. ``stored``:
    sessions go to a SQLite store in the folder (``resume`` one of them)."""
    from rein.hosting.headless import HeadlessSession

    if not (rig.root / "app.py").exists():
        (rig.root / "app.py").write_text(APP)
    settings = load_config(merged(config or {}, rig.config))
    return HeadlessSession(
        rig.root,
        model,
        settings,
        mode=mode,
        watch=False,
        user=user,
        storage=rig.root / ".rein-store" if stored or resume else None,
        resume=resume,
    )


class Unanswered(NamedTuple):
    """A stored session's prompt that ended waiting on the person."""

    result: Any
    session_id: str
    waiting_for: Any


async def prompt_unanswered(
    rig: Rig,
    model: ReplayModel,
    events: Events,
    prompt: str,
    *,
    mode: Literal["agent", "plan"] = "agent",
) -> Unanswered:
    """``prompt`` in a stored session (``events`` subscribed) whose person
    cannot answer (``rein run`` in CI): its result, the session's id and
    what the agent waits for when it ends."""
    user = TerminalUserChannel(interactive=False)
    async with headless(rig, model, mode=mode, user=user, stored=True) as s:
        s.subscribe(events)
        result = await s.prompt(prompt)
        return Unanswered(result, s.session.id, s.agent.state.waiting_for)


# ----------------------------------------------------------------- plan-act


def plan(*steps: tuple[str, str]) -> dict[str, Any]:
    return call("submit_plan", steps=[{"id": i, "description": d} for i, d in steps])


def complete(step: str, success: bool = True, summary: str = "done") -> dict[str, Any]:
    return call("complete_step", step_id=step, success=success, summary=summary)


def flow(
    rig: Rig, planner_turns: list[dict[str, Any]], executor_turns: list[dict[str, Any]]
) -> tuple[PlanActFlow, ReplayModel, ReplayModel, Events]:
    env = workspace(rig)
    tools = default_tools(env.settings)
    pm, em = ReplayModel(planner_turns), ReplayModel(executor_turns)
    planner = build_agent(
        rig,
        pm,
        system_prompt=planner_system_prompt(toolkit_overview(tools)),
        options=ModelOptions(tool_choice="required"),
    )
    executor = build_agent(rig, em, tools=tools, env=env)
    events = Events()
    planner.subscribe(events)
    executor.subscribe(events)
    return PlanActFlow(planner, executor, events, **rig.flow_options), pm, em, events


def flow_outcome(
    result: Any, pm: ReplayModel, em: ReplayModel, events: Events, **extra: Any
) -> Outcome:
    return Outcome(
        result.status,
        len(pm.requests) + len(em.requests),
        list(events),
        script_turns=script_turns(pm, em),
        **extra,
    )
