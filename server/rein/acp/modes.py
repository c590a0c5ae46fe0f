"""Modes and the model as ACP offers them: the ``modes`` state and the
``configOptions`` of a session (a mode select and a model select), and the
model choice applied through the Agent API's ``prepare_next_turn`` hook
(from the next model turn on, no restart)."""

from __future__ import annotations

import inspect
from dataclasses import replace

from acp.schema import (
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from rein.harness import Agent
from rein.harness.hooks import TurnInfo, TurnOverrides
from rein.harness.ports import Model
from rein.session import Session

__all__ = ["MODES", "MODE_IDS", "config_options", "mode_state", "set_model"]

#: The modes, as a client lists them.
MODES: tuple[SessionMode, ...] = (
    SessionMode(
        id="agent",
        name="Agent",
        description="Reads, edits and runs commands; checks its edits with the gates and repairs",
    ),
    SessionMode(
        id="plan",
        name="Plan",
        description="Plans the task in steps first, then carries them out one by one",
    ),
    SessionMode(
        id="explain",
        name="Explain",
        description="Reads and answers; changes nothing",
    ),
)
MODE_IDS = frozenset(m.id for m in MODES)


def mode_state(current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current, available_modes=list(MODES))


def config_options(mode: str, model: str, configured: str) -> list[SessionConfigOptionSelect]:
    """The mode select and the model select: ``model`` (the one this
    session uses) current, the ``configured`` one offered too."""
    return [
        SessionConfigOptionSelect(
            id="mode",
            name="Mode",
            category="mode",
            type="select",
            current_value=mode,
            options=[
                SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
                for m in MODES
            ],
        ),
        SessionConfigOptionSelect(
            id="model",
            name="Model",
            category="model",
            type="select",
            current_value=model,
            options=[
                SessionConfigSelectOption(value=name, name=name)
                for name in dict.fromkeys((configured, model))
            ],
        ),
    ]


class _ChosenModel:
    """A ``prepare_next_turn`` hook that puts the chosen model in every
    turn's request, after the hook that was there (MCP's) has had its say."""

    def __init__(self, agent: Agent, model: Model) -> None:
        self.model = model
        self._previous = agent.prepare_next_turn

    async def __call__(self, info: TurnInfo) -> TurnOverrides:
        result = self._previous(info) if self._previous is not None else None
        overrides = await result if inspect.isawaitable(result) else result
        return replace(overrides or TurnOverrides(), model=self.model)


def set_model(session: Session, model: Model) -> None:
    """Use ``model`` in ``session`` from its next model turn (the agent's and
    the planner's)."""
    for agent in (session.agent, session.planner):
        if agent is None:
            continue
        hook = agent.prepare_next_turn
        if isinstance(hook, _ChosenModel):
            hook.model = model
        else:
            agent.prepare_next_turn = _ChosenModel(agent, model)
        agent.model = model
