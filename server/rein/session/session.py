"""One session: its agents (the agent, or plan mode's planner and executor
and their flow), what it was built with, and its runs as tasks."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from rein.harness import Agent, RunResult, Usage
from rein.harness.agent import new_run_id
from rein.harness.errors import BusyError

if TYPE_CHECKING:
    from rein.checkpoints.capture import CheckpointCapture
    from rein.checkpoints.model import CheckpointStore, FileChange, ReviewStatus
    from rein.checkpoints.review import Reviewer
    from rein.flows.plan_act import PlanActFlow
    from rein.harness.events import Event
    from rein.harness.gating.gates import GatePipeline
    from rein.harness.tools import ToolRegistry

__all__ = ["Session", "SessionStatus", "gates_closed", "new_session_id"]

#: Gate pipelines being closed (a task is kept until it is done).
_CLOSING: set[asyncio.Task[None]] = set()

log = logging.getLogger(__name__)

SessionStatus = Literal[
    "idle", "running", "completed", "failed", "aborted", "waiting", "interrupted"
]

Listener = Callable[["Event"], None]


def new_session_id() -> str:
    return "ses_" + uuid.uuid4().hex[:12]


@dataclass(eq=False)
class Session:
    id: str
    #: The agent (in plan mode: the executor).
    agent: Agent
    title: str = ""
    mode: str = "agent"
    origin: str = "chat"
    status: SessionStatus = "idle"
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    task: asyncio.Future[RunResult] | None = None
    #: Extra per-session cleanup (unsubscribe, ...).
    closers: list[Callable[[], None]] = field(default_factory=list)
    #: Called after every run (the language server flushes its event stream).
    on_run_end: list[Callable[[], None]] = field(default_factory=list)
    #: Awaited before every run, inside its task (MCP servers start and the
    #: tool set and system prompt are brought up to date).
    before_run: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    #: Awaited once when the host ends the session, with the reason
    #: (:func:`rein.session.ending.end_sessions`: SessionEnd hooks).
    on_end: list[Callable[[str], Awaitable[None]]] = field(default_factory=list)
    #: Model turns and token usage over all the session's runs.
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    #: Plan mode: the plan-act flow and its planner (``agent`` is the executor).
    flow: PlanActFlow | None = None
    planner: Agent | None = None
    #: What it was built with (the same for every host; tests compare them).
    tools: ToolRegistry | None = None
    gates: GatePipeline | None = None
    system_prompt: str = ""
    planner_prompt: str = ""
    #: Listeners of the plan-act flow's own events (plan transitions).
    flow_listeners: list[Listener] = field(default_factory=list)
    #: Where the session's checkpoints live (None: checkpoints are off).
    checkpoints: CheckpointStore | None = None
    #: A restore is writing files (:mod:`rein.session.restoring`): no run starts.
    restoring: bool = False
    #: What records the session's runs' changes into ``checkpoints``.
    capture: CheckpointCapture | None = None
    #: The net change per path of the last prompt's runs (its ``changes``).
    last_changes: list[FileChange] = field(default_factory=list)
    #: Keeps or undoes reviewed changes (None: checkpoints are off).
    reviewer: Reviewer | None = None
    #: ``approval.write: "review"``: a prompt's changed files end pending.
    review_edits: bool = False
    #: The MCP tools it offers (a ``rein.mcp.offer.McpOffer``; None: no MCP servers).
    mcp: Any = None
    #: The review state per path of the last prompt's changes.
    last_reviews: dict[str, ReviewStatus] = field(default_factory=dict)
    #: The ``before_run`` preparations of the starting run (abortable).
    _preparing: asyncio.Future[None] | None = field(default=None, init=False, repr=False)
    #: Why they were aborted (None: they were not).
    _prepare_aborted: str | None = field(default=None, init=False, repr=False)
    _ended: bool = field(default=False, init=False, repr=False)
    #: Being closed (``rein/closeSession``): it takes no new prompt.
    closing: bool = field(default=False, init=False)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Every event of the session: the agent's, the planner's and the
        plan's. Returns the unsubscribe function."""
        offs = [self.agent.subscribe(listener)]
        if self.planner is not None:
            offs.append(self.planner.subscribe(listener))
        self.flow_listeners.append(listener)

        def unsubscribe() -> None:
            for off in offs:
                off()
            if listener in self.flow_listeners:
                self.flow_listeners.remove(listener)

        return unsubscribe

    def emit_flow(self, event: Event) -> None:
        for listener in list(self.flow_listeners):
            try:
                listener(event)
            except Exception:
                log.exception("a session listener raised")

    def abort(self, reason: str) -> bool:
        aborted = False
        preparing = self._preparing
        if preparing is not None and not preparing.done():
            # Before the run: MCP servers may be starting (up to their
            # start bound); the run does not start at all.
            self._prepare_aborted = reason
            preparing.cancel()
            aborted = True
        aborted = self.agent.abort(reason) or aborted
        if self.planner is not None:
            aborted = self.planner.abort(reason) or aborted
        if self.flow is not None:  # also between two runs of the flow
            aborted = self.flow.abort(reason) or aborted
        return aborted

    @property
    def current_run_id(self) -> str | None:
        if self.planner is not None and self.planner.current_run_id:
            return self.planner.current_run_id
        return self.agent.current_run_id

    @property
    def fresh(self) -> bool:
        """Nothing has been said in this session yet."""
        planner = self.planner
        return not self.agent.messages and (planner is None or not planner.messages)

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def touch(self) -> None:
        self.updated_at = time.time()

    def refuse_if_running(self) -> None:
        """BusyError while a run is active: a new prompt must steer it or
        follow it up instead (the one busy message every host answers)."""
        if self.busy:
            raise BusyError(
                f"session {self.id} is already running a task; use rein/steer to redirect "
                "it or rein/followUp to queue this message"
            )

    async def run(self, start: Callable[[], Coroutine[Any, Any, RunResult]]) -> RunResult:
        """Run ``start()`` as this session's task; resolve when it ends.
        Cancelling the caller aborts the run and waits (bounded) until its
        transcript is consistent."""
        self.refuse_if_running()
        if self.restoring:
            raise BusyError(
                f"session {self.id} is restoring files; send the prompt when the restore is done"
            )
        self.status = "running"
        self.touch()
        self.task = asyncio.ensure_future(self._prepared(start))
        try:
            result: RunResult = await asyncio.shield(self.task)
        except asyncio.CancelledError:
            self.abort("cancelled by the client")
            try:
                await asyncio.wait_for(asyncio.shield(self.task), 30)
            except Exception:
                log.exception("session %s: abort after cancel did not finish cleanly", self.id)
            raise
        finally:
            self.touch()
            for closer in self.on_run_end:
                closer()
            if self.task is not None and self.task.done() and not self.task.cancelled():
                exc = self.task.exception()
                if exc is None:
                    self.status = self.task.result().status
                else:
                    self.status = "failed"
        return result

    async def _prepared(self, start: Callable[[], Coroutine[Any, Any, RunResult]]) -> RunResult:
        if self.before_run:
            self._prepare_aborted = None
            self._preparing = asyncio.ensure_future(self._prepare())
            try:
                await self._preparing
            except asyncio.CancelledError:
                reason = self._prepare_aborted
                if reason is None:
                    raise  # the run's own task was cancelled
                return RunResult(
                    new_run_id(), "aborted", error=f"aborted before the run started: {reason}"
                )
            finally:
                self._preparing = None
        return await start()

    async def _prepare(self) -> None:
        for prepare in list(self.before_run):
            await prepare()

    async def end(self, reason: str) -> None:
        """The host ends the session (``reason``: SessionEnd's): ``on_end``
        is awaited once; what raises is logged, the others go on."""
        if self._ended:
            return
        self._ended = True
        for end in list(self.on_end):
            try:
                await end(reason)
            except Exception:
                log.exception("session %s: an end callback raised", self.id)

    def close(self) -> None:
        for closer in self.closers:
            closer()
        self.closers.clear()
        if self.gates is not None:
            _close_later(self.gates)


def _close_later(gates: GatePipeline) -> None:
    """Close a closed session's gates (their kept processes) on the running
    loop; without one (Rein is ending) they die with Rein's process."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    task = loop.create_task(gates.close())
    _CLOSING.add(task)
    task.add_done_callback(_CLOSING.discard)


#: The longest :func:`gates_closed` waits (a warm pytest's close waits at
#: most 10 s for its process, the shadow trees' removal less).
GATES_CLOSED_BOUND_S = 15.0


async def gates_closed(timeout_s: float = GATES_CLOSED_BOUND_S) -> None:
    """Wait, at most ``timeout_s``, for the gates of the sessions closed on
    this event loop to be closed (a host's end, before its loop ends: a
    close cut short left its warm pytest's process unreaped, its transport
    unclosed past the loop). Those of a loop that ended are forgotten."""
    loop = asyncio.get_running_loop()
    for task in [t for t in _CLOSING if t.get_loop().is_closed()]:
        _CLOSING.discard(task)
    mine = [t for t in _CLOSING if t.get_loop() is loop]
    if not mine:
        return
    _done, pending = await asyncio.wait(mine, timeout=timeout_s)
    if pending:
        log.warning("%d closed session(s)' gates not closed within %g s", len(pending), timeout_s)
