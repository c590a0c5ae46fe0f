"""A session's mode and model as the client chooses them:
``session/set_mode`` and ``session/set_config_option`` (``mode``,
``model``).

A mode chosen while the session's prompt is being answered applies from
its next prompt (``Live.pending_mode``); otherwise the session is rebuilt
in the new mode at once, with its transcript and the same id
(:func:`switch_mode`). Either way the client is told both views of the
mode: the modes' (``current_mode_update``) and the config options'. A
model is applied from the next model turn (:func:`rein.acp.modes.set_model`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

from acp import helpers
from acp.schema import (
    ConfigOptionUpdate,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from rein.acp import errors
from rein.acp.live import Live
from rein.acp.modes import MODE_IDS, set_model
from rein.config import ReinConfig
from rein.harness.errors import ConfigError
from rein.harness.ports import Model
from rein.hosting.workspace_host import WorkspaceHost
from rein.providers.config import ModelConfig
from rein.session import Mode, Session, SessionSpec
from rein.store.memory_keys import memory_key

__all__ = [
    "ChoosingSessions",
    "choose_mode",
    "set_config_option",
    "set_session_mode",
    "switch_mode",
]


class ChoosingSessions(Protocol):
    """What choosing a mode or a model uses of the agent's sessions
    (:class:`rein.acp.sessions.AcpSessions`)."""

    config: ReinConfig
    model_factory: Callable[[ModelConfig], Model]

    def live_of(self, session_id: str) -> Live: ...
    def busy(self, live: Live) -> bool: ...
    def serve(self, host: WorkspaceHost, session: Session) -> Live: ...
    def options_of(self, live: Live, mode: str) -> list[Any]: ...


async def set_session_mode(
    sessions: ChoosingSessions, mode_id: str, session_id: str
) -> SetSessionModeResponse:
    live = sessions.live_of(session_id)
    await choose_mode(sessions, live, mode_id, "modeId")
    return SetSessionModeResponse()


async def set_config_option(
    sessions: ChoosingSessions, config_id: str, session_id: str, value: str | bool
) -> SetSessionConfigOptionResponse:
    live = sessions.live_of(session_id)
    if config_id not in ("mode", "model"):
        raise errors.invalid_field("configId", f"{config_id!r} is not one of: mode, model")
    if isinstance(value, bool):
        raise errors.invalid_field(
            "value", f"{config_id!r} is a select option (a string), not a boolean"
        )
    if config_id == "mode":
        live = await choose_mode(sessions, live, value, "value")
    else:
        if not value.strip():
            raise errors.invalid_field("value", "the model is a non-empty name")
        try:
            model = sessions.model_factory(
                sessions.config.model.model_copy(update={"model": value})
            )
        except ConfigError as exc:
            raise errors.invalid_field("value", str(exc)) from exc
        set_model(live.session, model)
        live.model = value
    mode = live.pending_mode or live.session.mode
    return SetSessionConfigOptionResponse(config_options=sessions.options_of(live, mode))


async def choose_mode(
    sessions: ChoosingSessions, live: Live, mode_id: str, field_name: str
) -> Live:
    if mode_id not in MODE_IDS:
        raise errors.invalid_field(field_name, f"{mode_id!r} is not one of: agent, plan, explain")
    mode = cast(Mode, mode_id)  # one of MODE_IDS, checked above
    if sessions.busy(live):
        live.pending_mode = mode  # from the next prompt
    else:
        live = await switch_mode(sessions, live, mode)
    # Both views of the mode: the modes' and the config options'.
    live.updates.say(helpers.update_current_mode(mode))
    options = sessions.options_of(live, mode)
    live.updates.say(
        ConfigOptionUpdate(session_update="config_option_update", config_options=options)
    )
    await live.updates.drain()
    return live


async def switch_mode(sessions: ChoosingSessions, live: Live, mode: Mode) -> Live:
    """Rebuild the session in ``mode`` with its transcript (same id)."""
    live.pending_mode = None
    old = live.session
    if old.mode == mode:
        return live
    manager = live.host.manager
    stored = manager.store is not None and await manager.store.get_session(old.id) is not None
    messages = list(old.agent.messages)
    manager.discard(old)
    session = manager.new(
        SessionSpec(
            mode=mode,
            title=old.title,
            origin=old.origin,
            session_id=old.id,
            messages=messages,
            waiting_for=old.agent.waiting_for,
            persisted=stored,
        )
    )
    if stored and manager.store is not None:
        await manager.store.set_mode(old.id, mode)
        await manager.store.replace_all(old.id, memory_key(mode), messages)
    renewed = sessions.serve(live.host, session)
    if live.model is not None:
        set_model(
            session,
            sessions.model_factory(sessions.config.model.model_copy(update={"model": live.model})),
        )
    return renewed
