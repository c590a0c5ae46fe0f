"""How the Claude Code-style hooks join a session's agent
(:func:`rein.bring.hook_session.attach_hooks`): the approver, user
channel and relief that let Notification and PreCompact hooks hear first,
and the Agent hooks combined with an embedder's own: both always run;
a Block of either wins, then the stricter Permit (``ask`` over ``allow``);
a prompt block of either refuses the prompt and their contexts are joined;
either ``on_stop`` may keep the run going; ``after_tool_call`` results are
passed along."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Protocol

from pydantic import BaseModel

from rein.harness.calls.tool_result import ToolResult
from rein.harness.conversation.context import FitReport
from rein.harness.conversation.relief import OverWindowRelief, ReliefRequest
from rein.harness.hooks import Block, Permit, PromptVerdict, StopInfo
from rein.harness.messages import ToolCall
from rein.harness.ports import ApprovalAnswer, ApprovalRequest, Approver, UserChannel

__all__ = [
    "HookListeners",
    "NotifyingApprover",
    "NotifyingUser",
    "PreCompactRelief",
    "chain_after",
    "chain_before",
    "chain_prompt",
    "chain_stop",
]


class HookListeners(Protocol):
    """The hooks that only hear of something (``ClaudeHooks``)."""

    async def notify(self, message: str, kind: str) -> None: ...

    async def run_quietly(
        self, event: str, fields: dict[str, Any], target: str | None = None
    ) -> None: ...


async def _called(hook: Callable[..., Any], *args: Any) -> Any:
    out = hook(*args)
    return await out if inspect.isawaitable(out) else out


def chain_before(first: Callable[..., Any], then: Callable[..., Any] | None) -> Callable[..., Any]:
    """Both hooks always run (an embedder's never skipped): a Block of
    either wins (the Claude hooks' first), else the stricter Permit (``ask``
    over ``allow``)."""
    if then is None:
        return first

    async def chained(call: ToolCall, args: BaseModel) -> Block | Permit | None:
        verdicts = [await first(call, args), await _called(then, call, args)]
        for verdict in verdicts:
            if isinstance(verdict, Block):
                return verdict
        permits = [v for v in verdicts if isinstance(v, Permit)]
        for permit in permits:
            if permit.decision == "ask":
                return permit
        return permits[0] if permits else None

    return chained


def chain_prompt(first: Callable[..., Any], then: Callable[..., Any] | None) -> Callable[..., Any]:
    """Both run: a block of either refuses the prompt; contexts are joined."""
    if then is None:
        return first

    async def chained(prompt: str) -> PromptVerdict | None:
        verdicts = [v for v in (await first(prompt), await _called(then, prompt)) if v]
        for verdict in verdicts:
            if verdict.block is not None:
                return PromptVerdict(block=verdict.block)
        context = "\n\n".join(v.context for v in verdicts if v.context)
        return PromptVerdict(context=context) if context else None

    return chained


def chain_stop(first: Callable[..., Any], then: Callable[..., Any] | None) -> Callable[..., Any]:
    """Both run: the run goes on if either keeps it going (their texts joined)."""
    if then is None:
        return first

    async def chained(info: StopInfo) -> str | None:
        texts = [t for t in (await first(info), await _called(then, info)) if t]
        return "\n\n".join(texts) if texts else None

    return chained


def chain_after(first: Callable[..., Any], then: Callable[..., Any] | None) -> Callable[..., Any]:
    if then is None:
        return first

    async def chained(call: ToolCall, result: ToolResult) -> ToolResult | None:
        changed = await first(call, result)
        current = changed if changed is not None else result
        out = then(call, current)
        out = await out if inspect.isawaitable(out) else out
        return out if out is not None else changed  # type: ignore[no-any-return]

    return chained


class NotifyingApprover:
    """An approver whose questions the Notification hooks hear of first."""

    def __init__(self, inner: Approver, hooks: HookListeners) -> None:
        self.inner = inner
        self.hooks = hooks

    async def confirm(self, request: ApprovalRequest) -> bool | ApprovalAnswer:
        await self.hooks.notify(f"Rein needs your permission: {request.title}", "permission_prompt")
        return await self.inner.confirm(request)


class PreCompactRelief:
    """The agent's relief, with the PreCompact hooks run first (``trigger``
    "auto": the request is over the window). They only hear of it."""

    def __init__(self, inner: OverWindowRelief, hooks: HookListeners) -> None:
        self.inner = inner
        self.hooks = hooks

    async def relieve(self, request: ReliefRequest) -> list[FitReport]:
        await self.hooks.run_quietly(
            "PreCompact", {"trigger": "auto", "custom_instructions": ""}, "auto"
        )
        return await self.inner.relieve(request)


class NotifyingUser:
    """A user channel whose questions the Notification hooks hear of first."""

    def __init__(self, inner: UserChannel, hooks: HookListeners) -> None:
        self.inner = inner
        self.hooks = hooks

    async def ask(self, question: str) -> str | None:
        # Claude Code's kind for "waiting for your input".
        await self.hooks.notify(f"Rein asks: {question}", "idle_prompt")
        return await self.inner.ask(question)
