"""The editor's isolated sessions (``rein/newSession`` with ``isolated:
true``): each in a git worktree (or a copy) of the folder, over its own
:class:`~rein.hosting.workspace_host.WorkspaceHost` (the disk there, its own
analyzer pool and preview), so its gates never see the folder's or another
run's changes. The editor approves and answers as for any session, and
its events stream as ``rein/event``. ``rein/isolatedHunks`` lists its
hunks against the folder as the editor has it now (clean or conflicting).
``rein/applyIsolated`` brings the changes back (every clean hunk, or the
ones the person kept) through the editor's workspace (one
``workspace/applyEdit``: one generation) as a run of the person's open
session (``intoSessionId``) or of a new session of the folder (its
checkpoint: ``rein/restore`` of that run reverts the whole apply) that the
folder's gates then judge on the editor's diagnostics (the answer's
``gates``), keeps them as a branch, or discards them; then the copy is
removed.

The isolated session lives in memory (its host has no store); a server
that stops keeps the copy of a session that changed something, for
``rein apply``, and removes the others.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio
from pygls.exceptions import JsonRpcInvalidParams

from rein.harness.errors import ConfigError
from rein.hosting.isolated_apply import bring_back_into
from rein.hosting.workspace_host import WorkspaceHost
from rein.isolation import GitError
from rein.isolation.bring_back import (
    hunks_json,
    keep_as_branch,
    review_changes,
    run_changes,
    unknown_hunks,
)
from rein.isolation.cleanup import remove_isolated, sweep
from rein.isolation.registry import IsolatedRecord, Registry
from rein.isolation.worktree import create_isolated
from rein.lsp import errors
from rein.session import Session, SessionSpec, new_session_id
from rein.session.restoring import writing_files

if TYPE_CHECKING:
    from collections.abc import Callable

    from rein.config import ReinConfig
    from rein.harness.ports import AnnouncingWorkspace, Model
    from rein.lsp.approval_registry import ApprovalRegistry
    from rein.lsp.channel import ClientChannel
    from rein.lsp.session_streams import SessionStreams
    from rein.providers.config import ModelConfig
    from rein.session import SessionManager

__all__ = ["IsolatedSessions"]


log = logging.getLogger(__name__)


@dataclass
class _Isolated:
    record: IsolatedRecord
    host: WorkspaceHost
    #: The task that holds the host open (its processes and task group
    #: belong to one task) until ``closing`` is set.
    keeper: asyncio.Task[None]
    closing: asyncio.Event
    session: Session


class IsolationServer(Protocol):
    """What the isolated sessions need of the language server."""

    @property
    def root(self) -> Path: ...

    @property
    def config(self) -> ReinConfig: ...

    client: ClientChannel
    streams: SessionStreams

    @property
    def approvals(self) -> ApprovalRegistry: ...

    @property
    def editor_workspace(self) -> AnnouncingWorkspace: ...

    def new_session(self, **spec: Any) -> Session: ...

    @property
    def manager(self) -> SessionManager: ...


class IsolatedSessions:
    """The server's isolated sessions by id; ``make_model`` makes a
    session's model from the ``model`` configuration (the server's own)."""

    def __init__(self, server: IsolationServer, make_model: Callable[[ModelConfig], Model]) -> None:
        self.server = server
        self.make_model = make_model
        self.live: dict[str, _Isolated] = {}

    def _registry(self) -> Registry:
        from rein.store import default_storage_path

        return Registry(self.server.config.storage_path or default_storage_path())

    def session(self, session_id: str) -> Session | None:
        found = self.live.get(session_id)
        return found.session if found is not None else None

    def manager(self, session_id: str) -> SessionManager | None:
        found = self.live.get(session_id)
        return found.host.manager if found is not None else None

    async def new(self, mode: Literal["agent", "plan", "explain"], title: str) -> _Isolated:
        """A worktree of the server's folder and a session over it."""
        from rein.lsp.editor_dialogs import EditorApprover, EditorUserChannel

        server = self.server
        registry = self._registry()
        await anyio.to_thread.run_sync(sweep, registry)
        record = await anyio.to_thread.run_sync(
            create_isolated, server.root, registry, new_session_id()
        )
        closing = asyncio.Event()
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        keeper: asyncio.Task[None] | None = None
        try:
            host = WorkspaceHost(
                record.root,
                server.config,
                self.make_model,
                approver=lambda sid: EditorApprover(server.client, sid),
                user=lambda sid: EditorUserChannel(server.client, sid),
                approval_rules=lambda sid: server.approvals.book(sid),
                recover_interrupted=False,
            )
            keeper = asyncio.ensure_future(_keep(host, started, closing))
            await started
            session = host.manager.new(
                SessionSpec(mode=mode, title=title, session_id=record.session_id)
            )
        except BaseException:
            closing.set()
            if keeper is not None:
                await keeper
            remove_isolated(registry, record)
            raise
        server.streams.open(session)
        made = _Isolated(record, host, keeper, closing, session)
        self.live[session.id] = made
        return made

    async def _close(self, made: _Isolated) -> None:
        made.session.abort("the isolated session is closed")
        self.live.pop(made.session.id, None)
        self.server.streams.close(made.session.id)
        made.closing.set()
        await made.keeper

    async def hunks(self, session_id: str) -> dict[str, Any]:
        """``rein/isolatedHunks``: the copy's hunks against the folder as the
        editor has it now, per file, each clean or a conflict with both
        sides; nothing is written."""
        made = self.live.get(session_id)
        if made is None:
            raise ConfigError(f"no isolated session {session_id!r} in this server")
        # No prompt of it starts while its changes are read (listing them
        # stages the copy's index); refused while it runs (BusyError).
        async with writing_files(made.session, "listing the isolated copy's hunks"):
            changes = await anyio.to_thread.run_sync(run_changes, made.record)
        reviewed = await review_changes(
            changes, self.server.editor_workspace, can_branch=made.record.kind == "git"
        )
        return {"sessionId": session_id, "files": hunks_json(changes, reviewed)}

    async def into(self, session_id: str) -> Session:
        """The person's session an apply goes into (live, or loaded from the
        store); InvalidParams naming ``intoSessionId`` when it is unknown,
        isolated, stored for another folder or busy."""

        def refused(why: str) -> JsonRpcInvalidParams:
            return JsonRpcInvalidParams(f"rein/applyIsolated: invalid params: intoSessionId: {why}")

        shown = errors.shown(session_id)
        if session_id in self.live:
            raise refused(f"the session {shown} is isolated; name a session of the folder")
        manager = self.server.manager
        if session_id not in manager.sessions:
            store = await manager.open_store()
            stored = await store.get_session(session_id) if store is not None else None
            if stored is not None and not _same_folder(stored.workspace, self.server.root):
                where = errors.shown(stored.workspace) if stored.workspace else "not recorded"
                raise refused(f"the session {shown} is of another folder ({where})")
        session = await manager.load(session_id)
        if session is None:
            raise refused(f"no session {shown}")
        if session.busy or session.restoring or self.server.manager.in_use(session_id):
            raise refused(f"the session {shown} is running; wait for its run or abort it")
        return session

    async def bring_back(
        self,
        session_id: str,
        action: Literal["keep", "discard", "branch"],
        branch: str | None,
        *,
        keep: tuple[str, ...] | None = None,
        into: Session | None = None,
    ) -> dict[str, Any]:
        """``rein/applyIsolated``: the copy's changes kept (applied through
        the editor, conflicts left out and reported; only the hunks in
        ``keep`` when given; as a run of ``into``, the person's open
        session, else of a new one), kept as a branch, or discarded. The
        copy is removed unless conflicts are left."""
        made = self.live.get(session_id)
        if made is None:
            raise ConfigError(f"no isolated session {session_id!r} in this server")
        # No prompt of either session starts while the copy is brought back or removed.
        async with AsyncExitStack() as held:
            await held.enter_async_context(
                writing_files(made.session, "bringing the isolated copy back")
            )
            if into is not None:
                in_use = self.server.manager.in_use(into.id)
                await held.enter_async_context(
                    writing_files(into, "applying an isolated session into it", in_use=in_use)
                )
            return await self._bring_back(made, action, branch, keep, into)

    async def _bring_back(
        self,
        made: _Isolated,
        action: Literal["keep", "discard", "branch"],
        branch: str | None,
        keep: tuple[str, ...] | None,
        into: Session | None,
    ) -> dict[str, Any]:
        registry = self._registry()
        record = made.record
        if action == "branch":
            if not branch:
                raise ConfigError("branch: a name is needed with action 'branch'")
            commit = await anyio.to_thread.run_sync(keep_as_branch, record, branch)
            await self._close(made)
            await anyio.to_thread.run_sync(remove_isolated, registry, record)
            return {"applied": [], "conflicts": [], "branch": branch, "commit": commit}
        if action == "discard":
            await self._close(made)
            await anyio.to_thread.run_sync(remove_isolated, registry, record)
            return {"applied": [], "conflicts": [], "discarded": True}
        changes = await anyio.to_thread.run_sync(run_changes, record)
        wrong = unknown_hunks(keep, changes) if keep is not None else ""
        if wrong:
            raise JsonRpcInvalidParams(f"rein/applyIsolated: invalid params: hunks: {wrong}")
        title = f"Apply isolated session {record.session_id}"
        target = into or self.server.new_session(mode="agent", title=title)
        brought = await bring_back_into(
            target,
            self.server.editor_workspace,
            changes,
            title=title,
            can_branch=record.kind == "git",
            keep=keep,
            named=into is None,
        )
        if not brought.result.applied and into is None:
            self.server.manager.discard(target)  # nothing of it to keep
        if not brought.result.conflicts:
            await self._close(made)
            await anyio.to_thread.run_sync(remove_isolated, registry, record)
        return brought.to_json()

    async def close(self) -> None:
        """The server stops: every isolated session closed; a copy with
        changes kept (finished, for ``rein apply``), the others removed."""
        registry = self._registry()
        for made in list(self.live.values()):
            await self._close(made)
            if run_changes(made.record):
                registry.finish(made.record.session_id, "stopped with the server")
            else:
                remove_isolated(registry, made.record)

    async def listed(self) -> list[dict[str, Any]]:
        """``rein/isolatedSessions``: every isolated copy of the server's
        folder under the storage (this server's live ones, and the ones kept
        for ``rein apply``), oldest first, each saying whether it is live here."""
        records = await anyio.to_thread.run_sync(self._registry().all)
        folder = str(self.server.root.resolve())
        listed = []
        for record in records:
            if record.folder != folder:
                continue
            entry: dict[str, Any] = {**record.to_json(), "live": record.session_id in self.live}
            made = self.live.get(record.session_id)
            if made is not None:
                entry["title"] = made.session.title
                entry["runStatus"] = made.session.status
                # Its gates are the copy's own analyzers, not the editor's: which, for what.
                entry["analyzers"] = made.host.analyzers_line()
            if made is not None and made.session.restoring:
                # Being brought back: its git index is in use, not read now.
                entry.update(changed=[], changedError="being brought back")
            else:
                entry.update(await anyio.to_thread.run_sync(_changed, record))
            listed.append(entry)
        return listed


def _same_folder(workspace: str, root: Path) -> bool:
    """``workspace`` (a stored session's) is ``root``."""
    return bool(workspace) and Path(workspace).resolve() == root.resolve()


def _changed(record: IsolatedRecord) -> dict[str, Any]:
    """``changed``: the folder's files the run created, changed or deleted
    (as ``keep`` would bring them back); ``changedError`` when the copy
    cannot be read (removed by hand, git failed)."""
    try:
        return {"changed": [change.path for change in run_changes(record)]}
    except (GitError, OSError) as exc:
        return {"changed": [], "changedError": str(exc)}


async def _keep(host: WorkspaceHost, started: asyncio.Future[None], closing: asyncio.Event) -> None:
    """Hold ``host`` open until ``closing`` (or say why it did not start)."""
    try:
        async with host:
            started.set_result(None)
            await closing.wait()
    except Exception as exc:
        if not started.done():
            started.set_exception(exc)
        else:
            log.exception("closing the isolated workspace %s failed", host.root)
