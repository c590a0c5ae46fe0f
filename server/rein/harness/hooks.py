"""Hooks the loop calls. Every hook is documented "must not raise"; the loop
guards them anyway: a hook that raises is reported as an ``error`` event and
treated as "no change". Hooks may be plain functions or coroutines.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from rein.harness.calls.tool_result import ToolResult
from rein.harness.events import Emit, ErrorEvent
from rein.harness.messages import Message, ToolCall
from rein.harness.ports import ModelOptions

if TYPE_CHECKING:
    from rein.harness.ports import Model

__all__ = [
    "Block",
    "HookCaller",
    "Hooks",
    "Permit",
    "PromptVerdict",
    "StopInfo",
    "TurnInfo",
    "TurnOverrides",
    "call_hook",
    "current_caller",
    "hooks_for_child",
]

# The name its records had when the guard lived in calls/tool_calls.py.
log = logging.getLogger("rein.harness.calls.tool_calls")


@dataclass(frozen=True, slots=True)
class Block:
    """Returned by ``before_tool_call`` to refuse a call; ``reason`` is what
    the model reads."""

    reason: str


@dataclass(frozen=True, slots=True)
class TurnInfo:
    run_id: str
    turn: int
    messages: Sequence[Message]


@dataclass(frozen=True, slots=True)
class TurnOverrides:
    """What ``prepare_next_turn`` changes for the coming request. Fields left
    at None keep the run's own."""

    model: Model | None = None
    options: ModelOptions | None = None
    #: The messages of this request instead of the transcript. For this
    #: request only: they are not stored, and the next turn starts from the
    #: transcript again (``transform_context`` and the window guard still
    #: apply to them).
    messages: Sequence[Message] | None = None
    #: A new system prompt, from this request on for the rest of the run
    #: (the tool set changed between turns: an MCP server's list changed).
    system: str | None = None


@dataclass(frozen=True, slots=True)
class Permit:
    """Returned by ``before_tool_call`` to decide how the call is approved:
    ``"ask"`` asks the person even when the approval policy would allow it
    (``reason`` says why); ``"allow"`` goes ahead without asking where the
    policy would ask. Neither overrides a policy of ``"deny"``, and a
    protected file still asks. Only a hook the person trusts may return it
    (the Claude Code-style hooks of :mod:`rein.bring.hooks_adapter` do so
    for the person's own hooks and the workspace's allowed ones)."""

    decision: Literal["allow", "ask"]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PromptVerdict:
    """What ``on_user_prompt`` decided about a run's prompt: refuse it
    (``block``, the reason the run ends with; the prompt is not added to the
    transcript) or add ``context`` after it (a user message the model reads,
    origin ``"hook"``)."""

    block: str | None = None
    context: str | None = None


@dataclass(frozen=True, slots=True)
class StopInfo:
    """What ``on_stop`` is told when a run is about to complete: its final
    text and how many times this run was already kept going by it."""

    run_id: str
    last_text: str
    continuations: int


BeforeToolCall = Callable[
    [ToolCall, BaseModel], "Block | Permit | Awaitable[Block | Permit | None] | None"
]
AfterToolCall = Callable[
    [ToolCall, "ToolResult"], "ToolResult | Awaitable[ToolResult | None] | None"
]
TransformContext = Callable[[Sequence[Message]], "Sequence[Message] | Awaitable[Sequence[Message]]"]
PrepareNextTurn = Callable[[TurnInfo], "TurnOverrides | Awaitable[TurnOverrides | None] | None"]
OnUserPrompt = Callable[[str], "PromptVerdict | Awaitable[PromptVerdict | None] | None"]
OnStop = Callable[[StopInfo], "str | Awaitable[str | None] | None"]


@dataclass(slots=True)
class Hooks:
    #: May refuse a call (return :class:`Block`) or decide how it is approved
    #: (:class:`Permit`); runs after argument validation.
    before_tool_call: BeforeToolCall | None = None
    #: May replace a result (return a new ToolResult) or keep it (return None).
    after_tool_call: AfterToolCall | None = None
    #: Rewrites what is sent to the model, never what is stored.
    transform_context: TransformContext | None = None
    #: May change the model, its options or the request's messages before a turn.
    prepare_next_turn: PrepareNextTurn | None = None
    #: Looks at a run's prompt before the model does: may refuse it or add
    #: context after it (:class:`PromptVerdict`).
    on_user_prompt: OnUserPrompt | None = None
    #: Called when a run would complete (its gates passed): a returned text
    #: keeps the run going with that text as the next user message (origin
    #: ``"hook"``); None lets it complete. The hook bounds itself with
    #: :attr:`StopInfo.continuations`; ``harness.maxModelTurnsPerRun`` still
    #: bounds the run.
    on_stop: OnStop | None = None


async def call_hook(emit: Emit, name: str, fn: Callable[..., Any] | None, *args: Any) -> Any:
    """The loop's guard around a hook: ``fn(*args)``, awaited when it returns
    an awaitable; a hook that raises is logged, reported as an ``error``
    event and answers None ("no change"). None for no hook."""
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


@dataclass(frozen=True, slots=True)
class HookCaller:
    """Whose tool call a hook is looking at: the agent's own (depth 0, no
    subagent) or a subagent's, ``depth`` levels below (1: a child of the
    agent, 2: a grandchild), with its id and its ``task`` description."""

    subagent_id: str | None = None
    depth: int = 0
    subagent_name: str | None = None


_OWN = HookCaller()
_CALLER: ContextVar[HookCaller] = ContextVar("rein_hook_caller", default=_OWN)


def current_caller() -> HookCaller:
    """Inside a ``before_tool_call`` / ``after_tool_call`` hook: whose call
    it is (a subagent's calls reach the hooks of the agent that started it)."""
    return _CALLER.get()


@contextmanager
def _calling_as(caller: HookCaller) -> Iterator[None]:
    # The innermost subagent marks the call: a grandchild's call passes
    # through its parent's forwarding hook, which must not re-mark it.
    if _CALLER.get() is not _OWN:
        yield
        return
    token = _CALLER.set(caller)
    try:
        yield
    finally:
        _CALLER.reset(token)


async def _resolved(value: object) -> object:
    return await value if inspect.isawaitable(value) else value


def hooks_for_child(parent: Hooks, caller: HookCaller) -> Hooks:
    """The hooks of a subagent: the parent's ``before_tool_call`` and
    ``after_tool_call`` see every call of the child, and its ``on_stop``
    the child's end, with :func:`current_caller` saying whose it is. The
    parent's context, turn and prompt hooks stay the parent's (they shape
    the parent's own requests)."""
    before, after, stop = parent.before_tool_call, parent.after_tool_call, parent.on_stop
    child = Hooks()
    if stop is not None:

        async def child_stop(info: StopInfo) -> str | None:
            with _calling_as(caller):
                return await _resolved(stop(info))  # type: ignore[return-value]

        child.on_stop = child_stop
    if before is not None:

        async def child_before(call: ToolCall, args: BaseModel) -> Block | None:
            with _calling_as(caller):
                return await _resolved(before(call, args))  # type: ignore[return-value]

        child.before_tool_call = child_before
    if after is not None:

        async def child_after(call: ToolCall, result: ToolResult) -> ToolResult | None:
            with _calling_as(caller):
                return await _resolved(after(call, result))  # type: ignore[return-value]

        child.after_tool_call = child_after
    return child
