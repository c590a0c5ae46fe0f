"""The sessions ``rein acp`` serves: ``session/new`` to ``_rein/followUp``.

Imported by :class:`rein.acp.agent.ReinAcpAgent` on the first request that
needs a session (``initialize`` stays as light as ``rein serve``'s). Each
handler parses what the SDK validated, calls the session layer and converts
the result; the sessions are the ones ``rein serve`` and ``rein run`` build
(:mod:`rein.session`), hosted per workspace by :class:`~rein.acp.host.AcpHosts`:

- ``session/new`` / ``session/list`` (newest first, cursor pages);
  ``session/load`` (replays the transcript before it answers),
  ``session/resume`` and ``session/fork`` are :mod:`rein.acp.opening`'s;
- ``session/prompt``: one run, ``current_session`` set around it; the stop
  reason from :func:`rein.acp.prompts.stop_reason`;
- ``session/cancel``: aborts the run (its prompt answers ``cancelled``),
  also one that has not started yet (:mod:`rein.acp.answering`);
- ``session/close``: cancels, then the session leaves memory
  (:mod:`rein.acp.closing`);
- ``session/set_mode`` and ``session/set_config_option`` (mode, model):
  :mod:`rein.acp.choosing`'s;
- ``_rein/steer``, ``_rein/followUp`` and the isolated sessions' methods
  (:mod:`rein.acp.extensions`): steering and follow-ups, which
  ACP v1 lacks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from acp import helpers
from acp.schema import (
    ForkSessionResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from rein.acp import choosing, errors, extensions, opening
from rein.acp.answering import Answering
from rein.acp.commands import available_commands, prompt_of
from rein.acp.context import ClientLink, current_session
from rein.acp.host import AcpHosts
from rein.acp.isolated import AcpIsolation
from rein.acp.live import Live, serve_session
from rein.acp.mcp_servers import client_servers
from rein.acp.modes import config_options, mode_state
from rein.acp.prompts import stop_reason
from rein.acp.session_options import session_options
from rein.acp.session_pages import info_update, session_page
from rein.acp.updates import SessionUpdate
from rein.config import ReinConfig
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.harness.errors import BusyError
from rein.harness.ports import Model
from rein.hosting.workspace_host import WorkspaceHost
from rein.providers.config import ModelConfig
from rein.sandboxing.probe import unavailable_notice
from rein.session import Mode, Session, SessionSpec
from rein.session.ending import end_sessions

__all__ = ["AcpSessions"]

log = logging.getLogger(__name__)


class AcpSessions:
    """The sessions of one client connection and their workspace hosts.

    ``link`` is the connection (``conn``, ``capabilities``); ``missing_key()``
    names the model key's variable while it is unset; the hosts live in
    ``tg`` until :meth:`aclose`."""

    def __init__(
        self,
        link: ClientLink,
        config: ReinConfig,
        model_factory: Callable[[ModelConfig], Model],
        missing_key: Callable[[], str | None],
        tg: anyio.abc.TaskGroup,
        *,
        storage: str | Path | None,
        analyzers: tuple[AnalyzerSpec, ...] | None,
        watch: bool,
    ) -> None:
        self.link = link
        self.config = config
        self.model_factory = model_factory
        self.storage = storage
        self._missing_key = missing_key
        self.hosts = AcpHosts(
            config,
            link,
            model_factory,
            self._tell,
            self._before_change,
            tg,
            storage=storage,
            analyzers=analyzers,
            watch=watch,
        )
        self.live: dict[str, Live] = {}
        #: The prompt being answered, per session id.
        self.answering: dict[str, Answering] = {}
        #: The prompts waiting for a cancelled one's answer, per session id
        #: (a cancel marks them too).
        self.waiting: dict[str, list[Answering]] = {}
        #: The sessions session/close is closing.
        self.closing: set[str] = set()
        self._tg = tg
        #: The sessions told the sandbox cannot run here (once each).
        self._told_sandbox: set[str] = set()
        self.isolation = AcpIsolation(self.hosts, storage) if storage is not None else None

    async def _send(self, session_id: str, update: SessionUpdate) -> None:
        await self.link.conn.session_update(session_id, update)

    async def _tell(self, session_id: str, text: str) -> None:
        live = self.live.get(session_id)
        if live is not None:
            live.updates.say(helpers.update_agent_message_text(text))
            await live.updates.drain()
        else:
            await self._send(session_id, helpers.update_agent_message_text(text))

    async def say_if_unsandboxed(self, session_id: str) -> None:
        """Once a session, after its ``session/new`` answer: a message when
        the model's commands should run sandboxed here and cannot (every
        command asks). Commands in the client's terminal ask anyway, and
        their permission request says why."""
        if session_id in self._told_sandbox:
            return
        self._told_sandbox.add(session_id)
        config = self.config
        notice = await anyio.to_thread.run_sync(
            unavailable_notice, config.approval.command, config.sandbox.bwrap, config.sandbox.also
        )
        if notice is not None:
            await self._tell(session_id, f"Rein: {notice}.\n\n")

    def _before_change(self, session_id: str, path: str, text: str) -> None:
        live = self.live.get(session_id)
        if live is not None:
            live.updates.before_change(path, text)

    # ------------------------------------------------------------ sessions

    def checked_cwd(self, cwd: str) -> Path:
        path = Path(cwd)
        if not path.is_absolute():
            raise errors.invalid_field("cwd", f"{cwd!r} is not an absolute path")
        if not path.is_dir():
            raise errors.invalid_field("cwd", f"{cwd} is not an existing folder")
        return path.resolve()

    def serve(self, host: WorkspaceHost, session: Session) -> Live:
        """Stream ``session``'s events to the client from now on."""
        old = self.live.get(session.id)
        live = serve_session(
            host,
            session,
            lambda update: self._send(session.id, update),
            lambda: self.config.harness.context_window,
            old,
        )
        self.live[session.id] = live
        return live

    def live_of(self, session_id: str) -> Live:
        live = self.live.get(session_id)
        if live is None:
            raise errors.unknown_session(session_id)
        return live

    def check_key(self) -> None:
        missing = self._missing_key()
        if missing is not None:
            raise errors.auth_required(missing)

    async def add_client_mcp(self, host: WorkspaceHost, servers: list[Any] | None) -> None:
        specs = client_servers(servers, str(host.root))
        if specs:
            added = await host.mcp.add(specs)
            log.info("MCP servers from the client for %s: %s", host.root, ", ".join(added))

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        root = self.checked_cwd(cwd)
        options = session_options(kwargs.get("rein"))
        isolated = options.isolated
        self.check_key()
        client_servers(mcp_servers, str(root))  # refused before anything starts
        if isolated:
            if self.isolation is None:
                raise errors.invalid_field("_meta.rein.isolated", "rein acp keeps no storage")
            host, session = await self.isolation.start(root)
        else:
            host = await self.hosts.host(root)
            spec = SessionSpec(mode="agent", origin="acp", allow_hosts=options.allow_hosts)
            session = host.manager.new(spec)
        await self.add_client_mcp(host, mcp_servers)
        live = self.serve(host, session)
        self.announce(session.id, root)
        return NewSessionResponse(
            field_meta={"rein": {"isolated": True, "worktree": str(host.root)}}
            if isolated
            else None,
            session_id=session.id,
            modes=mode_state(session.mode),
            config_options=config_options(
                session.mode, self._model_name(live), self._configured_model()
            ),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        answer = await opening.open_stored(self, cwd, session_id, mcp_servers, replay=True)
        return LoadSessionResponse(modes=answer.modes, config_options=answer.config_options)

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ResumeSessionResponse:
        return await opening.open_stored(self, cwd, session_id, mcp_servers, replay=False)

    async def fork_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ForkSessionResponse:
        return await opening.fork(self, cwd, session_id, mcp_servers)

    def options_of(self, live: Live, mode: str) -> list[Any]:
        """The ``configOptions`` of a session answer: ``mode`` and its model."""
        return config_options(mode, self._model_name(live), self._configured_model())

    def announce(self, session_id: str, root: Path) -> None:
        """A new session's messages, sent once its answer is on its way:
        the sandbox that cannot run here (once), its slash commands."""
        self._tg.start_soon(self.say_if_unsandboxed, session_id)
        self.advertise(session_id, root)

    def advertise(self, session_id: str, root: Path) -> None:
        """The session's slash commands, when it has any, sent once the
        response is on its way (a client learns of a session from it)."""
        update = available_commands(self.config, root)
        if not update.available_commands:
            return

        async def send() -> None:
            try:
                await self.link.conn.session_update(session_id, update)
            except Exception as exc:  # the client left: nothing else to tell
                log.warning("session %s: its commands could not be sent: %s", session_id, exc)

        self._tg.start_soon(send)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        root = self.checked_cwd(cwd) if cwd is not None else None
        served = [(live.session, live.host.root) for live in self.live.values()]
        managers = [host.manager for host in self.hosts.hosts.values()]
        return await session_page(served, managers, self.storage, root, cursor)

    # ------------------------------------------------------------ the run

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        live = self.live_of(session_id)
        text = prompt_of(self.config, live.host.root, prompt).text
        # Known before it waits: a session/cancel read while it waits for a
        # cancelled prompt's answer cancels it too.
        answering = Answering()
        earlier = self.answering.get(session_id)
        if earlier is not None and earlier.cancel_asked is not None:
            waiting = self.waiting.setdefault(session_id, [])
            waiting.append(answering)
            try:
                if await earlier.cancelled_and_ended():
                    live = self.live_of(session_id)  # the cancelled prompt answered
            finally:
                waiting.remove(answering)
                if not waiting:
                    del self.waiting[session_id]
        if session_id in self.closing:
            raise errors.unknown_session(session_id)
        if self.busy(live):
            raise errors.busy(session_id)
        # No await since the check: a session/cancel read after this
        # prompt finds it being answered, whatever it waits on.
        self.answering[session_id] = answering
        try:
            return await self._answer(live, answering, text)
        finally:
            del self.answering[session_id]
            answering.answered.set()

    def busy(self, live: Live) -> bool:
        """A prompt of the session is being answered, or its run runs."""
        session_id = live.session.id
        return (
            session_id in self.answering
            or live.session.busy
            or live.host.manager.in_use(session_id)
        )

    async def _answer(self, live: Live, answering: Answering, text: str) -> PromptResponse:
        session_id = live.session.id
        if live.pending_mode is not None:
            live = await self._switch_mode(live, live.pending_mode)
        untitled = not live.session.title
        live.updates.begin()
        if not live.told_coverage:
            live.told_coverage = True
            # Started with the session's host, long before a person's first
            # prompt as a rule; bounded by each analyzer's initialize.
            await live.host.analyzers_started()
            live.updates.say(helpers.update_agent_thought_text(f"{live.host.analyzers_line()}\n"))
        if answering.cancel_asked is not None:
            # Cancelled before its run started: nothing runs.
            await live.updates.drain()
            return PromptResponse(stop_reason="cancelled")
        token = current_session.set(session_id)
        off = answering.abort_at_start(live.session)
        try:
            result = await live.host.manager.run_prompt(live.session, text)
        except BusyError as exc:
            raise errors.busy_now(session_id, exc) from exc
        finally:
            off()
            current_session.reset(token)
        store = live.host.manager.store
        if untitled and live.session.title:  # session/list shows it by its first prompt
            if store is not None:
                await store.set_title(session_id, live.session.title)
            live.updates.say(info_update(live.session.title, live.session.updated_at))
        reason = stop_reason(result, live.session.agent.messages)
        answer = result.text.strip()
        if (
            result.status == "completed"
            and answer
            and not live.updates.said().rstrip().endswith(answer)
        ):
            # An answer no model turn streamed (plan mode's last step summary).
            live.updates.say(helpers.update_agent_message_text(f"\n\n{answer}"))
        said = live.updates.said().rstrip()
        if (
            result.status == "failed"
            and reason == "end_turn"
            and not said.endswith(result.error or "failed")
        ):
            # Not said yet (the run's fatal error says it when it has one).
            live.updates.say(
                helpers.update_agent_message_text(f"\n\nRein stopped: {result.error or 'failed'}")
            )
        await live.updates.drain()
        return PromptResponse(stop_reason=reason)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.live.get(session_id)
        if live is None:
            log.warning("session/cancel: no session %s", session_id)
            return
        # Also before its run started, and the prompts waiting behind it.
        marked = self.mark_cancelled(session_id, "cancelled by the client")
        if not live.session.abort("cancelled by the client") and not marked:
            log.info("session/cancel: session %s is not running", session_id)

    def mark_cancelled(self, session_id: str, reason: str) -> bool:
        """Cancel the session's prompt being answered and those waiting
        behind it; False when there is none."""
        prompts = [self.answering.get(session_id), *self.waiting.get(session_id, ())]
        marked = [answering for answering in prompts if answering is not None]
        for answering in marked:
            answering.cancel_asked = reason
        return bool(marked)

    async def close_session(self, session_id: str) -> None:
        from rein.acp.closing import close_session

        await close_session(self, session_id)

    # ------------------------------------------------------------ modes, model

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        return await choosing.set_session_mode(self, mode_id, session_id)

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        return await choosing.set_config_option(self, config_id, session_id, value)

    def _model_name(self, live: Live) -> str:
        return live.model or self._configured_model()

    def _configured_model(self) -> str:
        return self.config.model.model or self.config.model.provider

    async def _switch_mode(self, live: Live, mode: Mode) -> Live:
        return await choosing.switch_mode(self, live, mode)

    # ------------------------------------------------------------ extensions

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await extensions.ext_method(self, method, params)

    # ------------------------------------------------------------ the end

    def abort_all(self, reason: str) -> None:
        """Abort every run, and every prompt whose run has not started."""
        for session_id in {*self.answering, *self.waiting}:
            self.mark_cancelled(session_id, reason)
        for live in self.live.values():
            live.session.abort(reason)

    async def aclose(self, reason: str) -> None:
        """Abort every run and wait for them (bounded), stop streaming, and
        let the hosts close (their task group's owner waits for that)."""
        self.abort_all(reason)
        tasks = [
            live.session.task
            for live in self.live.values()
            if live.session.busy and live.session.task is not None
        ]
        if tasks:
            await asyncio.wait(tasks, timeout=30)
        for live in self.live.values():
            live.unsubscribe()
            live.updates.close()
        # SessionEnd hooks (reason "other": the process ends), bounded; with
        # the client gone, a failure is logged.
        await end_sessions([live.session for live in self.live.values()], "other")
        if self.isolation is not None:
            await anyio.to_thread.run_sync(self.isolation.close)
        self.hosts.close()
