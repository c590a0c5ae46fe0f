"""Opening a session that exists already: ``session/load``,
``session/resume`` and ``session/fork``.

- ``session/load`` (``loadSession``): the session, live or from the store,
  served to this client, its transcript replayed as ``session/update``
  notifications (:mod:`rein.acp.replay`) before the answer;
- ``session/resume`` (``sessionCapabilities.resume``, stable in ACP v1):
  the same without the replay (the client shows the conversation it has);
- ``session/fork`` (``sessionCapabilities.fork``, still unstable in ACP): a
  new session, with an id of its own, starting from the source's
  conversation as it stands (a running source's as its last step left it,
  a tool call without its result answered as a crash's is), stored at once
  so that ``session/load`` opens it in the next ``rein acp``; the source is
  not touched. It takes the source's mode and the configured model, and
  in plan mode the plan (:mod:`rein.acp.fork_source`); a question the
  source waits on is not the fork's to answer, and the fork says so.

Each is given the folder the session works in as ``cwd`` (another folder:
InvalidParams naming ``cwd``); an unknown session is -32002, one whose
prompt is being answered -32600 (load and resume; a fork reads a running
source), an isolated session InvalidParams naming ``sessionId`` for a fork
(its copy is its own). The client's MCP servers join the folder's as for
``session/new``, once the request is known to be good: a refused one
starts none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from acp import helpers
from acp.schema import ForkSessionResponse, ResumeSessionResponse

from rein.acp import errors
from rein.acp.fork_source import of_live, of_stored, question_note
from rein.acp.host import AcpHosts
from rein.acp.isolated import AcpIsolation
from rein.acp.live import Live
from rein.acp.mcp_servers import client_servers
from rein.acp.modes import mode_state
from rein.acp.replay import replay_session
from rein.acp.updates import plan_entries
from rein.hosting.workspace_host import WorkspaceHost
from rein.session import Session, SessionSpec
from rein.session.session import new_session_id
from rein.session.stored import read_stored
from rein.store.memory_keys import PLANNER_MEMORY, memory_key

__all__ = ["OpeningSessions", "fork", "open_stored"]


class OpeningSessions(Protocol):
    """What opening a session uses of the agent's sessions
    (:class:`rein.acp.sessions.AcpSessions`)."""

    live: dict[str, Live]
    hosts: AcpHosts
    isolation: AcpIsolation | None

    def checked_cwd(self, cwd: str) -> Path: ...
    def check_key(self) -> None: ...
    async def add_client_mcp(self, host: WorkspaceHost, servers: list[Any] | None) -> None: ...
    def busy(self, live: Live) -> bool: ...
    def serve(self, host: WorkspaceHost, session: Session) -> Live: ...
    def advertise(self, session_id: str, root: Path) -> None: ...
    def announce(self, session_id: str, root: Path) -> None: ...
    def options_of(self, live: Live, mode: str) -> list[Any]: ...


async def _host(
    sessions: OpeningSessions, cwd: str, mcp_servers: list[Any] | None
) -> tuple[Path, WorkspaceHost]:
    """The folder's host; the client's MCP servers are checked here and
    join it only once the request is known to be good (a refused one
    starts none)."""
    root = sessions.checked_cwd(cwd)
    sessions.check_key()
    client_servers(mcp_servers, str(root))  # refused before anything starts
    return root, await sessions.hosts.host(root)


async def open_stored(
    sessions: OpeningSessions,
    cwd: str,
    session_id: str,
    mcp_servers: list[Any] | None,
    *,
    replay: bool,
) -> ResumeSessionResponse:
    """``session/load`` (``replay``) or ``session/resume``: the session's
    modes and options (a load answers the same fields)."""
    root, host = await _host(sessions, cwd, mcp_servers)
    live = sessions.live.get(session_id)
    if live is not None and sessions.busy(live):
        raise errors.busy(session_id)
    await _check_folder(host, session_id, live)
    session = await host.manager.load(session_id)
    if session is None:
        raise errors.unknown_session(session_id)
    await sessions.add_client_mcp(host, mcp_servers)
    live = sessions.serve(host, session)
    if replay:
        for update in replay_session(session, host.root):
            live.updates.say(update)
        await live.updates.drain()
    sessions.advertise(session_id, root)
    return ResumeSessionResponse(
        modes=mode_state(session.mode), config_options=sessions.options_of(live, session.mode)
    )


async def fork(
    sessions: OpeningSessions, cwd: str, session_id: str, mcp_servers: list[Any] | None
) -> ForkSessionResponse:
    """``session/fork``: the new session's id, modes and options."""
    root, host = await _host(sessions, cwd, mcp_servers)
    if sessions.isolation is not None and session_id in sessions.isolation.records:
        raise errors.invalid_field(
            "sessionId", "an isolated session works in its own copy, which a fork cannot share"
        )
    live = sessions.live.get(session_id)
    manager = host.manager
    store = await manager.open_store()
    await _check_folder(host, session_id, live)
    known = live.session if live is not None else manager.sessions.get(session_id)
    if known is not None:
        source = of_live(known)
    else:
        stored = await read_stored(store, session_id) if store is not None else None
        if stored is None:
            raise errors.unknown_session(session_id)
        source = of_stored(stored)
    await sessions.add_client_mcp(host, mcp_servers)
    fork_id = new_session_id()
    mode = source.mode
    if store is not None:  # stored whole now: later checkpoints only append
        await store.create_session(fork_id, source.title, mode, "acp", str(host.root))
        await store.replace_all(fork_id, memory_key(mode), source.messages)
        if mode == "plan":
            await store.replace_all(fork_id, PLANNER_MEMORY, source.planner_messages)
            if source.plan is not None:
                await store.set_memory_state(fork_id, PLANNER_MEMORY, source.plan.to_json())
    spec = SessionSpec(
        mode=mode,
        title=source.title,
        origin="acp",
        session_id=fork_id,
        messages=source.messages,
        persisted=store is not None,
        planner_messages=source.planner_messages,
        plan_snapshot=source.plan,
    )
    forked = sessions.serve(host, manager.new(spec))
    sessions.announce(fork_id, root)
    # Queued: sent once the answer is on its way (the client learns of the
    # fork from it).
    if source.plan is not None and source.plan.steps:
        forked.updates.say(helpers.update_plan(plan_entries(source.plan.steps)))
    if source.question is not None:
        note = question_note(session_id, source.question)
        forked.updates.say(helpers.update_agent_message_text(f"Rein: {note}\n\n"))
    return ForkSessionResponse(
        session_id=fork_id, modes=mode_state(mode), config_options=sessions.options_of(forked, mode)
    )


async def _check_folder(host: WorkspaceHost, session_id: str, live: Live | None) -> None:
    """A session is opened in the folder it works in, not another."""
    folder: Path | None = live.host.root if live is not None else None
    store = host.manager.store
    if folder is None and store is not None:
        record = await store.get_session(session_id)
        folder = Path(record.workspace) if record is not None and record.workspace else None
    if folder is not None and folder != host.root:
        raise errors.invalid_field(
            "cwd", f"session {session_id} works in {folder}, not in {host.root}"
        )
