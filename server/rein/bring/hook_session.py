"""Giving a session Claude Code-style hooks: :func:`attach_hooks` makes
its :class:`~rein.bring.hooks_adapter.ClaudeHooks` and chains them with the
Agent's own hooks, its approver, user channel and over-window relief
(:mod:`rein.bring.hook_chain`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rein.bring.hook_chain import (
    NotifyingApprover,
    NotifyingUser,
    PreCompactRelief,
    chain_after,
    chain_before,
    chain_prompt,
    chain_stop,
)
from rein.bring.hook_trust import HookTrustPorts
from rein.bring.hooks_adapter import ClaudeHooks
from rein.bring.transcript import TranscriptFile, transcript_path

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from rein.config import ReinConfig
    from rein.harness.agent import Agent

__all__ = ["HookedSession", "attach_hooks"]


class HookedSession(Protocol):
    """What :func:`attach_hooks` needs of a session (``rein.session.Session``)."""

    @property
    def id(self) -> str: ...

    @property
    def agent(self) -> Agent: ...

    @property
    def before_run(self) -> list[Callable[[], Awaitable[None]]]: ...

    @property
    def on_end(self) -> list[Callable[[str], Awaitable[None]]]: ...

    def emit_flow(self, event: Any) -> None: ...

    def abort(self, reason: str) -> bool: ...


def attach_hooks(
    session: HookedSession,
    root: Path,
    config: ReinConfig,
    ports: HookTrustPorts,
    home: Path | None,
) -> ClaudeHooks:
    """Give ``session`` the Claude Code-style hooks; its events report what
        they did. The Agent's own hooks (set by an embedder) still run, after,
    every time: a block of either wins, the stricter permission wins (``ask``
    over ``allow``), prompt contexts are joined, and either may keep a run
    going."""
    agent = session.agent
    folder = ports.transcript_folder
    transcript = (
        TranscriptFile(transcript_path(folder, session.id), session.id, root)
        if folder is not None
        else None
    )
    hooks = ClaudeHooks(
        root,
        config,
        ports,
        session.id,
        session.emit_flow,
        home,
        session.abort,
        transcript=transcript,
        messages=lambda: agent.messages,
    )
    if agent.messages:
        hooks.start_source = "resume"  # a stored session, continued
    own = agent.hooks
    session.before_run.append(hooks.prepare)
    session.on_end.append(hooks.end)
    agent.subscribe(hooks.on_event)
    env = agent.env
    if env.approver is not None:
        env.approver = NotifyingApprover(env.approver, hooks)
    if env.user is not None:
        env.user = NotifyingUser(env.user, hooks)
    if agent.over_window_relief is not None:
        agent.over_window_relief = PreCompactRelief(agent.over_window_relief, hooks)
    agent.hooks = replace(
        own,
        before_tool_call=chain_before(hooks.before_tool_call, own.before_tool_call),
        after_tool_call=chain_after(hooks.after_tool_call, own.after_tool_call),
        on_user_prompt=chain_prompt(hooks.on_user_prompt, own.on_user_prompt),
        on_stop=chain_stop(hooks.on_stop, own.on_stop),
    )
    return hooks
