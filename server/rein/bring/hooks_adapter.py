"""Claude Code-style hooks in a Rein session, through the Agent's hooks.

:func:`~rein.bring.hook_session.attach_hooks` gives a session
:class:`ClaudeHooks`: before every run
the hooks are read again (:func:`~rein.bring.hook_config.discover_hooks`)
and, when the workspace has its own, the person is asked once whether they
may run (the host's :class:`HookTrustPorts`: a prompt in the editor, the
terminal or ``--allow-hooks``, the ACP client's permission request),
remembered by their content hash (a changed entry asks again). The person's
own hooks (``rein.hooks``, ``~/.claude/settings.json``) are trusted.

The protocol's events map onto the Agent's hooks: PreToolUse onto
``before_tool_call`` (exit 2 or ``permissionDecision: deny`` blocks the
call, the model reads the reason), PostToolUse onto ``after_tool_call``
(``decision: block`` and ``additionalContext`` are added to the result the
model reads), UserPromptSubmit onto ``on_user_prompt`` (block the prompt, or
add context), Stop and SubagentStop onto ``on_stop`` (keep the run going
with the reason, at most ``hookOptions.maxStopContinuations`` times per
run), SessionStart runs before the session's first run (its output is
context of the first prompt), Notification just before the person is asked
something (the session's approver and user channel), PreCompact before the
agent's relief compacts an over-window context, SessionEnd when the host
ends the session (:meth:`ClaudeHooks.end`: bounded by
:data:`SESSION_END_BOUND_S`, never blocking). Every hook gets a
``transcript_path``: the session's JSONL transcript in Rein's storage
folder (:mod:`rein.bring.transcript`), brought up to date just before.
What a hook blocked, added or failed at is a ``hook`` event
(:class:`~rein.harness.events.HookActivity`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel

from rein.bring.hook_config import (
    USER_FILE,
    HookEntry,
    HookInventory,
    discover_hooks,
)
from rein.bring.hook_protocol import HookAnswer, claude_tool, matches, read_answer, rewritten
from rein.bring.hook_runner import run_hook
from rein.bring.hook_trust import HookPermission, HookTrustPorts
from rein.bring.transcript import TranscriptFile, redacted
from rein.harness.calls.tool_result import ToolResult
from rein.harness.events import Emit, HookActivity
from rein.harness.hooks import Block, Permit, PromptVerdict, StopInfo, current_caller
from rein.harness.messages import Message, ToolCall
from rein.harness.redaction import redact
from rein.harness.reported import reported_logger
from rein.sandboxing.others import OtherCommandsSandbox

if TYPE_CHECKING:
    from rein.config import ReinConfig
    from rein.harness.events import Event

__all__ = ["SESSION_END_BOUND_S", "ClaudeHooks"]

_SHOWN = 300
#: Seconds SessionEnd hooks may hold a session's end, all of them together
#: (each also within its own time limit): a host's shutdown waits no longer.
SESSION_END_BOUND_S = 5.0

#: SessionEnd's failures are also hook events (``rein run`` prints those):
#: logged for a host whose client is gone (the ACP client left).
reported_log = reported_logger(__name__)


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


class ClaudeHooks:
    """The hooks of one session."""

    def __init__(
        self,
        root: Path,
        config: ReinConfig,
        ports: HookTrustPorts,
        session_id: str,
        report: Emit,
        home: Path | None = None,
        stop_run: Callable[[str], object] | None = None,
        transcript: TranscriptFile | None = None,
        messages: Callable[[], Sequence[Message]] = tuple,
    ) -> None:
        self.root = root
        self.config = config
        self.ports = ports
        self.session_id = session_id
        self.report = report
        self.home = home
        #: Ends the session's run (``continue: false`` of a hook).
        self.stop_run = stop_run
        self.inventory = HookInventory()
        self.active: list[HookEntry] = []
        self._reported_invalid: set[tuple[str, str, str]] = set()
        #: Whether the workspace's hooks may run (asked once per content).
        self.permission = HookPermission(root, ports, report)
        self._started = False
        #: SessionStart's ``source``: "resume" for a stored session.
        self.start_source = "startup"
        self._start_context: list[str] = []
        self._ended = False
        #: The session's JSONL transcript (None: not written) and its messages.
        self.transcript = transcript
        self.messages = messages
        self._transcript_failed = False

    # ------------------------------------------------------------ preparing

    async def prepare(self) -> None:
        """Before each run: read the hooks again, ask about the workspace's
        (once per content), run SessionStart before the first run."""
        inventory = discover_hooks(self.root, self.home, self.config)
        for bad in inventory.invalid:
            seen = (bad.source, bad.where, bad.reason)
            if seen not in self._reported_invalid:
                self._reported_invalid.add(seen)
                self.report(
                    HookActivity(
                        event="(configuration)",
                        outcome="failed",
                        command="",
                        source=bad.source,
                        message=f"invalid hook at {bad.where}: {bad.reason} (not run)",
                    )
                )
        for source in inventory.disabled_by:
            seen = (source, "disableAllHooks", "")
            if seen not in self._reported_invalid:
                self._reported_invalid.add(seen)
                whose = "yours and the workspace's" if source == USER_FILE else "the workspace's"
                self.report(
                    HookActivity(
                        event="(configuration)",
                        outcome="skipped",
                        command="",
                        source=source,
                        message=f"disableAllHooks is true: hooks ({whose}) are not run",
                    )
                )
        workspace = inventory.workspace_hooks
        allowed = True
        if workspace:
            allowed = await self.permission.allowed(workspace)
        inventory.workspace_allowed = allowed if workspace else None
        self.inventory = inventory
        self.active = [h for h in inventory.hooks if h.trusted_by_default or allowed]
        if not self._started:
            self._started = True
            source = self.start_source
            for hook, answer in await self._run("SessionStart", {"source": source}, source):
                self._cannot_block(hook, answer)
                if answer.context:
                    self._note(hook, "context", answer.context)
                    self._start_context.append(answer.context)

    async def _still_allowed(self) -> bool:
        """Just before a workspace hook runs: are its entries and the files
        they run still what the person allowed? A changed file asks again
        (refused: the workspace's hooks stop running)."""
        if await self.permission.still_allowed(self.inventory.workspace_hooks):
            return True
        self.active = [h for h in self.active if h.scope != "workspace"]
        return False

    # -------------------------------------------------------------- running

    def sync_transcript(self) -> str:
        """Bring the transcript file up to the session's messages; its path
        ("" when it is not written: no storage folder, or writing failed,
        reported once)."""
        if self.transcript is None or self._transcript_failed:
            return ""
        try:
            self.transcript.sync(self.messages())
        except OSError as exc:
            self._transcript_failed = True
            self.report(
                HookActivity(
                    event="(transcript)",
                    outcome="failed",
                    command="",
                    source=str(self.transcript.path),
                    message=f"the transcript for hooks cannot be written: {exc}",
                )
            )
            return ""
        return str(self.transcript.path)

    def on_event(self, event: Event) -> None:
        """The transcript is appended as the run goes: at each turn's and run's end."""
        if event.type in ("turn_end", "run_end") and self.active:
            self.sync_transcript()

    def _payload(self, event: str, fields: dict[str, Any]) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": self.sync_transcript(),
            "cwd": str(self.root),
            "hook_event_name": event,
            **fields,
        }

    def _matching(self, event: str, target: str | None = None) -> list[HookEntry]:
        return [
            h
            for h in self.active
            if h.event == event and (target is None or matches(h.matcher, target))
        ]

    async def _run(
        self,
        event: str,
        fields: dict[str, Any],
        target: str | None = None,
        tool: str | None = None,
        deadline: float | None = None,
    ) -> list[tuple[HookEntry, HookAnswer]]:
        """Run every active hook of ``event`` whose matcher fits ``target``,
        one after the other in the order found (each within its time limit,
        and all before ``deadline``, on anyio's clock); a failure is reported."""
        out: list[tuple[HookEntry, HookAnswer]] = []
        options = self.config.hook_options
        hooks = self._matching(event, target)
        if not hooks:
            return out
        payload = redacted(self._payload(event, fields))
        for hook in hooks:
            if hook.scope == "workspace" and not await self._still_allowed():
                continue
            limit = hook.timeout_s or options.timeout_s
            if deadline is not None:
                limit = round(max(min(limit, deadline - anyio.current_time()), 0.01), 2)
            ran = await run_hook(
                hook.command,
                payload,
                self.root,
                limit,
                tuple(self.config.tools.pass_env),
                OtherCommandsSandbox(
                    str(self.root), lambda: self.config.sandbox_settings(), "hooks"
                ),
            )
            # What a hook says enters Rein redacted, like a tool's output.
            ran = replace(ran, stdout=redact(ran.stdout), stderr=redact(ran.stderr))
            if ran.failure is not None:
                answer = HookAnswer(error=ran.failure)
            else:
                answer = read_answer(event, ran.exit_code, ran.stdout, ran.stderr, ran.stdout_cut)
            if answer.error is not None and hook.on_failure == "block":
                # Fails closed, as its onFailure asks: a broken guard blocks.
                answer = HookAnswer(block=f"it failed ({answer.error}) and its onFailure is block")
            if answer.error is not None:
                self._note(hook, "failed", answer.error, tool)
            out.append((hook, answer))
        return out

    def _note(self, hook: HookEntry, outcome: Any, message: str, tool: str | None = None) -> None:
        self.report(
            HookActivity(
                event=hook.event,
                outcome=outcome,
                command=redact(hook.command),
                source=hook.source,
                message=_cut(message),
                tool=tool,
            )
        )

    async def before_tool_call(self, call: ToolCall, args: BaseModel) -> Block | Permit | None:
        """PreToolUse: the first block wins; else an ``ask`` routes the call
        to Rein's approval, else an ``allow`` skips Rein's question. Every
        hook that runs here is trusted (the person's own) or allowed (the
        workspace's, once the person said so)."""
        if not self._matching("PreToolUse"):
            return None
        name, tool_input = claude_tool(call.name, args.model_dump(), self.root)
        fields = {"tool_name": name, "tool_input": tool_input, "tool_use_id": call.id}
        asked: Permit | None = None
        allowed: Permit | None = None
        for hook, answer in await self._run("PreToolUse", fields, name, name):
            if answer.stop is not None:  # continue: false wins over a deny
                self._stopped(hook, answer.stop, name)
                return Block(f"{hook.event} hook ({hook.source}) stopped: {answer.stop}")
            if answer.block is not None:
                self._note(hook, "blocked", answer.block, name)
                return Block(f"{hook.event} hook ({hook.source}): {answer.block}")
            updated = answer.updated_input or {}
            changed = rewritten(updated, tool_input)
            if changed:
                # Running the original would pass for what the hook agreed to.
                wanted = json.dumps({k: updated[k] for k in changed})[:_SHOWN]
                reason = (
                    f"it changes the call's input ({', '.join(changed)}: {wanted}) with "
                    "updatedInput, which Rein does not apply, so the call was not run"
                )
                self._note(hook, "blocked", reason, name)
                return Block(f"{hook.event} hook ({hook.source}): {reason}")
            if answer.permission == "ask" and asked is None:
                self._note(hook, "asked", answer.permission_reason, name)
                reason = answer.permission_reason or "it asks about this call"
                asked = Permit("ask", f"the {hook.event} hook of {hook.source}: {reason}")
            elif answer.permission == "allow" and allowed is None:
                allowed = Permit("allow", answer.permission_reason)
        return asked or allowed

    async def after_tool_call(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        """PostToolUse, after a call that succeeded (as Claude Code: a failed,
        blocked or declined call runs none)."""
        if result.is_error or not self._matching("PostToolUse"):
            return None
        name, tool_input = claude_tool(call.name, dict(call.arguments or {}), self.root)
        fields = {
            "tool_name": name,
            "tool_input": tool_input,
            "tool_response": {"content": result.content, "is_error": result.is_error},
            "tool_use_id": call.id,
        }
        notes: list[str] = []
        for hook, answer in await self._run("PostToolUse", fields, name, name):
            if answer.stop is not None:
                self._stopped(hook, answer.stop, name)
            if answer.block is not None:
                self._note(hook, "blocked", answer.block, name)
                notes.append(f"PostToolUse hook ({hook.source}): {answer.block}")
            if answer.context is not None:
                self._note(hook, "context", answer.context, name)
                notes.append(answer.context)
        if not notes:
            return None
        return replace(result, content=result.content + "\n\n" + "\n".join(notes))

    async def on_user_prompt(self, prompt: str) -> PromptVerdict | None:
        """UserPromptSubmit; SessionStart's context goes with the first
        prompt that is not blocked (a blocked one keeps it for the next)."""
        context = list(self._start_context)
        for hook, answer in await self._run("UserPromptSubmit", {"prompt": prompt}):
            if answer.block is not None or answer.stop is not None:
                reason = answer.block or answer.stop or ""
                self._note(hook, "blocked", reason)
                return PromptVerdict(
                    block=f"the UserPromptSubmit hook blocked the prompt: {reason}"
                )
            if answer.context is not None:
                self._note(hook, "context", answer.context)
                context.append(answer.context)
        self._start_context.clear()
        return PromptVerdict(context="\n\n".join(context)) if context else None

    def _stopped(self, hook: HookEntry, reason: str, tool: str | None = None) -> None:
        """``continue: false``: the run ends (aborted) with ``stopReason``."""
        self._note(hook, "blocked", f"stopped the run: {reason}", tool)
        if self.stop_run is not None:
            self.stop_run(f"{hook.event} hook ({hook.source}) stopped the run: {reason}")

    async def notify(self, message: str, kind: str) -> None:
        """Notification: Rein is about to ask the person something; ``kind``
        is its ``notification_type``, which matchers select
        (``permission_prompt`` for an approval, ``idle_prompt`` for a
        question). Its hooks only hear of it; a failure is reported, the
        question is asked anyway."""
        await self.run_quietly(
            "Notification", {"message": message, "notification_type": kind}, kind
        )

    async def run_quietly(
        self, event: str, fields: dict[str, Any], target: str | None = None
    ) -> None:
        """Run an event's hooks that only hear of something (Notification,
        PreCompact): what they answer is not used; a failure is reported."""
        for hook, answer in await self._run(event, fields, target):
            self._cannot_block(hook, answer)

    def _cannot_block(self, hook: HookEntry, answer: HookAnswer) -> None:
        """A block or a ``continue: false`` of an event that cannot block
        (SessionStart, Notification, PreCompact, SessionEnd) blocks nothing;
        as Claude Code shows the person its stderr, it is reported, never
        dropped."""
        said = answer.block or answer.stop
        if said is not None:
            self._note(hook, "failed", f"a {hook.event} hook cannot block; it said: {said}")

    async def end(self, reason: str) -> None:
        """SessionEnd, once, when the host ends a session that ran (its
        hooks were read and allowed then): ``reason`` is the protocol's
        ``clear``, ``logout``, ``prompt_input_exit`` or ``other``. Bounded by
        :data:`SESSION_END_BOUND_S` (a hook still running then is stopped);
        a failure is reported and logged, never raised."""
        if not self._started or self._ended:
            return
        self._ended = True
        bound = SESSION_END_BOUND_S
        deadline = anyio.current_time() + bound
        # Past the deadline only a stopped hook's process group may hold it (its grace).
        with anyio.move_on_after(bound + 3) as scope:
            ran = await self._run("SessionEnd", {"reason": reason}, reason, deadline=deadline)
            for hook, answer in ran:
                self._cannot_block(hook, answer)
                if answer.error is not None:
                    reported_log.warning(
                        "SessionEnd hook %r failed: %s", hook.command, answer.error
                    )
        if scope.cancelled_caught:
            message = f"SessionEnd hooks did not finish within {bound:g} s (stopped)"
            reported_log.warning("session %s: %s", self.session_id, message)
            self.report(
                HookActivity(
                    event="SessionEnd", outcome="failed", command="", source="", message=message
                )
            )

    async def on_stop(self, info: StopInfo) -> str | None:
        """Stop (the session's own run) or SubagentStop (a ``task``
        subagent's): a block keeps that run going, within the bound."""
        if info.continuations >= self.config.hook_options.max_stop_continuations:
            return None
        event = "Stop" if current_caller().depth == 0 else "SubagentStop"
        fields = {"stop_hook_active": info.continuations > 0}
        for hook, answer in await self._run(event, fields):
            if answer.stop is not None:
                return None  # continue: false wins: the run ends as it would
            if answer.block is not None:
                self._note(hook, "continued", answer.block)
                return answer.block
        return None
