"""Resuming a tool call that waited for the person (a subagent's question).

The waiting call has a placeholder result in the transcript. When the person
answers, the next run first awaits the call's :class:`~rein.harness.
run_types.ResumeCall` inside the run's scope (so what it changes lands in
the run's record and the run's gates validate it), then replaces the
placeholder with what it returned: the transcript's call/result pairing stays
as it was.
"""

from __future__ import annotations

import time

from rein.harness.calls.tool_calls import truncate_tool_output
from rein.harness.calls.tool_updates import ToolUpdates
from rein.harness.config import HarnessConfig
from rein.harness.events import Emit, ToolCallEnd, ToolCallUpdate
from rein.harness.messages import ToolResultMessage
from rein.harness.run.run_record import RunRecord
from rein.harness.run.run_types import LoopContext, ResumeCall
from rein.harness.tools import ToolContext

__all__ = ["resume_waiting_call"]


def _placeholder_index(ctx: LoopContext, tool_call_id: str) -> int | None:
    for index in range(len(ctx.messages) - 1, -1, -1):
        message = ctx.messages[index]
        if isinstance(message, ToolResultMessage) and message.tool_call_id == tool_call_id:
            return index
    return None


async def resume_waiting_call(
    ctx: LoopContext, config: HarnessConfig, emit: Emit, record: RunRecord, resume: ResumeCall
) -> tuple[str, str] | None:
    """Resume the call; returns (call id, question) when it waits again."""
    call_id, name = resume.tool_call_id, resume.tool_name
    index = _placeholder_index(ctx, call_id)
    if index is None:
        raise ValueError(f"no waiting result for tool call {call_id} in the transcript")
    started = time.perf_counter()

    emit(
        ToolCallUpdate(
            tool_call_id=call_id, name=name, kind="status", text="resumed with the answer"
        )
    )
    steering = ctx.steering
    updates = ToolUpdates(emit, call_id, name)
    tool_ctx = ToolContext(
        call_id,
        name,
        ctx.env,
        updates,
        steering.signal.is_set,
        record,
        emit,
        steering_arrived=steering.signal,
        steering=steering,
        hooks=ctx.hooks,
    )
    try:
        result = await resume.resume(tool_ctx)
    finally:
        updates.finish()
    content = truncate_tool_output(result.content, config.max_tool_result_chars)
    message = ToolResultMessage(
        tool_call_id=call_id, tool_name=name, content=content, is_error=result.is_error
    )
    ctx.messages[index] = message
    if ctx.on_replace is not None:
        ctx.on_replace(index, message)
    emit(
        ToolCallEnd(
            tool_call_id=call_id,
            name=name,
            is_error=result.is_error,
            content=content,
            duration_ms=(time.perf_counter() - started) * 1000.0,
            details=result.details,
        )
    )
    if result.details.get("no_answer"):
        return call_id, str(result.details.get("question", ""))
    return None
