"""The Agent: the stateful shell around :func:`~rein.harness.run.loop.run_loop`.

It holds the transcript, the steering and follow-up queues, the abort handle
and the listeners. ``prompt()`` runs one run, then every queued follow-up as
a run of its own, and returns the last run's result (those runs are
:mod:`rein.harness._agent_runs`).
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import anyio

from rein.harness._agent_accessors import ReferenceAccessors
from rein.harness._agent_listeners import EventListeners, Listener, Outbox
from rein.harness._agent_queues import MessageQueues, take
from rein.harness._agent_runs import PromptRuns
from rein.harness.agent_state import AgentState, AgentStatus, CancelToken, RunTracker
from rein.harness.config import (
    HarnessConfig,
    StuckToolConfig,
    ToolMisuseBreakerConfig,
)
from rein.harness.conversation.context import ContextBudget
from rein.harness.conversation.relief import DEFAULT_RELIEF, OverWindowRelief
from rein.harness.conversation.transcripts import (
    INTERRUPTED,
    answer_message,
    dangling_tool_calls,
    repair_transcript,
)
from rein.harness.cost.pricing import PriceTable
from rein.harness.events import (
    ErrorEvent,
)
from rein.harness.gating.gates import GatePipeline
from rein.harness.hooks import (
    AfterToolCall,
    BeforeToolCall,
    Hooks,
    PrepareNextTurn,
    TransformContext,
)
from rein.harness.messages import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
)
from rein.harness.ports import Model, ModelOptions, Persistence
from rein.harness.run.loop import LoopContext, RunControl, RunResult
from rein.harness.run.run_types import (
    FROM_CONFIG,
    AgentDefault,
    ChildResumer,
    FromConfig,
    ResumeCall,
    RunOptions,
)
from rein.harness.run.steering import (
    ExternalSteeringProbe,
    ExternalSteeringSource,
    Steering,
)
from rein.harness.tools import (
    ToolCallExecutor,
    ToolEnvironment,
    ToolRegistry,
    execute_tool_call,
)

__all__ = [
    "INTERRUPTED",
    "Agent",
    "AgentBusyError",
    "AgentState",
    "CancelToken",
    "Listener",
    "RunOptions",
    "RunResult",
    "answer_message",
    "dangling_tool_calls",
    "new_run_id",
    "repair_transcript",
]


# A prompt arrived while a run is active: steer or queue a follow-up. The
# one busy error of the tree, under its documented name (docs/agent-api.md).
from rein.harness.errors import BusyError as AgentBusyError


def new_run_id() -> str:
    return "run_" + uuid.uuid4().hex[:12]


class Agent(ReferenceAccessors, EventListeners, MessageQueues, PromptRuns):
    def __init__(
        self,
        model: Model,
        *,
        tools: ToolRegistry | Iterable[object] | None = None,
        config: HarnessConfig | None = None,
        system_prompt: str = "",
        options: ModelOptions | None = None,
        env: ToolEnvironment | None = None,
        hooks: Hooks | None = None,
        gates: GatePipeline | None = None,
        persistence: Persistence | None = None,
        messages: Sequence[Message] = (),
        waiting_for: str | None = None,
        run_id_factory: Callable[[], str] = new_run_id,
        external_steering_source: ExternalSteeringSource | None = None,
        external_steering_probe: ExternalSteeringProbe | None = None,
        on_run_idle_timeout: Callable[[BaseException], None] | None = None,
        on_run_watchdog_paused: Callable[[], None] | None = None,
        context_window_cap: int | None = None,
        over_window_relief: OverWindowRelief | None = DEFAULT_RELIEF,
        tool_misuse_breaker: ToolMisuseBreakerConfig | FromConfig | None = FROM_CONFIG,
        stuck_tool: StuckToolConfig | FromConfig | None = FROM_CONFIG,
        tool_executor: ToolCallExecutor = execute_tool_call,
        wire_dump: bool = False,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        transform_context: TransformContext | None = None,
        prepare_next_turn: PrepareNextTurn | None = None,
    ) -> None:
        """``hooks`` gives the four hooks at once; a hook given by its own
        keyword (``before_tool_call=`` ...) wins over the one in ``hooks``."""
        self.model = model
        if tools is None:
            tools = ToolRegistry()
        elif not isinstance(tools, ToolRegistry):
            tools = ToolRegistry(tools)  # type: ignore[arg-type]
        self.tools: ToolRegistry = tools
        self.config = config or HarnessConfig()
        self.system_prompt = system_prompt
        self.options = options or ModelOptions()
        self.env = env or ToolEnvironment()
        self.hooks = hooks or Hooks()
        overrides = {
            name: fn
            for name, fn in (
                ("before_tool_call", before_tool_call),
                ("after_tool_call", after_tool_call),
                ("transform_context", transform_context),
                ("prepare_next_turn", prepare_next_turn),
            )
            if fn is not None
        }
        if overrides:
            self.hooks = replace(self.hooks, **overrides)  # type: ignore[arg-type]
        #: Executes each validated tool call (the default runs the tool here).
        self.tool_executor: ToolCallExecutor = tool_executor
        #: Emit a ``model_request`` event (the redacted outbound payload)
        #: before every model request. Off by default: payloads are large and
        #: hosts store events only if they choose to.
        self.wire_dump = wire_dump
        self.gates = gates
        self.persistence = persistence
        #: An output tool the model must call to answer (structured output).
        self.required_output: str | None = None
        #: The ask_user call whose result the next prompt becomes.
        self.waiting_for = waiting_for
        self._messages: list[Message] = list(messages)
        self._run_id_factory = run_id_factory
        self._listeners: list[Listener] = []
        self._steering = Steering(self.config.steering_mode)
        self._steering.external_source = external_steering_source
        self._steering.external_probe = external_steering_probe
        self._steering.on_error = lambda message: self._emit(
            ErrorEvent(message=message, where="steering")
        )
        self._follow_ups: deque[UserMessage] = deque()
        self._control: RunControl | None = None
        self._token: CancelToken | None = None
        #: An abort arrived while no run's scope was open (at agent_start,
        #: between a run and its follow-up, while the store commits).
        self._abort_pending: str | None = None
        #: How the last run ended, from its ``run_end`` until the next run
        #: starts (None before the first run): tells abort() whether a run
        #: would still come (a queued follow-up after a completed run).
        self._ended: str | None = None
        #: Reports every idle-watchdog fire, with the timeout error.
        self.on_run_idle_timeout = on_run_idle_timeout
        #: Reports every idle-watchdog pause (gates, installs, compaction).
        self.on_run_watchdog_paused = on_run_watchdog_paused
        #: Async listeners' pending handling, in event order (during a run).
        self._outbox: Outbox | None = None
        self._running = False
        self._idle = anyio.Event()
        self._idle.set()
        self.current_run_id: str | None = None
        self.last_result: RunResult | None = None
        #: The effective context window instead of the configuration's
        #: (lower, or higher for an endpoint that serves more than the
        #: catalogue says); None: ``config.context_window``. Read at every run.
        self.context_window_cap = context_window_cap
        #: Makes room when a request is over the window or the provider
        #: refuses it as too long; None: the guard fails the run verbatim.
        #: May be set (attached) at any time; read at every run.
        self.over_window_relief = over_window_relief
        self._tool_misuse_breaker = tool_misuse_breaker
        self._stuck_tool = stuck_tool
        self.budget = ContextBudget(self.context_window)
        self._tracker = RunTracker()
        #: Prices the runs' tokens (``model.prices``); None: no cost is known.
        #: Read at every run.
        self.prices: PriceTable | None = None

    # --------------------------------------------------------------- policies

    @property
    def context_window(self) -> int:
        """The window the next run keeps its requests under."""
        if self.context_window_cap is not None:
            return self.context_window_cap
        return self.config.context_window

    @property
    def tool_misuse_breaker(self) -> ToolMisuseBreakerConfig | None:
        """The misuse breaker's thresholds for the next run (None: off);
        unless set, ``config.tool_misuse_breaker``."""
        if isinstance(self._tool_misuse_breaker, FromConfig):
            return self.config.tool_misuse_breaker
        return self._tool_misuse_breaker

    @tool_misuse_breaker.setter
    def tool_misuse_breaker(self, value: ToolMisuseBreakerConfig | FromConfig | None) -> None:
        self._tool_misuse_breaker = value

    @property
    def stuck_tool(self) -> StuckToolConfig | None:
        """Heartbeats and the stuck-call policy for the next run (None:
        unsupervised); unless set, ``config.stuck_tool``."""
        if isinstance(self._stuck_tool, FromConfig):
            return self.config.stuck_tool
        return self._stuck_tool

    @stuck_tool.setter
    def stuck_tool(self, value: StuckToolConfig | FromConfig | None) -> None:
        self._stuck_tool = value

    # ------------------------------------------------------------------ state

    @property
    def messages(self) -> Sequence[Message]:
        return self._messages

    @property
    def is_running(self) -> bool:
        return self._running

    @property
    def state(self) -> AgentState:
        """A read-only snapshot: status, transcript, the message being
        streamed, pending tool calls, queue lengths, waiting_for, last result."""
        status: AgentStatus = (
            "running" if self._running else "waiting" if self.waiting_for is not None else "idle"
        )
        tracker = self._tracker
        return AgentState(
            status=status,
            messages=tuple(self._messages),
            streaming_message=tracker.streaming_message() if self._running else None,
            pending_tool_calls=tracker.pending_tool_calls() if self._running else (),
            queued_steering=len(self._steering.queue),
            queued_follow_ups=len(self._follow_ups),
            waiting_for=self.waiting_for,
            last_result=self.last_result,
            run_id=self.current_run_id,
        )

    @property
    def cancel_token(self) -> CancelToken | None:
        """The active run's cancel token (None between runs): link secondary
        work to it so an abort reaches that work too."""
        return self._token

    def reset(self) -> None:
        """Clear the transcript, the queues, the waiting ask_user call and
        every per-run seed (required output, last result, the budget)."""
        if self._running:
            raise AgentBusyError("cannot reset while a run is active; abort it first")
        self._messages.clear()
        self.clear_all_queues()
        self.last_result = None
        self.waiting_for = None
        self.required_output = None
        self.current_run_id = None
        self._abort_pending = None
        self.budget = ContextBudget(self.context_window)

    async def add_note(self, message: UserMessage) -> None:
        """Add a message to the transcript between runs (a restore tells
        the model which files changed under it) and persist it now. The
        next run's model request carries it after the last answer: one more
        user message, which providers send as such (Anthropic merges it
        with the next one). Refused while a run is active."""
        if self._running:
            raise AgentBusyError("a run is active on this agent; abort it or wait for it")
        self._messages.append(message)
        if self.persistence is not None:
            self.persistence.append(message)
            await self.persistence.checkpoint()

    # ------------------------------------------------------------------- runs

    async def prompt(self, text: str, *, run: RunOptions | None = None) -> RunResult:
        """Run on ``text`` (then on every queued follow-up). ``run`` sets the
        gates, required output, model options and extra tools of these runs
        instead of the Agent's own, which stay as they are."""
        return await self.prompt_messages([UserMessage(content=text)], run=run)

    async def prompt_message(self, message: Message, *, run: RunOptions | None = None) -> RunResult:
        """Run on one message (then on every queued follow-up)."""
        return await self.prompt_messages([message], run=run)

    async def prompt_messages(
        self, messages: Sequence[Message], *, run: RunOptions | None = None
    ) -> RunResult:
        if self._running:
            raise AgentBusyError(
                "a run is already active on this agent; use steer() to redirect it "
                "or follow_up() to queue the next message"
            )
        new = list(messages)
        run = run or RunOptions()
        if self.waiting_for is not None:
            answer = next((m for m in reversed(new) if isinstance(m, UserMessage)), None)
            resume = self._resume_for(self.waiting_for, answer.content) if answer else None
            if resume is not None:
                # A subagent waits on the person: the answer resumes it.
                self.waiting_for = None
                run = replace(run, resume=resume)
                new = [m for m in new if m is not answer and m.origin != "bootstrap"]  # type: ignore[union-attr]
            elif answer is not None and self._answer(self.waiting_for, answer.content):
                new = [m for m in new if m is not answer and m.origin != "bootstrap"]  # type: ignore[union-attr]
        return await self._process(new, run)

    def _resume_for(self, tool_call_id: str, text: str) -> ResumeCall | None:
        """The waiting call resumed by ``text`` when it is not an ask_user
        of this agent's own (``env.subagents`` knows its waiting children)."""
        spawner = self.env.subagents
        if isinstance(spawner, ChildResumer):
            return spawner.resumer(tool_call_id, text)
        return None

    def _answer(self, tool_call_id: str, text: str) -> bool:
        """Make ``text`` the result of the waiting ask_user call."""
        for index in range(len(self._messages) - 1, -1, -1):
            message = self._messages[index]
            if isinstance(message, ToolResultMessage) and message.tool_call_id == tool_call_id:
                replacement = answer_message(message, text)
                self._messages[index] = replacement
                if self.persistence is not None:
                    self.persistence.replace(index, replacement)
                self.waiting_for = None
                return True
        self.waiting_for = None
        return False

    async def continue_run(self, *, run: RunOptions | None = None) -> RunResult:
        """Run again from the current transcript. Its last message must be a
        user message or a tool result, unless steering or follow-up messages
        are queued: then they start the run."""
        if self._running:
            raise AgentBusyError("a run is already active on this agent")
        last = self._messages[-1] if self._messages else None
        answered = isinstance(last, AssistantMessage) and last.stop_reason not in (
            "aborted",
            "error",
        )
        if last is None or answered:
            queued = self._steering.drain() if self._steering.pending else []
            if not queued and self._follow_ups:
                queued = take(self._follow_ups, self.config.follow_up_mode)
            if not queued:
                if last is None:
                    raise ValueError("nothing to continue: the transcript is empty")
                raise ValueError(
                    "nothing to continue: the last message is the assistant's answer "
                    "and nothing is queued"
                )
            return await self._process(list(queued), run or RunOptions())
        return await self._process([], run or RunOptions())

    def abort(self, reason: str = "aborted by the user") -> bool:
        """Abort the active run, or stop what would run next when no run's
        scope is open (at agent_start, between a run and its queued
        follow-up, while the store commits): that run ends ``aborted`` at
        once and the caller's result says ``aborted``. Returns False when
        the Agent is idle, or when its last run has ended and no run would
        follow (nothing is left to stop). Also disarms the idle watchdog
        (it lives in the run's scope)."""
        if not self._running:
            return False
        if self._control is not None:
            self._control.abort(reason)
            if self._token is not None:
                self._token._cancel()
        elif self._ended is not None and not (self._ended == "completed" and self._follow_ups):
            return False
        self._abort_pending = self._abort_pending or reason
        return True

    async def wait_for_idle(self) -> None:
        """Resolves when the current run and every awaited (async) listener
        have finished, agent_end included."""
        await self._idle.wait()

    def _loop_context(self, run_id: str, run: RunOptions) -> LoopContext:
        self._steering.mode = self.config.steering_mode
        # The configuration and the cap may have changed since the last run.
        self.budget.window = self.context_window
        return LoopContext(
            run_id=run_id,
            messages=self._messages,
            tools=self.tools.extended(run.extra_tools) if run.extra_tools else self.tools,
            system=self.system_prompt if run.system_prompt is None else run.system_prompt,
            options=run.options or self.options,
            env=self.env,
            hooks=self.hooks,
            steering=self._steering,
            budget=self.budget,
            gates=self.gates if isinstance(run.gates, AgentDefault) else run.gates,
            required_output=self.required_output
            if isinstance(run.required_output, AgentDefault)
            else run.required_output,
            carried=run.carried,
            tool_executor=self.tool_executor,
            wire_dump=self.wire_dump,
            on_message=self.persistence.append if self.persistence is not None else None,
            on_replace=self.persistence.replace if self.persistence is not None else None,
            resume=run.resume,
            checkpoint=self.persistence.checkpoint if self.persistence is not None else None,
            over_window_relief=self.over_window_relief,
            tool_misuse_breaker=self.tool_misuse_breaker,
            stuck_tool=self.stuck_tool,
            prices=self.prices,
        )
