"""Isolated sessions over ACP: ``session/new`` with ``_meta: {"rein":
{"isolated": true}}`` runs the session in its own copy of ``cwd`` (a git
worktree or a copy, :mod:`rein.isolation`) over a host of the copy on the
disk (the client's buffers are the person's, not the copy's), and the
extension method ``_rein/applyIsolated`` brings its changes back through
the client's buffers of ``cwd`` (``fs/write_text_file``, one generation)
as a run of a new session of ``cwd`` whose gates judge it (the answer's
``gates``; its checkpoint reverts the whole apply), keeps them as a
branch, or discards them (docs/acp.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from acp import RequestError

from rein.acp import errors
from rein.acp.context import current_session
from rein.acp.host import AcpHosts
from rein.harness.errors import ConfigError
from rein.hosting.isolated_apply import bring_back_into
from rein.hosting.workspace_host import WorkspaceHost
from rein.isolation import GitError
from rein.isolation.bring_back import keep_as_branch, run_changes
from rein.isolation.cleanup import remove_isolated, sweep
from rein.isolation.registry import IsolatedRecord, Registry
from rein.isolation.worktree import create_isolated
from rein.session import Session, SessionSpec, new_session_id
from rein.session.restoring import writing_files

__all__ = ["AcpIsolation"]

ACTIONS = ("keep", "discard", "branch")


class AcpIsolation:
    """The isolated sessions of one ``rein acp`` process, by session id."""

    def __init__(self, hosts: AcpHosts, storage: str | Path) -> None:
        self.hosts = hosts
        self.registry = Registry(storage)
        self.records: dict[str, IsolatedRecord] = {}

    async def create(self, folder: Path) -> IsolatedRecord:
        """The copy of ``folder`` for a new session (what crashed runs left
        is removed first)."""
        await anyio.to_thread.run_sync(sweep, self.registry)
        record = await anyio.to_thread.run_sync(
            create_isolated, folder, self.registry, new_session_id()
        )
        self.records[record.session_id] = record
        return record

    async def start(self, folder: Path) -> tuple[WorkspaceHost, Session]:
        """A new session in its own copy of ``folder``, over a host of the
        copy on the disk."""
        try:
            record = await self.create(folder)
        except GitError as exc:
            raise RequestError.internal_error({"details": str(exc)}) from exc
        try:
            host = await self.hosts.host(record.root, client_view=False)
            spec = SessionSpec(mode="agent", origin="acp", session_id=record.session_id)
            return host, host.manager.new(spec)
        except BaseException:
            await self.forget(record)
            raise

    async def forget(self, record: IsolatedRecord) -> None:
        """A session that could not start: its copy goes."""
        self.records.pop(record.session_id, None)
        await self.hosts.drop(record.root)
        await anyio.to_thread.run_sync(remove_isolated, self.registry, record)

    async def bring_back(
        self, session_id: str, params: dict[str, Any], session: Session | None = None
    ) -> dict[str, Any]:
        """``_rein/applyIsolated`` for a session that is not running; what
        cannot be done (a branch that exists, git failing) is InvalidParams
        with the reason, and nothing changes. No prompt of ``session`` (the
        live one) starts while its copy is brought back or removed."""
        try:
            if session is None:
                return await self._bring_back(session_id, params)
            async with writing_files(session, "bringing the isolated copy back"):
                return await self._bring_back(session_id, params)
        except (ConfigError, GitError) as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from exc

    async def _bring_back(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        record = self.records.get(session_id)
        if record is None:
            raise errors.invalid_field("sessionId", f"{session_id!r} is not an isolated session")
        action = params.get("action")
        if action not in ACTIONS:
            raise errors.invalid_field("action", "one of keep, discard, branch")
        branch = params.get("branch")
        if action == "branch" and (not isinstance(branch, str) or not branch):
            raise errors.invalid_field("branch", "a branch name is needed with action branch")
        if action == "branch":
            assert isinstance(branch, str)
            commit = await anyio.to_thread.run_sync(keep_as_branch, record, branch)
            await self._remove(record)
            return {"applied": [], "conflicts": [], "branch": branch, "commit": commit}
        if action == "discard":
            await self._remove(record)
            return {"applied": [], "conflicts": [], "discarded": True}
        changes = await anyio.to_thread.run_sync(run_changes, record)
        folder = await self.hosts.host(Path(record.folder))
        title = f"Apply isolated session {session_id}"
        into = folder.manager.new(SessionSpec(mode="agent", origin="acp", title=title))
        token = current_session.set(session_id)  # the client's fs calls name the session
        try:
            brought = await bring_back_into(
                into, folder.workspace, changes, title=title, can_branch=record.kind == "git"
            )
        finally:
            current_session.reset(token)
        if not brought.result.applied:
            folder.manager.discard(into)  # nothing of it to keep
        if not brought.result.conflicts:
            await self._remove(record)
        return brought.to_json()

    async def _remove(self, record: IsolatedRecord) -> None:
        self.records.pop(record.session_id, None)
        await self.hosts.drop(record.root)
        await anyio.to_thread.run_sync(remove_isolated, self.registry, record)

    def close(self) -> None:
        """``rein acp`` ends: a copy with changes is kept for ``rein apply``,
        the others removed."""
        for record in list(self.records.values()):
            if run_changes(record):
                self.registry.finish(record.session_id, "stopped with rein acp")
            else:
                remove_isolated(self.registry, record)
        self.records.clear()
