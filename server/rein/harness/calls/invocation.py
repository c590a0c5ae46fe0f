"""One tool call invoked: the tool resolved, its arguments validated, the
``before_tool_call`` hook asked, the tool executed (a transient failure
retried with a growing pause), the ``after_tool_call`` hook shown the
result. Every failure becomes an ``is_error`` result the model can read.

The batch around the call (parallel or sequential, the per-turn cap, time
limits and the stuck-call policy, the misuse breaker, the result's
truncation) is :class:`~rein.harness.calls.tool_calls.ToolExecutor`'s.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from pydantic import BaseModel, ValidationError

from rein.harness.calls.tool_updates import ToolUpdates
from rein.harness.config import HarnessConfig
from rein.harness.errors import ToolError, TransientToolError
from rein.harness.events import Emit, ErrorEvent, ToolRetry
from rein.harness.hooks import Block, Permit, call_hook
from rein.harness.messages import ToolCall
from rein.harness.ports import Model
from rein.harness.run.run_record import RunRecord
from rein.harness.run.run_types import LoopContext
from rein.harness.tools import Tool, ToolContext, ToolResult

__all__ = [
    "RETRY_BACKOFF_MS",
    "ToolInvoker",
    "failure_text",
    "format_validation_error",
    "is_transient",
]

# The name its records had before the invocation left tool_calls.py.
log = logging.getLogger("rein.harness.calls.tool_calls")

#: The pause before the first retry of a transient failure; it doubles for
#: each further retry (250, 500, 1000 ms for the default three).
RETRY_BACKOFF_MS = 250


def is_transient(tool: Tool[Any], exc: BaseException) -> bool:
    """A failure worth running the call again for: a ``TransientToolError``
    (the tool vouches the call is safe to repeat); a refused connection
    (nothing was sent); a timeout or other network error of a read tool
    (reading again changes nothing). A write, a command or a subagent that
    timed out or lost its connection may have done its work: never repeated
    on its own."""
    if isinstance(exc, TransientToolError | ConnectionRefusedError):
        return True
    return tool.tool_class == "read" and isinstance(exc, TimeoutError | ConnectionError)


def failure_text(tool: str, exc: Exception) -> str:
    """What the model reads for a tool's exception: a ``ToolError``'s own
    message; anything else named with its type."""
    if isinstance(exc, ToolError):
        return str(exc)
    return f"{tool} failed: {type(exc).__name__}: {exc}"


def format_validation_error(tool: str, exc: ValidationError) -> str:
    lines = [f"Invalid arguments for {tool}:"]
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        lines.append(f"  - {loc}: {err['msg']}")
    lines.append("Fix the arguments and call the tool again.")
    return "\n".join(lines)


class ToolInvoker:
    """Invokes single tool calls of a run: ``ctx``'s tools, hooks and
    environment, ``record`` the run's record every tool's context shares."""

    def __init__(
        self, ctx: LoopContext, config: HarnessConfig, emit: Emit, record: RunRecord
    ) -> None:
        self.ctx = ctx
        self.config = config
        self.emit = emit
        self.record = record

    async def invoke(self, call: ToolCall, model: Model | None) -> ToolResult:
        """Resolve, validate, ask the hooks, execute; every failure becomes an
        ``is_error`` result. ``model`` is the one the tool's context carries
        (None: the agent's own)."""
        checked = await self._checked_arguments(call)
        if isinstance(checked, ToolResult):
            return checked
        tool, args, permit = checked
        self.record.note_tool(call.name)
        result = await self._execute_tool(call, tool, args, permit, model)
        after = self.ctx.hooks.after_tool_call
        if after is not None:
            replaced = await call_hook(self.emit, "after_tool_call", after, call, result)
            if isinstance(replaced, ToolResult):
                result = replaced
        if not result.is_error:
            self.record.note_success(call.name)
        return result

    async def _checked_arguments(
        self, call: ToolCall
    ) -> tuple[Tool[Any], BaseModel, Permit | None] | ToolResult:
        """The tool and its validated arguments, or the error result that
        says why the call cannot run (unknown, invalid, blocked by a hook)."""
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
        before = ctx.hooks.before_tool_call
        permit: Permit | None = None
        if before is not None:
            verdict = await call_hook(self.emit, "before_tool_call", before, call, args)
            if isinstance(verdict, Block):
                return ToolResult(f"Tool call blocked: {verdict.reason}", is_error=True)
            if isinstance(verdict, Permit):
                permit = verdict
        return tool, args, permit

    async def _execute_tool(
        self,
        call: ToolCall,
        tool: Tool[Any],
        args: BaseModel,
        permit: Permit | None,
        model: Model | None,
    ) -> ToolResult:
        ctx = self.ctx
        steering = ctx.steering
        updates = ToolUpdates(self.emit, call.id, call.name)
        tool_ctx = ToolContext(
            call.id,
            call.name,
            ctx.env,
            updates,
            steering.signal.is_set,
            self.record,
            self.emit,
            steering_arrived=steering.signal,
            steering=steering,
            hooks=ctx.hooks,
            model=model,
            permit=permit,
            offered=frozenset(ctx.tools.names()),
        )
        try:
            return await self._run_with_retries(call, tool, args, tool_ctx)
        finally:
            updates.finish()

    async def _run_with_retries(
        self, call: ToolCall, tool: Tool[Any], args: BaseModel, tool_ctx: ToolContext
    ) -> ToolResult:
        ctx = self.ctx
        retries = self.config.tool_retries
        attempt = 0
        while True:
            try:
                raw = await ctx.tool_executor(tool, args, tool_ctx)
                return raw if isinstance(raw, ToolResult) else ToolResult(str(raw))
            except Exception as exc:
                reason = failure_text(call.name, exc)
                if attempt >= retries or not is_transient(tool, exc):
                    return self._failure(call, exc, reason, attempt)
                attempt += 1
                delay_ms = RETRY_BACKOFF_MS * 2 ** (attempt - 1)
                log.warning("tool %s failed transiently (%s): retry %d", call.name, reason, attempt)
                self.emit(
                    ToolRetry(
                        tool_call_id=call.id,
                        name=call.name,
                        attempt=attempt,
                        max_attempts=retries,
                        reason=reason,
                        delay_ms=delay_ms,
                    )
                )
                await anyio.sleep(delay_ms / 1000.0)

    def _failure(self, call: ToolCall, exc: Exception, reason: str, retried: int) -> ToolResult:
        """The error result the model reads (saying how often the call ran
        when it was retried); an unexpected exception is also logged and
        reported as an ``error`` event. A failure that is retried is
        reported by its ``tool_retry`` event instead."""
        if not isinstance(exc, ToolError):
            log.error("tool %s raised", call.name, exc_info=exc)
            self.emit(
                ErrorEvent(
                    message=f"tool {call.name} raised {type(exc).__name__}: {exc}",
                    where=f"tool:{call.name}",
                )
            )
        if retried:
            reason += (
                f"\n(The call failed {retried + 1} times in a row: it was retried {retried} times.)"
            )
        return ToolResult(reason, is_error=True)
