"""Tool calls inside a run: validation, hooks, supervision, results.

:class:`ToolCalls` is the part of the loop's run state that executes the
tool calls of one assistant turn (parallel or sequential), supervises them
(heartbeats, a hard time limit, the misuse breaker) and appends exactly one
result per call, in call order, also on abort. Every failure becomes an
``is_error`` result the model can read.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.abc
from pydantic import ValidationError

from rein.harness.breaker import ToolMisuseBreaker
from rein.harness.config import HarnessConfig
from rein.harness.errors import ToolError
from rein.harness.events import ErrorEvent, Event, ToolCallEnd, ToolCallStart, ToolCallUpdate
from rein.harness.hooks import Block
from rein.harness.messages import Message, ToolCall, ToolResultMessage
from rein.harness.tools import ToolContext, ToolResult

if TYPE_CHECKING:
    from rein.harness.loop import LoopContext

__all__ = ["ToolCalls", "call_hook", "format_validation_error", "truncate_tool_output"]

log = logging.getLogger(__name__)

Emit = Callable[[Event], None]

_UPDATE_KINDS: dict[str, Literal["output", "heartbeat", "status"]] = {
    "output": "output",
    "heartbeat": "heartbeat",
    "status": "status",
}


def format_validation_error(tool: str, exc: ValidationError) -> str:
    lines = [f"Invalid arguments for {tool}:"]
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        lines.append(f"  - {loc}: {err['msg']}")
    lines.append("Fix the arguments and call the tool again.")
    return "\n".join(lines)


def truncate_tool_output(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters, keeping head and tail, with a
    marker that says how much was cut and how to see the rest."""
    if len(text) <= limit:
        return text
    marker_room = 200
    keep = max(limit - marker_room, 100)
    head = keep * 2 // 3
    tail = keep - head
    cut = len(text) - head - tail
    cut_lines = text.count("\n", head, len(text) - tail)
    marker = (
        f"\n[... {cut} characters ({cut_lines} lines) cut from this result. "
        "Read the rest with read_file offset/limit, or narrow the search ...]\n"
    )
    return text[:head] + marker + text[len(text) - tail :]


async def call_hook(emit: Emit, name: str, fn: Callable[..., Any] | None, *args: Any) -> Any:
    if fn is None:
        return None
    try:
        result = fn(*args)
        if inspect.isawaitable(result):
            result = await result
        return result
    except Exception as exc:
        log.exception("hook %s raised", name)
        emit(
            ErrorEvent(
                message=f"hook {name} raised {type(exc).__name__}: {exc}", where=f"hook:{name}"
            )
        )
        return None


