"""The model picker: ``rein/models`` lists the models a person can choose
(the configured one and, when the client has them, the editor's language
models) and ``rein/setModel`` changes a session's model, or every
session's, from its next turn without restarting the server.

A choice for every session (no ``sessionId``) also applies to the
sessions made afterwards; a choice for one session (``sessionId``) lasts
while that session is in memory and, with ``newSessions: true`` (what the
panel's picker sends), is also the model of the sessions made afterwards,
leaving the other sessions as they are. Subagents take their parent
agent's model when they start: a child started after a change uses the
new model, a running child keeps its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from pygls.exceptions import JsonRpcException

if TYPE_CHECKING:
    from rein.config import ReinConfig
    from rein.harness.ports import Model
    from rein.lsp._lm_params import Choice
    from rein.lsp.channel import ClientChannel
    from rein.providers.config import ModelConfig
    from rein.session import Session

# The handlers (rein.lsp.handlers.models) import the rest of Rein when
# first called.

__all__ = ["LM_MODELS", "ModelChoices", "ModelsHandlerServer", "editor_models", "entry"]

log = logging.getLogger(__name__)

#: Server -> client: the editor's language models ``{} -> {models: [{id,
#: vendor, family, name}]}``.
LM_MODELS = "rein/lm/models"


class ModelsHandlerServer(Protocol):
    """What ``rein/models`` and ``rein/setModel`` use of the server."""

    async def ready(self) -> None: ...
    @property
    def config(self) -> ReinConfig: ...
    @property
    def client(self) -> ClientChannel: ...
    @property
    def model_choices(self) -> ModelChoices: ...
    @property
    def sessions(self) -> dict[str, Session]: ...
    async def load_session(self, session_id: str) -> Session | None: ...


class ModelChoices:
    """The choices made with ``rein/setModel``: one for every session, one
    for the sessions made from now on, and one per session. ``config``
    gives the configured model now; ``build_model`` builds the model a
    configuration describes (ConfigError when it cannot)."""

    def __init__(
        self, config: Callable[[], ReinConfig], build_model: Callable[[ModelConfig], Model]
    ) -> None:
        self._config = config
        self._build_model = build_model
        #: The model of every session without a choice of its own.
        self.everywhere: Choice | None = None
        #: The model a new session starts with.
        self.for_new: Choice | None = None
        self.per_session: dict[str, Choice] = {}

    def effective(self, config: ModelConfig) -> ModelConfig:
        """What a new session's model is built from."""
        from rein.lsp._lm_params import chosen_config

        return chosen_config(config, self.for_new)

    def current(self, session_id: str | None) -> Choice:
        """The model of session ``session_id``; without one, a new session's."""
        from rein.lsp._lm_params import Choice

        if session_id is None:
            choice = self.for_new
        else:
            choice = self.per_session.get(session_id) or self.everywhere
        if choice is not None:
            return choice
        configured = self._config().model
        return Choice(configured.provider, configured.model)

    def on_new_session(self, session: Session) -> None:
        """A session made with the new sessions' choice keeps it as its own
        (the choice for every session may differ); a vscode-lm model tells
        the editor whose turn it asks for."""
        from rein.providers.vscode_lm import VsCodeLmModel

        if self.for_new is not None and self.for_new != self.everywhere:
            self.per_session[session.id] = self.for_new

        for agent in (session.agent, session.planner):
            if agent is not None and isinstance(agent.model, VsCodeLmModel):
                agent.model.session_id = session.id

    def build(self, choice: Choice, session_id: str | None) -> Model:
        """The model of ``choice`` (ConfigError when it cannot be used)."""
        from rein.lsp._lm_params import chosen_config
        from rein.providers.vscode_lm import VsCodeLmModel

        model = self._build_model(chosen_config(self._config().model, choice))
        if isinstance(model, VsCodeLmModel):
            model.session_id = session_id
        return model

    def choose(
        self, choice: Choice, sessions: list[Session], everywhere: bool, new_sessions: bool
    ) -> None:
        """Every one of ``sessions`` takes the choice's model from its next
        turn (``everywhere``: all of them, dropping their own choices), and
        with ``new_sessions`` the sessions made afterwards start with it;
        raises ConfigError (nothing changed) when it cannot be built."""
        models = [(s, self.build(choice, s.id)) for s in sessions]
        if not models:
            self.build(choice, None)  # refused now, not at the next session's start
        if everywhere:
            self.everywhere = choice
            self.per_session.clear()
        if everywhere or new_sessions:
            self.for_new = choice
        for session, model in models:
            if not everywhere:
                self.per_session[session.id] = choice
            session.agent.model = model
            if session.planner is not None:
                session.planner.model = model

    def forget(self, session: Session) -> None:
        """An evicted session: its own choice is not kept."""
        self.per_session.pop(session.id, None)


def entry(provider: str, model: str, label: str, source: str) -> dict[str, str]:
    """One model of the picker, as ``rein/models`` lists it."""
    return {"provider": provider, "model": model, "label": label, "source": source}


async def editor_models(server: ModelsHandlerServer) -> tuple[list[dict[str, str]], str | None]:
    """The editor's language models as picker entries, and why there are
    none when the client could not list them."""
    from rein.lsp._lm_params import LmModels
    from rein.lsp.client_timeout import ClientTimeout

    if not server.client.supports(LM_MODELS):
        return [], "the editor does not list language models (rein/lm/models)"
    try:
        answer = await server.client.request(LM_MODELS, {})
        listed = LmModels.model_validate(answer)
    except ClientTimeout as exc:
        return [], str(exc)
    except JsonRpcException as exc:
        return [], f"the editor could not list its language models: {exc.message}"
    except ValueError as exc:
        log.warning("%s: an answer of the wrong shape: %s", LM_MODELS, exc)
        return [], f"the editor's {LM_MODELS} answer has the wrong shape"
    entries: dict[str, dict[str, str]] = {}
    for item in listed.models:
        selector = f"{item.vendor}/{item.family}" if item.vendor and item.family else item.id
        label = f"{item.name or item.family or item.id} ({item.vendor or 'VS Code'})"
        entries.setdefault(selector, entry("vscode-lm", selector, label, "vscode-lm"))
    return list(entries.values()), None
