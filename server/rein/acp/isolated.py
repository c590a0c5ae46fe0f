"""Isolated sessions over ACP: ``session/new`` with ``_meta: {"rein":
{"isolated": true}}`` runs the session in its own copy of ``cwd`` (a git
worktree or a copy, :mod:`rein.isolation`) over a host of the copy on the
disk (the client's buffers are the person's, not the copy's), and the
extension method ``_rein/isolatedHunks`` lists its hunks against the
client's view of ``cwd`` (clean or conflicting), and ``_rein/applyIsolated``
brings its changes back (every clean hunk, or the ``hunks`` kept) through
the client's buffers of ``cwd`` (``fs/write_text_file``, one generation)
as a run of the person's open session (``intoSessionId``) or of a new
session of ``cwd``, whose gates judge it (the answer's
``gates``; its checkpoint reverts the whole apply), keeps them as a
branch, or discards them (docs/acp.md)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from acp import RequestError

from rein.acp import errors
from rein.acp.context import current_session
from rein.acp.host import AcpHosts
from rein.harness.errors import BusyError, ConfigError
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

    def _record(self, session_id: str) -> IsolatedRecord:
        record = self.records.get(session_id)
        if record is None:
            raise errors.invalid_field("sessionId", f"{session_id!r} is not an isolated session")
        return record

    async def hunks(self, session_id: object, session: Session | None = None) -> dict[str, Any]:
        """``_rein/isolatedHunks``: the copy's hunks against the client's
        view of the folder now, each clean or a conflict with both sides.
        No prompt of ``session`` (the live one) starts while its copy's
        changes are read (listing them stages the copy's index)."""
        if not isinstance(session_id, str):
            raise errors.invalid_field("sessionId", "an isolated session's id is required")
        record = self._record(session_id)
        try:
            async with AsyncExitStack() as held:
                if session is not None:
                    await held.enter_async_context(
                        writing_files(session, "listing the isolated copy's hunks")
                    )
                return await self._hunks(session_id, record)
        except BusyError as exc:
            raise errors.busy_now(session_id, exc) from exc

    async def _hunks(self, session_id: str, record: IsolatedRecord) -> dict[str, Any]:
        try:
            changes = await anyio.to_thread.run_sync(run_changes, record)
        except GitError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from exc
        folder = await self.hosts.host(Path(record.folder))
        token = current_session.set(session_id)  # the client's fs calls name the session
        try:
            reviewed = await review_changes(
                changes, folder.workspace, can_branch=record.kind == "git"
            )
        finally:
            current_session.reset(token)
        return {"sessionId": session_id, "files": hunks_json(changes, reviewed)}

    async def into(self, session_id: str, into_id: object, into: Session | None) -> Session:
        """The person's open session (``intoSessionId``) an apply of
        ``session_id`` goes into: a live, idle session of the same folder."""
        if not isinstance(into_id, str) or not into_id:
            raise errors.invalid_field("intoSessionId", "a session id (string)")
        if into_id in self.records:
            raise errors.invalid_field("intoSessionId", f"{into_id!r} is isolated")
        folder = await self.hosts.host(Path(self._record(session_id).folder))
        if into is None or folder.manager.sessions.get(into_id) is not into:
            raise errors.invalid_field(
                "intoSessionId", f"no open session {into_id!r} of the folder"
            )
        if into.busy or into.restoring or folder.manager.in_use(into_id):
            raise errors.invalid_field("intoSessionId", f"the session {into_id!r} is running")
        return into

    async def bring_back(
        self,
        session_id: str,
        params: dict[str, Any],
        session: Session | None = None,
        into: Session | None = None,
    ) -> dict[str, Any]:
        """``_rein/applyIsolated`` for a session that is not running (into
        ``into``, the person's open session, when given); what cannot be
        done (a branch that exists, git failing) is InvalidParams with the
        reason, and nothing changes. No prompt of ``session`` (the live
        one) or of ``into`` starts while its copy is brought back or
        removed."""
        try:
            async with AsyncExitStack() as held:
                if session is not None:
                    await held.enter_async_context(
                        writing_files(session, "bringing the isolated copy back")
                    )
                if into is not None:
                    # A prompt of the open session may have started since into().
                    folder = await self.hosts.host(Path(self._record(session_id).folder))
                    in_use = folder.manager.in_use(into.id)
                    await held.enter_async_context(
                        writing_files(into, "applying an isolated session into it", in_use=in_use)
                    )
                return await self._bring_back(session_id, params, into)
        except BusyError as exc:
            raise errors.busy_now(session_id, exc) from exc
        except (ConfigError, GitError) as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from exc

    async def _bring_back(
        self, session_id: str, params: dict[str, Any], into: Session | None
    ) -> dict[str, Any]:
        record = self._record(session_id)
        action = params.get("action")
        if action not in ACTIONS:
            raise errors.invalid_field("action", "one of keep, discard, branch")
        branch = params.get("branch")
        if action == "branch" and (not isinstance(branch, str) or not branch):
            raise errors.invalid_field("branch", "a branch name is needed with action branch")
        keep = params.get("hunks")
        if keep is not None and (
            action != "keep"
            or not isinstance(keep, list)
            or not keep
            or not all(isinstance(k, str) for k in keep)
        ):
            raise errors.invalid_field(
                "hunks", "a non-empty list of hunk ids, with action keep only"
            )
        if into is not None and action != "keep":
            raise errors.invalid_field("intoSessionId", "with action keep only")
        if action == "branch":
            assert isinstance(branch, str)
            commit = await anyio.to_thread.run_sync(keep_as_branch, record, branch)
            await self._remove(record)
            return {"applied": [], "conflicts": [], "branch": branch, "commit": commit}
        if action == "discard":
            await self._remove(record)
            return {"applied": [], "conflicts": [], "discarded": True}
        changes = await anyio.to_thread.run_sync(run_changes, record)
        wrong = unknown_hunks(keep, changes) if keep is not None else ""
        if wrong:
            raise errors.invalid_field("hunks", wrong)
        folder = await self.hosts.host(Path(record.folder))
        title = f"Apply isolated session {session_id}"
        target = into or folder.manager.new(SessionSpec(mode="agent", origin="acp", title=title))
        token = current_session.set(session_id)  # the client's fs calls name the session
        try:
            brought = await bring_back_into(
                target,
                folder.workspace,
                changes,
                title=title,
                can_branch=record.kind == "git",
                keep=keep,
                named=into is None,
            )
        finally:
            current_session.reset(token)
        if not brought.result.applied and into is None:
            folder.manager.discard(target)  # nothing of it to keep
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
