"""``rein acp``'s workspaces: one :class:`~rein.hosting.workspace_host.WorkspaceHost`
per distinct ``cwd``, made on the first ``session/new`` or ``session/load``
for it and shared by all the sessions of that folder, closed when the
process ends.

Each host is wired to the client: files through ``fs/*`` when it offers
them (:class:`~rein.acp.client_fs.ClientFsWorkspace`, whose texts the
headless analyzers judge), commands in its terminal when it offers one,
approvals through ``session/request_permission`` and questions as messages.
The store is the one ``rein run`` uses (``rein sessions`` lists ACP
sessions; ``rein run --resume`` continues them).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.abc

from rein.acp.ask import ClientUserChannel
from rein.acp.client_fs import ClientFsWorkspace
from rein.acp.context import ClientLink, current_session
from rein.acp.hook_ports import AcpHookPorts
from rein.acp.permissions import PermissionApprover
from rein.acp.terminal import client_terminal
from rein.acp.witness import WitnessedWorkspace
from rein.config import ReinConfig
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.ports import Approver, CommandExecutor, Model, UserChannel
from rein.hosting.workspace_host import WorkspaceHost
from rein.providers.config import ModelConfig
from rein.tools.approval_rules import RuleBook

__all__ = ["AcpHosts"]

log = logging.getLogger(__name__)

#: Says a text to a session's client (an agent message).
Tell = Callable[[str, str], Awaitable[None]]
#: A session's tool is about to change a file: (session id, path, its text before).
BeforeChange = Callable[[str, str, str], None]


class AcpHosts:
    """The workspace hosts of one ``rein acp`` process, by folder.

    ``model_factory`` makes a session's model from its ``model``
    configuration; ``tell(session_id, text)`` says a text to the client
    (the questions of ``ask_user``); ``before_change(session_id, path, text)``
    hears a file's text before a session's tool changes it (the edit's
    diff); ``storage`` is the session store's
    folder; ``analyzers`` and ``watch`` as for :class:`WorkspaceHost`.
    Each host runs in a task of ``tg`` (a host's task group must be left by
    the task that entered it; requests come and go) until :meth:`close`.
    """

    def __init__(
        self,
        config: ReinConfig,
        link: ClientLink,
        model_factory: Callable[[ModelConfig], Model],
        tell: Tell,
        before_change: BeforeChange,
        tg: anyio.abc.TaskGroup,
        *,
        storage: str | Path | None,
        analyzers: tuple[AnalyzerSpec, ...] | None = None,
        watch: bool = True,
    ) -> None:
        self.config = config
        self.link = link
        self.model_factory = model_factory
        self.tell = tell
        self.before_change = before_change
        self.storage = storage
        self.analyzers = analyzers
        self.watch = watch
        self.hosts: dict[Path, WorkspaceHost] = {}
        #: A host closed on its own (:meth:`drop`): set, its task ends.
        self._dropping: dict[Path, anyio.Event] = {}
        self._ended: dict[Path, anyio.Event] = {}
        self._opening: dict[Path, asyncio.Lock] = {}
        self._approvers: dict[str, PermissionApprover] = {}
        #: Each session's approval rules ("always allow"), as long as rein acp runs.
        self._rule_books: dict[str, RuleBook] = {}
        self._tg = tg
        self._closing = anyio.Event()
        self._recovered = False

    def close(self) -> None:
        """Let every host close (their tasks end once they have)."""
        self._closing.set()

    async def host(self, root: Path, *, client_view: bool = True) -> WorkspaceHost:
        """The host of ``root`` (an absolute, resolved folder), started on
        first use; its start-up error is raised to the caller.
        ``client_view=False``: files on the disk only, not through the
        client's ``fs/*`` (an isolated session's copy, which the editor
        does not show)."""
        if root in self.hosts:
            return self.hosts[root]
        if self._closing.is_set():
            raise RuntimeError("rein acp is closing: no new workspace")
        lock = self._opening.setdefault(root, asyncio.Lock())
        async with lock:
            if root not in self.hosts:
                host = self._make(root, client_view=client_view)
                started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self._dropping[root] = anyio.Event()
                self._ended[root] = anyio.Event()
                self._tg.start_soon(self._keep, host, started)
                await started
                self.hosts[root] = host
        return self.hosts[root]

    async def _keep(self, host: WorkspaceHost, started: asyncio.Future[None]) -> None:
        """Run ``host`` until the process ends (or say why it did not start)."""
        dropping = self._dropping[host.root]
        try:
            async with host:
                started.set_result(None)
                await host.analyzers_started()
                log.info("workspace %s: %s", host.root, host.analyzers_line())
                async with anyio.create_task_group() as waits:

                    async def until(event: anyio.Event) -> None:
                        await event.wait()
                        waits.cancel_scope.cancel()

                    waits.start_soon(until, self._closing)
                    waits.start_soon(until, dropping)
        except Exception as exc:
            if not started.done():
                started.set_exception(exc)
            else:
                log.exception("closing the workspace host of %s failed", host.root)
        finally:
            self._ended[host.root].set()

    async def drop(self, root: Path) -> None:
        """Close the host of ``root`` now (an isolated session's copy that
        is about to be removed) and wait until it has."""
        if self.hosts.pop(root, None) is None:
            return
        self._dropping[root].set()
        await self._ended[root].wait()

    # ---------------------------------------------------------------- ports

    def _make(self, root: Path, *, client_view: bool = True) -> WorkspaceHost:
        views: list[ClientFsWorkspace] = []

        def client_fs(disk: DiskWorkspace) -> WitnessedWorkspace:
            view = ClientFsWorkspace(disk, self.link, current_session.get)
            views.append(view)
            return WitnessedWorkspace(view, self._witness)

        host = WorkspaceHost(
            root,
            self.config,
            self.model_factory,
            analyzers=self.analyzers,
            approver=self._approver,
            user=self._user,
            commands=lambda session_id: self._commands(root),
            approval_rules=lambda session_id: self._rules(session_id, root),
            wrap_workspace=client_fs if client_view else None,
            hook_ports=AcpHookPorts(
                self.link, self.storage, timeout_s=self.config.approval.timeout_ms / 1000
            ),
            watch=self.watch,
            storage=self.storage,
            # Only the first host of this process marks the sessions a dead
            # process left "running": a later one would mark the first's runs.
            recover_interrupted=not self._recovered,
        )
        self._recovered = True
        # A read that shows the person's unsaved change: the analyzers look
        # again, so they judge the buffer before Rein changes the file.
        for view in views:
            view.on_text = lambda path: host.pool.refresh([path])
        return host

    def _witness(self, path: str, text: str) -> None:
        session_id = current_session.get()
        if session_id is not None:
            self.before_change(session_id, path, text)

    def _approver(self, session_id: str) -> Approver:
        # One per session, kept: its "always" answers outlive a rebuild of
        # the session (a mode change).
        approver = self._approvers.get(session_id)
        if approver is None:
            approver = PermissionApprover(
                self.link, session_id, timeout_s=self.config.approval.timeout_ms / 1000
            )
            self._approvers[session_id] = approver
        return approver

    def _rules(self, session_id: str, root: Path) -> RuleBook:
        # The rule book rein serve uses; only the session's rules (ACP
        # offers no workspace scope), kept like the approver.
        book = self._rule_books.get(session_id)
        if book is None:
            book = self._rule_books[session_id] = RuleBook(root=str(root))
        return book

    def _user(self, session_id: str) -> UserChannel:
        async def tell(text: str) -> None:
            await self.tell(session_id, text)

        return ClientUserChannel(self.link, session_id, tell)

    def _commands(self, root: Path) -> CommandExecutor | None:
        return client_terminal(
            self.link,
            root,
            current_session.get,
            pass_env=self.config.tools.pass_env,
        )
