"""Flow builders: an agent, or a plan-act flow, on scripted models, with an
event log subscribed, so a test lists its turns and asserts instead of
assembling the flow itself.

A script is a list of replay turns (docs/replay.md) or any Model (a
``FunctionModel``, a ``PausingModel``); a list becomes a ``ReplayModel``,
whose ``requests`` say what the model was asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from rein.flows.plan_act import PlanActFlow, PlanSnapshot
from rein.flows.plan_tools import planner_system_prompt, toolkit_overview
from rein.harness import Agent, HarnessConfig
from rein.harness.gating.gates import GatePipeline
from rein.harness.messages import Message
from rein.harness.ports import Model, ModelOptions, Persistence
from rein.harness.tools import Tool, ToolEnvironment
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog
from tests.fakes.tools import EchoTool

__all__ = ["PlanActSetup", "build_agent_flow", "build_plan_act_flow"]

Script = list[dict[str, Any]] | Model


def _model(script: Script, name: str | None = None) -> Any:
    if isinstance(script, list):
        return ReplayModel(script, name=name) if name else ReplayModel(script)
    return script


def build_agent_flow(
    script: Script,
    *tools: Tool[Any],
    env: ToolEnvironment | None = None,
    gates: GatePipeline | None = None,
    persistence: Persistence | None = None,
    messages: Sequence[Message] = (),
    **config: Any,
) -> tuple[Agent, EventLog]:
    """An Agent on ``script`` with ``tools`` (an ``EchoTool`` when none),
    ``config`` as its HarnessConfig fields, and an EventLog subscribed."""
    agent = Agent(
        _model(script),
        tools=list(tools) or [EchoTool()],
        config=HarnessConfig(**config),
        env=env or ToolEnvironment(),
        gates=gates,
        persistence=persistence,
        messages=messages,
    )
    log = EventLog()
    agent.subscribe(log)
    return agent, log


class PlanActSetup(NamedTuple):
    """What :func:`build_plan_act_flow` builds; it unpacks as
    ``flow, planner, executor, log, saved``."""

    flow: PlanActFlow
    #: The planner's model (a ReplayModel named "planner" for a script).
    planner: Any
    #: The executor's model (a ReplayModel named "executor" for a script).
    executor: Any
    #: Both agents' events and the flow's.
    log: EventLog
    #: Every snapshot the flow saved, copied through its JSON form.
    saved: list[PlanSnapshot]


def build_plan_act_flow(
    planner_script: Script,
    executor_script: Script,
    *,
    executor_tools: Sequence[Tool[Any]] | None = None,
    gates: Any = None,
    env: ToolEnvironment | None = None,
    snapshot: PlanSnapshot | None = None,
    persistence: Persistence | None = None,
    messages: Sequence[Message] = (),
    planner_options: ModelOptions | None = None,
) -> PlanActSetup:
    """A PlanActFlow as the sessions build it: the planner with its system
    prompt over the executor's tools (an ``EchoTool`` when none) and
    ``tool_choice`` required (or ``planner_options``), the executor on
    ``env``, ``persistence`` and ``messages``; an EventLog on both and
    the flow; every saved snapshot kept."""
    tools = list(executor_tools or [EchoTool()])
    planner_model = _model(planner_script, "planner")
    executor_model = _model(executor_script, "executor")
    planner = Agent(
        planner_model,
        system_prompt=planner_system_prompt(toolkit_overview(tools)),
        options=planner_options or ModelOptions(tool_choice="required"),
    )
    executor = Agent(
        executor_model,
        tools=tools,
        env=env or ToolEnvironment(),
        persistence=persistence,
        messages=messages,
    )
    log = EventLog()
    planner.subscribe(log)
    executor.subscribe(log)
    saved: list[PlanSnapshot] = []

    async def save(snap: PlanSnapshot) -> None:
        saved.append(PlanSnapshot.from_json(snap.to_json()))

    flow = PlanActFlow(planner, executor, log, gates=gates, save_state=save, snapshot=snapshot)
    return PlanActSetup(flow, planner_model, executor_model, log, saved)