class ToolCalls:
    """Tool execution for the loop's run (``_Run`` in loop.py)."""

    # Provided by the run.
    ctx: LoopContext
    config: HarnessConfig
    breaker: ToolMisuseBreaker
    run_state: dict[str, Any]
    tools_running: int
    task_group: anyio.abc.TaskGroup | None
    waiting_for: list[tuple[str, str]]
    terminal: dict[str, Any] | None
    terminal_text: str | None
    pending_calls: list[ToolCall]
    pending_results: list[ToolResultMessage | None]
    started_calls: set[str]
    ended_calls: set[str]
    running_calls: dict[str, tuple[str, float]]
    supervisor_started: bool

    def emit(self, event: Event) -> None:
        raise NotImplementedError

    def append_with_events(self, message: Message) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ tools

    async def execute_tools(self, calls: list[ToolCall]) -> None:
        self.pending_calls = calls
        self.pending_results = [None] * len(calls)
        self.started_calls = set()
        self.ended_calls = set()
        self.tools_running += 1
        try:
            if self.config.tool_execution == "parallel" and len(calls) > 1:
                async with anyio.create_task_group() as tg:
                    for index, call in enumerate(calls):
                        tg.start_soon(self.run_tool, index, call)
            else:
                for index, call in enumerate(calls):
                    await self.run_tool(index, call)
        finally:
            self.tools_running -= 1
        self.commit_tool_results(None)

    def commit_tool_results(self, abort_reason: str | None) -> None:
        """Append one result per pending call, in call order. On abort, calls
        without a result get an "aborted" one."""
        for index, call in enumerate(self.pending_calls):
            result = self.pending_results[index]
            if result is None:
                text = f"Tool call aborted: {abort_reason or 'the run ended'}"
                result = ToolResultMessage(
                    tool_call_id=call.id, tool_name=call.name, content=text, is_error=True
                )
                if call.id not in self.started_calls:
                    self.emit(
                        ToolCallStart(
                            tool_call_id=call.id, name=call.name, arguments=call.arguments
                        )
                    )
                if call.id not in self.ended_calls:
                    self.ended_calls.add(call.id)
                    self.emit(
                        ToolCallEnd(
                            tool_call_id=call.id, name=call.name, is_error=True, content=text
                        )
                    )
            self.append_with_events(result)
        self.pending_calls = []
        self.pending_results = []

    async def run_tool(self, index: int, call: ToolCall) -> None:
        started = time.perf_counter()
        self.started_calls.add(call.id)
        self.emit(ToolCallStart(tool_call_id=call.id, name=call.name, arguments=call.arguments))
        verdict = self.breaker.check(call)
        if verdict.blocked:
            result = ToolResult(verdict.reason, is_error=True)
        else:
            result = await self.supervise(call)
            workspace = self.ctx.env.workspace
            self.breaker.record(
                call, result.is_error, result.content, workspace.generation if workspace else 0
            )
        content = truncate_tool_output(result.content, self.config.max_tool_result_chars)
        self.pending_results[index] = ToolResultMessage(
            tool_call_id=call.id, tool_name=call.name, content=content, is_error=result.is_error
        )
        if result.details.get("no_answer"):
            self.waiting_for.append((call.id, str(result.details.get("question", ""))))
        if result.details.get("terminal") and not result.is_error:
            self.terminal = result.details
            self.terminal_text = str(result.details.get("text") or "") or None
        self.ended_calls.add(call.id)
        self.emit(
            ToolCallEnd(
                tool_call_id=call.id,
                name=call.name,
                is_error=result.is_error,
                content=content,
                duration_ms=(time.perf_counter() - started) * 1000.0,
                details=result.details,
            )
        )

    async def supervise(self, call: ToolCall) -> ToolResult:
        """Run the call under a hard time limit; a run-wide supervisor task
        emits heartbeats for calls that run past the heartbeat interval."""
        tool = self.ctx.tools.get(call.name)
        limit_ms = self.config.tool_timeout_ms
        if tool is not None and tool.timeout_s is not None:
            limit_ms = int(tool.timeout_s * 1000)
        self.running_calls[call.id] = (call.name, time.monotonic())
        if not self.supervisor_started and self.task_group is not None:
            self.supervisor_started = True
            self.task_group.start_soon(self.heartbeats)
        result: ToolResult | None = None
        try:
            with anyio.move_on_after(limit_ms / 1000.0 if limit_ms > 0 else None) as limit:
                result = await self.invoke_tool(call)
        finally:
            self.running_calls.pop(call.id, None)
        if result is None or limit.cancelled_caught:
            return ToolResult(
                f"{call.name} did not finish within {limit_ms / 1000.0:g} s and was cancelled. "
                "Try a smaller step, or a command that finishes sooner.",
                is_error=True,
            )
        return result

    async def heartbeats(self) -> None:
        interval = self.config.tool_heartbeat_ms / 1000.0
        while True:
            await anyio.sleep(interval)
            now = time.monotonic()
            for call_id, (name, started) in list(self.running_calls.items()):
                if now - started >= interval:
                    self.emit(
                        ToolCallUpdate(
                            tool_call_id=call_id,
                            name=name,
                            kind="heartbeat",
                            text=f"still running after {now - started:.1f} s",
                        )
                    )

    async def invoke_tool(self, call: ToolCall) -> ToolResult:
        """Run one call; every failure becomes an ``is_error`` result."""
        ctx = self.ctx
        tool = ctx.tools.get(call.name)
        if tool is None:
            available = ", ".join(ctx.tools.names()) or "(none)"
            return ToolResult(
                f"Unknown tool {call.name!r}. Available tools: {available}.", is_error=True
            )
        if call.parse_error is not None:
            return ToolResult(
                f"The arguments for {call.name} were not valid JSON: {call.parse_error}. "
                "Send a JSON object that matches the tool's schema.",
                is_error=True,
            )
        try:
            args = tool.args_model.model_validate(call.arguments)
        except ValidationError as exc:
            return ToolResult(format_validation_error(call.name, exc), is_error=True)
        if ctx.hooks.before_tool_call is not None:
            verdict = await call_hook(
                self.emit, "before_tool_call", ctx.hooks.before_tool_call, call, args
            )
            if isinstance(verdict, Block):
                return ToolResult(f"Tool call blocked: {verdict.reason}", is_error=True)

        def update(text: str, kind: str) -> None:
            self.emit(
                ToolCallUpdate(
                    tool_call_id=call.id,
                    name=call.name,
                    kind=_UPDATE_KINDS.get(kind, "output"),
                    text=text,
                )
            )

        self.run_state["tools_used"].append(call.name)
        tool_ctx = ToolContext(
            call.id, call.name, ctx.env, update, ctx.steering_pending, self.run_state, self.emit
        )
        try:
            raw = await tool.execute(args, tool_ctx)
            result = raw if isinstance(raw, ToolResult) else ToolResult(str(raw))
        except ToolError as exc:
            result = ToolResult(str(exc), is_error=True)
        except Exception as exc:
            log.exception("tool %s raised", call.name)
            result = ToolResult(f"{call.name} failed: {type(exc).__name__}: {exc}", is_error=True)
            self.emit(
                ErrorEvent(
                    message=f"tool {call.name} raised {type(exc).__name__}: {exc}",
                    where=f"tool:{call.name}",
                )
            )
        if ctx.hooks.after_tool_call is not None:
            replaced = await call_hook(
                self.emit, "after_tool_call", ctx.hooks.after_tool_call, call, result
            )
            if isinstance(replaced, ToolResult):
                result = replaced
        return result
