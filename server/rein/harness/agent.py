"""The Agent: the stateful shell around :func:`~rein.harness.loop.run_loop`.

It holds the transcript, the steering and follow-up queues, the abort handle
and the listeners. ``prompt()`` runs one run, then every queued follow-up as
a run of its own, and returns the last run's result.
"""

from __future__ import annotations

import logging
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import anyio

from rein.harness._agent_accessors import ReferenceAccessors
from rein.harness.agent_state import AgentState, AgentStatus, RunTracker
from rein.harness.config import HarnessConfig, QueueMode
from rein.harness.context import ContextBudget
from rein.harness.events import AgentEnd, AgentStart, Event, FollowUpStarted
from rein.harness.gates import GatePipeline
from rein.harness.hooks import (
    AfterToolCall,
    BeforeToolCall,
    Hooks,
    PrepareNextTurn,
    TransformContext,
)
from rein.harness.loop import LoopContext, RunControl, RunResult, run_loop
from rein.harness.messages import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
)
from rein.harness.ports import Model, ModelOptions, Persistence
from rein.harness.run_types import AgentDefault, RunOptions
from rein.harness.tools import (
    ToolCallExecutor,
    ToolEnvironment,
    ToolRegistry,
    execute_tool_call,
)

__all__ = [
    "Agent",
    "AgentBusyError",
    "AgentState",
    "Listener",
    "RunOptions",
    "RunResult",
    "answer_message",
    "dangling_tool_calls",
    "repair_transcript",
]

log = logging.getLogger(__name__)

Listener = Callable[[Event], None]


class AgentBusyError(RuntimeError):
    """A prompt arrived while a run is active: steer or queue a follow-up."""


def _take(queue: deque[UserMessage], mode: QueueMode) -> list[UserMessage]:
    if not queue:
        return []
    if mode == "all":
        items = list(queue)
        queue.clear()
        return items
    return [queue.popleft()]


def _queued(message: str | UserMessage, origin: str) -> UserMessage:
    if isinstance(message, UserMessage):
        return message
    return UserMessage(content=message, origin=origin)


def _new_run_id() -> str:
    return "run_" + uuid.uuid4().hex[:12]


