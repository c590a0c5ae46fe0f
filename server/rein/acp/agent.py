"""The ACP agent: what ``rein acp`` answers on its connection.

``initialize`` and ``authenticate`` are answered here, with no analyzer,
store or model work and without importing the session stack, so that
``rein acp`` answers ``initialize`` as fast as ``rein serve`` does; every
session method goes to :class:`rein.acp.sessions.AcpSessions`, imported and
made on the first of them. The agent is also the
:class:`~rein.acp.context.ClientLink` the client ports use
(``capabilities`` from ``initialize``, ``conn``).

- ``initialize``: protocol 1 (whatever the client asks), load session,
  text + resource-link + embedded-text prompts, the session list,
  ``session/close``, ``session/resume`` and ``session/fork``; an
  ``env:<VAR>`` auth method when the model key is missing;
- ``authenticate``: reads the environment again; ``-32000`` naming the
  variable while the key is still missing; a method id it does not offer
  is InvalidParams naming ``methodId``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.abc
from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthMethodAgent,
    ClientCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionForkCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from rein import __version__
from rein.acp import errors
from rein.acp.fast_start import mcp_available
from rein.acp.fast_start import missing_key as _missing_key
from rein.config import ReinConfig
from rein.providers.config import ModelConfig

if TYPE_CHECKING:
    from rein.acp.sessions import AcpSessions
    from rein.disk.analyzer_specs import AnalyzerSpec
    from rein.harness.ports import Model

__all__ = ["ReinAcpAgent"]

log = logging.getLogger(__name__)

#: Why the runs end when the client leaves.
DISCONNECTED = "the client disconnected"
#: Rein's extension methods (``_rein/...`` on the wire).
EXT_METHODS = frozenset({"rein/steer", "rein/followUp", "rein/applyIsolated", "rein/isolatedHunks"})


def _one_root(kwargs: dict[str, Any]) -> None:
    """``additionalDirectories`` is refused, never dropped: Rein does not
    offer ``sessionCapabilities.additionalDirectories`` (a session works in
    its ``cwd``), and a client that sent them would think them active."""
    if kwargs.get("additional_directories"):
        raise errors.invalid_field(
            "additionalDirectories",
            "rein acp does not offer sessionCapabilities.additionalDirectories: "
            "a session works in its cwd only",
        )


class ReinAcpAgent:
    """Rein as an ACP agent over one client connection.

    ``model_factory`` makes a session's model from the ``model``
    configuration; ``tg`` is where the workspace hosts live (its owner
    leaves it after :meth:`aclose`); ``storage`` is the session store's
    folder; ``analyzers`` (None: the workspace's, from ``gates.analyzer.servers``) and ``watch`` as for
    :class:`~rein.hosting.workspace_host.WorkspaceHost`."""

    def __init__(
        self,
        config: ReinConfig,
        model_factory: Callable[[ModelConfig], Model],
        tg: anyio.abc.TaskGroup,
        *,
        storage: str | Path | None,
        analyzers: tuple[AnalyzerSpec, ...] | None = None,
        watch: bool = True,
    ) -> None:
        self.config = config
        self.model_factory = model_factory
        self.storage = storage
        self.capabilities: ClientCapabilities | None = None
        self._conn: Client | None = None
        self._tg = tg
        self._analyzers = analyzers
        self._watch = watch
        self._impl: AcpSessions | None = None

    # ------------------------------------------------------------ the link

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    @property
    def conn(self) -> Client:
        if self._conn is None:
            raise RuntimeError("rein acp is not connected to a client")
        return self._conn

    @property
    def sessions(self) -> AcpSessions:
        """The session side, made on first use."""
        if self._impl is None:
            from rein.acp.sessions import AcpSessions

            self._impl = AcpSessions(
                self,
                self.config,
                self.model_factory,
                self.missing_key,
                self._tg,
                storage=self.storage,
                analyzers=self._analyzers,
                watch=self._watch,
            )
        return self._impl

    def client_gone(self) -> None:
        """The client's input ended: every run is aborted now, before the
        requests still waiting on the client fail (a run would take such a
        failure for a tool's result and call the model again)."""
        if self._impl is not None:
            self._impl.abort_all(DISCONNECTED)

    async def aclose(self) -> None:
        """The client left: abort every run (bounded) and let the hosts close."""
        if self._impl is not None:
            await self._impl.aclose(DISCONNECTED)

    # ------------------------------------------------------------ initialize

    def missing_key(self) -> str | None:
        """The variable the model key should be in, while it is not set."""
        return _missing_key(self.config)

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.capabilities = client_capabilities or ClientCapabilities()
        missing = self.missing_key()
        methods = []
        if missing is not None:
            methods.append(
                AuthMethodAgent(
                    id=f"env:{missing}",
                    name=f"Set {missing}",
                    description=f"Rein reads the model key from {missing} (rein.model.apiKeyEnv); "
                    "set it where the editor starts rein acp, then retry",
                )
            )
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=mcp_available(), sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    close=SessionCloseCapabilities(),
                    resume=SessionResumeCapabilities(),
                    fork=SessionForkCapabilities(),
                ),
            ),
            agent_info=Implementation(name="rein", title="Rein", version=__version__),
            auth_methods=methods,
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        variable = self.config.model.resolved_api_key_env()
        if not variable or method_id != f"env:{variable}":
            offered = (
                f"the one method is 'env:{variable}'" if variable else "the model needs no key"
            )
            raise errors.invalid_field(
                "methodId", f"{method_id!r} is not a method rein acp offers ({offered})"
            )
        missing = self.missing_key()
        if missing is not None:
            raise errors.auth_required(missing)
        return AuthenticateResponse()

    # ------------------------------------------------------------ sessions

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        _one_root(kwargs)
        # ``_meta.rein`` (the SDK passes ``_meta``'s keys as arguments):
        # Rein's session options (rein.acp.session_options).
        return await self.sessions.new_session(cwd, mcp_servers, rein=kwargs.get("rein"))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        _one_root(kwargs)
        return await self.sessions.load_session(cwd, session_id, mcp_servers)

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ResumeSessionResponse:
        _one_root(kwargs)
        return await self.sessions.resume_session(cwd, session_id, mcp_servers)

    async def fork_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ForkSessionResponse:
        _one_root(kwargs)
        return await self.sessions.fork_session(cwd, session_id, mcp_servers)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        return await self.sessions.list_sessions(cwd, cursor)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        return await self.sessions.prompt(prompt, session_id)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        await self.sessions.close_session(session_id)
        return CloseSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if self._impl is None:
            log.warning("session/cancel: no session %s", session_id)
            return
        await self._impl.cancel(session_id)

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        return await self.sessions.set_session_mode(mode_id, session_id)

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        return await self.sessions.set_config_option(config_id, session_id, value)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method not in EXT_METHODS:  # without making the session side
            raise RequestError.method_not_found(f"_{method}")
        return await self.sessions.ext_method(method, params)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("ignored extension notification _%s", method)