class Agent(ReferenceAccessors):
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
        run_id_factory: Callable[[], str] = _new_run_id,
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
        self._steering: deque[UserMessage] = deque()
        self._follow_ups: deque[UserMessage] = deque()
        self._control: RunControl | None = None
        self._running = False
        self._idle = anyio.Event()
        self._idle.set()
        self.current_run_id: str | None = None
        self.last_result: RunResult | None = None
        self.budget = ContextBudget(self.config.context_window)
        self._tracker = RunTracker()

    # -------------------------------------------------------------- listeners

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _emit(self, event: Event) -> None:
        self._tracker.observe(event)
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:
                log.exception("event listener raised on %s", event.type)

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
            queued_steering=len(self._steering),
            queued_follow_ups=len(self._follow_ups),
            waiting_for=self.waiting_for,
            last_result=self.last_result,
            run_id=self.current_run_id,
        )

    def reset(self) -> None:
        if self._running:
            raise AgentBusyError("cannot reset while a run is active; abort it first")
        self._messages.clear()
        self.clear_all_queues()
        self.last_result = None

    # ----------------------------------------------------------------- queues

    def steer(self, message: str | UserMessage) -> None:
        """Inject a message after the current assistant turn, before the next
        model call. Running tools see ``ctx.yield_requested``. Text becomes a
        user message of origin "steer"; a UserMessage is queued as it is."""
        self._steering.append(_queued(message, "steer"))

    def follow_up(self, message: str | UserMessage) -> None:
        """Queue a message that starts a new run when the agent would stop
        (text becomes a user message of origin "follow_up")."""
        self._follow_ups.append(_queued(message, "follow_up"))

    def has_queued_messages(self) -> bool:
        return bool(self._steering or self._follow_ups)

    def clear_steering_queue(self) -> None:
        self._steering.clear()

    def clear_follow_up_queue(self) -> None:
        self._follow_ups.clear()

    def clear_all_queues(self) -> None:
        self._steering.clear()
        self._follow_ups.clear()

    def drain_steering_queue(self) -> list[UserMessage]:
        """Remove and return every queued steering message."""
        items = list(self._steering)
        self._steering.clear()
        return items

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
        if self.waiting_for is not None:
            answer = next((m for m in reversed(new) if isinstance(m, UserMessage)), None)
            if answer is not None and self._answer(self.waiting_for, answer.content):
                new = [m for m in new if m is not answer and m.origin != "bootstrap"]  # type: ignore[union-attr]
        return await self._process(new, run or RunOptions())

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
        """Run again from the current transcript (its last message must be a
        user message or a tool result)."""
        if self._running:
            raise AgentBusyError("a run is already active on this agent")
        if not self._messages:
            raise ValueError("nothing to continue: the transcript is empty")
        last = self._messages[-1]
        if isinstance(last, AssistantMessage) and last.stop_reason not in ("aborted", "error"):
            raise ValueError("nothing to continue: the last message is the assistant's answer")
        return await self._process([], run or RunOptions())

    def abort(self, reason: str = "aborted by the user") -> bool:
        """Abort the active run. Returns False when there was none."""
        if self._control is None:
            return False
        self._control.abort(reason)
        return True

    async def wait_for_idle(self) -> None:
        await self._idle.wait()

    async def _process(self, new_messages: list[Message], run: RunOptions) -> RunResult:
        self._running = True
        self._idle = anyio.Event()
        self._emit(AgentStart())
        result: RunResult | None = None
        try:
            result = await self._run_once(new_messages, run)
            # Follow-ups run with the same options; carried changes were the first run's.
            run = replace(run, carried=())
            while result.status == "completed" and self._follow_ups:
                follow = _take(self._follow_ups, self.config.follow_up_mode)
                self._emit(FollowUpStarted(text="\n\n".join(m.content for m in follow)))
                result = await self._run_once(follow, run)
            return result
        finally:
            self._running = False
            self._control = None
            self.current_run_id = None
            self._emit(AgentEnd(status=result.status if result else "failed"))
            self._idle.set()

    async def _run_once(self, new_messages: Sequence[Message], run: RunOptions) -> RunResult:
        run_id = self._run_id_factory()
        self.current_run_id = run_id
        control = RunControl()
        self._control = control
        ctx = self._loop_context(run_id, run)
        length_before = len(self._messages)
        result = await run_loop(ctx, self.config, self._emit, self.model, new_messages, control)
        if self.persistence is not None:
            if len(self._messages) < length_before or any(
                isinstance(m, UserMessage) and m.origin == "compaction" for m in self._messages[:1]
            ):
                await self.persistence.rewrite(self._messages)
            await self.persistence.checkpoint()
        self.waiting_for = result.waiting_for
        self.last_result = result
        return result

    def _loop_context(self, run_id: str, run: RunOptions) -> LoopContext:
        steering = self._steering
        mode = self.config.steering_mode
        return LoopContext(
            run_id=run_id,
            messages=self._messages,
            tools=self.tools.extended(run.extra_tools) if run.extra_tools else self.tools,
            system=self.system_prompt,
            options=run.options or self.options,
            env=self.env,
            hooks=self.hooks,
            take_steering=lambda: _take(steering, mode),
            drain_steering=self.drain_steering_queue,
            steering_pending=lambda: bool(steering),
            budget=self.budget,
            gates=self.gates if isinstance(run.gates, AgentDefault) else run.gates,
            required_output=self.required_output
            if isinstance(run.required_output, AgentDefault)
            else run.required_output,
            carried=run.carried,
            tool_executor=self.tool_executor,
            wire_dump=self.wire_dump,
            on_message=self.persistence.append if self.persistence is not None else None,
            checkpoint=self.persistence.checkpoint if self.persistence is not None else None,
        )


def answer_message(placeholder: ToolResultMessage, text: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=placeholder.tool_call_id,
        tool_name=placeholder.tool_name,
        content=f"The person answered: {text.strip()}",
    )


INTERRUPTED = (
    "Interrupted: the session stopped before this call finished (the server exited). "
    "Nothing is known about its effect: check before repeating it."
)


def repair_transcript(messages: Sequence[Message]) -> tuple[list[Message], int]:
    """Roll back a transcript left by a crash: every tool call without a
    result gets an "interrupted" one, placed after its turn's results.
    Returns the repaired transcript and how many results were added."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)}
    out: list[Message] = []
    added = 0
    missing: list[ToolResultMessage] = []
    for message in messages:
        if missing and not isinstance(message, ToolResultMessage):
            out.extend(missing)
            added += len(missing)
            missing = []
        out.append(message)
        if isinstance(message, AssistantMessage):
            missing = [
                ToolResultMessage(
                    tool_call_id=c.id, tool_name=c.name, content=INTERRUPTED, is_error=True
                )
                for c in message.tool_calls
                if c.id not in answered
            ]
    out.extend(missing)
    added += len(missing)
    return out, added


def dangling_tool_calls(messages: Sequence[Message]) -> list[str]:
    """Ids of tool calls that have no result (should always be empty)."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)}
    return [
        c.id
        for m in messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
        if c.id not in answered
    ]
