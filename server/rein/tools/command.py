"""``run_command``: ``bash -c`` in the workspace root, in its own process group.

Output (stdout and stderr merged) streams to the client as batched
``tool_call_update`` events and is kept as head + tail for the model. On
timeout, and when the run is aborted (the tool's scope is cancelled), the
whole process group gets SIGTERM, then SIGKILL after a grace period; the
tool returns (or re-raises the cancellation) only after the group is gone.
The files the command changes count as the run's changes (through the
mutation log and the disk watcher), so the gates validate them.

With a :class:`~rein.harness.ports.CommandExecutor` in the environment
(``rein acp``: the client's terminal) the command runs there instead: the
terminal's id goes to the client as a ``terminal`` update, its output
streams the same way, and the executor kills and releases it on timeout and
abort. Steering ends it as it ends a local one.

With ``approval.command: "sandboxed"`` (the default) a local command runs
in the session's OS sandbox (``ToolEnvironment.sandbox``,
:mod:`rein.sandboxing`) without asking; a failure the sandbox may have
caused gets a note saying so. A command the model asks to run outside it
(``unsandboxed`` with a ``reason``) asks the person every time, and no
"always allow" rule covers it; where the sandbox cannot start (none, it
fails its trial, the client's terminal runs the commands) every command
asks, and the request says why.
"""

from __future__ import annotations

import codecs
import signal
import subprocess
import time
from contextlib import nullcontext
from typing import ClassVar

import anyio
from anyio.abc import Process
from pydantic import BaseModel, Field

from rein.harness.ports import ApprovalRuleKind, ChangeAnnouncer, CommandExecutor, CommandSandbox
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.process.environment import child_environment
from rein.process.groups import OutputBuffer, dies_with_us, kill_process_group, reaped
from rein.tools._context import require_workspace
from rein.tools.approval import check_approval
from rein.tools.sandbox_hosts import offer_refused_hosts
from rein.tools.secret_commands import named_in_command, why_asked
from rein.tools.settings import settings_of

__all__ = ["RunCommandArgs", "RunCommandTool"]

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 600.0
_FLUSH_INTERVAL_S = 0.1
_FLUSH_BYTES = 4096
_QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb", "NO_COLOR": "1"}


class RunCommandArgs(BaseModel):
    command: str = Field(
        description="A bash command line, run in the workspace root, e.g. `pytest -q tests/x.py`."
    )
    timeout: float | None = Field(
        None,
        gt=0,
        le=MAX_TIMEOUT_S,
        description=f"Seconds before the command is killed (default {DEFAULT_TIMEOUT_S:g}, "
        f"at most {MAX_TIMEOUT_S:g}).",
    )
    unsandboxed: bool = Field(
        False,
        description="Run outside the sandbox (full access to files and network). Only when "
        "the command failed in the sandbox and needs what it blocks; the person is asked.",
    )
    reason: str | None = Field(
        None,
        max_length=500,
        description="Why the command must run outside the sandbox (with `unsandboxed`); "
        "shown to the person.",
    )


def _temp_env(ctx: ToolContext) -> dict[str, str]:
    """``TMPDIR``: the session's temporary folder, sandboxed or not (the
    prompt tells the model to use it)."""
    sandbox = ctx.env.sandbox
    return {} if sandbox is None else {"TMPDIR": sandbox.temp_dir()}


class _Streamer:
    """Batches output into ``ctx.update`` calls: complete lines every
    ``_FLUSH_INTERVAL_S``, and by size once ``_FLUSH_BYTES`` are pending
    (up to the last newline, or all of it when the pending line is that
    long), so output without newlines streams too. Linear: each piece of
    text is searched for a newline once, when it arrives."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.pending: list[str] = []
        self.size = 0
        #: Characters of ``pending`` up to and including its last newline.
        self.lines = 0
        self.last_flush = time.monotonic()

    def feed(self, text: str) -> None:
        if not text:
            return
        newline = text.rfind("\n")
        if newline >= 0:
            self.lines = self.size + newline + 1
        self.pending.append(text)
        self.size += len(text)
        if self.size >= _FLUSH_BYTES:
            # A long unfinished line goes out as it is.
            whole = self.size - self.lines >= _FLUSH_BYTES
            self.flush(complete_lines_only=not whole)
        elif time.monotonic() - self.last_flush >= _FLUSH_INTERVAL_S:
            self.flush(complete_lines_only=True)

    def flush(self, *, complete_lines_only: bool = False) -> None:
        cut = self.lines if complete_lines_only else self.size
        if cut == 0:
            return
        pending = "".join(self.pending)
        batch, rest = pending[:cut], pending[cut:]
        self.pending = [rest] if rest else []
        self.size = len(rest)
        self.lines = 0
        self.last_flush = time.monotonic()
        self.ctx.update(batch, "output")


class RunCommandTool(Tool[RunCommandArgs]):
    name = "run_command"
    description = (
        "Run a shell command (bash -c) in the workspace root and return its exit code and "
        "output (stdout and stderr together; long output keeps its start and end). Use it to "
        "run tests, builds, linters, git and other programs. Not interactive: stdin is "
        "empty. Killed after the timeout (default 120 s)."
    )
    args_model = RunCommandArgs
    tool_class = "command"
    #: The loop's hard limit: above the longest timeout plus the kill grace,
    #: so the command's own timeout (and its clearer result) comes first.
    timeout_s: ClassVar[float | None] = MAX_TIMEOUT_S + 60.0
    prompt_section: str = (
        "`run_command` runs a bash command in the workspace root (no input, killed after the "
        "timeout); use it to run tests and builds. It may need the person's approval."
    )
    #: Added to :attr:`prompt_section` when commands run sandboxed
    #: (``approval.command: "sandboxed"``).
    SANDBOX_SECTION: ClassVar[str] = (
        " Commands usually run in a sandbox: only the workspace and $TMPDIR are writable, "
        "git's repository (.git) is protected there (a commit must leave the sandbox), "
        "there is no network. If a command fails because of that, run it again with `unsandboxed: true` "
        "and a `reason`; the person is asked. Use $TMPDIR for temporary files."
    )

    def __init__(
        self,
        *,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        grace_s: float = 2.0,
        head_chars: int = 7000,
        tail_chars: int = 7000,
        sandboxed: bool = True,
    ) -> None:
        if sandboxed:
            self.prompt_section = type(self).prompt_section + self.SANDBOX_SECTION
        self.default_timeout_s = default_timeout_s
        self.grace_s = grace_s
        self.head_chars = head_chars
        self.tail_chars = tail_chars

    async def execute(self, args: RunCommandArgs, ctx: ToolContext) -> ToolResult:
        workspace = require_workspace(ctx)
        command = args.command.strip()
        if not command:
            return ToolResult("The command is empty.", is_error=True)
        timeout = args.timeout or self.default_timeout_s
        short = command if len(command) <= 80 else command[:77] + "..."
        detail = f"$ {command}\n(in {workspace.root}, timeout {timeout:g} s)"
        subject: tuple[ApprovalRuleKind, str] | None = ("command", command)
        why_ask = ""
        sandbox: CommandSandbox | None = None
        if settings_of(ctx).approval.command == "sandboxed":
            if args.unsandboxed:
                reason = (args.reason or "").strip()
                if not reason:
                    return ToolResult(
                        "To run a command outside the sandbox, give the `reason` the person "
                        "is shown with `unsandboxed: true`.",
                        is_error=True,
                    )
                # Asked every time: no rule the person kept covers it.
                subject = None
                why_ask = f"the command asks to run outside the sandbox: {reason}"
                detail = (
                    f"Outside the sandbox (your files and the network), because: {reason}"
                    f"\n\n{detail}"
                )
            else:
                why_not = await _sandbox_unavailable(ctx)
                if why_not is None:
                    sandbox = ctx.env.sandbox
                else:
                    why_ask = (
                        f'approval.command is "sandboxed", but the sandbox cannot run here: '
                        f"{why_not}"
                    )
                    detail = f"Not sandboxed: {why_not}.\n\n{detail}"
        # A command that names a secret file would show it to the model:
        # asked every time, even in the sandbox (approved, it runs there).
        secret = named_in_command(command, settings_of(ctx).secret_files, workspace.root)
        if secret is not None and not why_ask:
            subject = None
            why_ask = why_asked(secret)
            detail = f"Asked because {why_ask}: its output would show it to the model.\n\n{detail}"
        # A hook that asks about this call (permissionDecision "ask") is
        # asked about even when the sandbox would run it without a question;
        # approved, it still runs in the sandbox.
        hook_asks = ctx.permit is not None and ctx.permit.decision == "ask"
        if sandbox is None or hook_asks or secret is not None:
            denial = await check_approval(
                ctx,
                "command",
                title=f"Run unsandboxed: {short}"
                if why_ask and sandbox is None
                else f"Run: {short}",
                detail=detail,
                action=f"run `{short}`",
                force_ask=bool(why_ask),
                why_ask=why_ask,
                subject=subject,
                # Unsandboxed where it should have been: asked every time,
                # only the exact command is offered to keep.
                exact_only=bool(why_ask),
            )
            if denial is not None:
                return denial
        if isinstance(ctx.env.workspace, ChangeAnnouncer):
            # The gates' baselines must predate what the command changes.
            await ctx.env.workspace.before_command(command)
        changes = ctx.env.changes
        # What the command changes on disk is the run's change: counted while
        # it runs, and until the disk watcher has seen everything it wrote.
        with changes.attributing_processes() if changes is not None else nullcontext():
            if ctx.env.commands is not None:
                result = await self._run_elsewhere(
                    ctx.env.commands, command, timeout, workspace.root, ctx
                )
            else:
                result = await self._run(command, timeout, workspace.root, ctx, sandbox)
            if ctx.env.settle_changes is not None:
                await ctx.env.settle_changes()
        if sandbox is not None:
            await offer_refused_hosts(ctx, sandbox, result)
        return result

    async def _run(
        self,
        command: str,
        timeout_s: float,
        cwd: str,
        ctx: ToolContext,
        sandbox: CommandSandbox | None = None,
    ) -> ToolResult:
        timeout = timeout_s
        output = OutputBuffer(self.head_chars, self.tail_chars)
        streamer = _Streamer(ctx)
        started = time.monotonic()
        argv = ["bash", "-c", command]
        # The sandbox's pid namespace ends whatever the command leaves; outside
        # it, a process in a session of its own (setsid) would outlive the run.
        argv = await sandbox.start(argv, cwd=cwd) if sandbox is not None else reaped(argv)
        try:
            process = await anyio.open_process(
                dies_with_us(argv),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=child_environment(
                    {**_QUIET_ENV, **_temp_env(ctx)},
                    pass_env=settings_of(ctx).tools.pass_env,
                    cwd=cwd,
                ),
            )
        except BaseException:
            if sandbox is not None:  # it never ran: its end is its start's
                with anyio.CancelScope(shield=True):
                    await sandbox.ended()
            raise
        timed_out = leftovers = yielded = False
        removed: str | None = None
        try:
            with anyio.move_on_after(timeout) as scope:
                pumped = anyio.Event()

                async def yield_to_steering() -> None:
                    # The person sent a message: end the command and say so
                    # (the soft yield), instead of making them wait it out.
                    nonlocal yielded
                    await ctx.steering_arrived.wait()
                    yielded = True
                    scope.cancel()

                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._pump, process, output, streamer, pumped)
                    tg.start_soon(self._flush_periodically, streamer)
                    tg.start_soon(yield_to_steering)
                    await process.wait()
                    # Background jobs left in the group would keep the pipe
                    # open (and outlive the run): end them.
                    leftovers = await kill_process_group(process, self.grace_s)
                    await pumped.wait()
                    tg.cancel_scope.cancel()
            timed_out = scope.cancelled_caught and not yielded
        finally:
            # Timeout, cancellation (abort) or an error: the group must go.
            with anyio.CancelScope(shield=True):
                await kill_process_group(process, self.grace_s)
                await process.aclose()
                streamer.flush()
                if sandbox is not None:
                    # Aborted too: what it planted goes now, before the
                    # next command's start takes it for there.
                    removed = await sandbox.ended()
        elapsed = time.monotonic() - started
        result = self._result(command, process.returncode, output, timed_out, timeout, elapsed)
        if yielded:
            _note_steering(result, elapsed)
        elif leftovers and not timed_out:
            result.content += (
                "\n[Processes the command left running in the background were stopped.]"
            )
        result.details["sandboxed"] = sandbox is not None
        if sandbox is not None and result.is_error and not timed_out and not yielded:
            note = sandbox.failure_note(output.text())
            if note is not None:
                result.content += "\n" + note
                result.details["sandbox_note"] = True
        if removed is not None:
            result.content += "\n" + removed
            result.details["sandbox_removed"] = True
        return result

    async def _run_elsewhere(
        self, executor: CommandExecutor, command: str, timeout_s: float, cwd: str, ctx: ToolContext
    ) -> ToolResult:
        """Run ``command`` through ``executor`` (the client's terminal)."""
        streamed = OutputBuffer(self.head_chars, self.tail_chars)
        streamer = _Streamer(ctx)
        terminals: list[str] = []
        started = time.monotonic()
        yielded = False
        outcome = None
        failure: Exception | None = None

        def on_output(text: str) -> None:
            streamed.write(text)
            streamer.feed(text)

        def on_terminal(terminal_id: str) -> None:
            terminals.append(terminal_id)
            ctx.update(terminal_id, "terminal")

        try:
            async with anyio.create_task_group() as tg:

                async def yield_to_steering() -> None:
                    nonlocal yielded
                    await ctx.steering_arrived.wait()
                    yielded = True
                    tg.cancel_scope.cancel()

                tg.start_soon(yield_to_steering)
                tg.start_soon(self._flush_periodically, streamer)
                try:
                    outcome = await executor.run(
                        command,
                        cwd=cwd,
                        timeout_s=timeout_s,
                        on_output=on_output,
                        on_terminal=on_terminal,
                    )
                except Exception as exc:
                    failure = exc  # raised below as itself, not in a group
                tg.cancel_scope.cancel()
        finally:
            streamer.flush()
        if failure is not None:
            raise failure
        elapsed = time.monotonic() - started
        if outcome is None:  # ended for steering: what streamed is all there is
            result = self._result(command, None, streamed, False, timeout_s, elapsed)
            _note_steering(result, elapsed)
        else:
            output = OutputBuffer(self.head_chars, self.tail_chars)
            output.write(outcome.output)
            result = self._result(
                command, outcome.exit_code, output, outcome.timed_out, timeout_s, elapsed
            )
        if terminals:
            result.details["terminal_id"] = terminals[0]
        return result

    @staticmethod
    async def _pump(
        process: Process, output: OutputBuffer, streamer: _Streamer, done: anyio.Event
    ) -> None:
        assert process.stdout is not None
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            async for chunk in process.stdout:
                text = decoder.decode(chunk)
                output.write(text)
                streamer.feed(text)
            tail = decoder.decode(b"", final=True)
            output.write(tail)
            streamer.feed(tail)
        finally:
            done.set()

    @staticmethod
    async def _flush_periodically(streamer: _Streamer) -> None:
        while True:
            await anyio.sleep(_FLUSH_INTERVAL_S)
            streamer.flush(complete_lines_only=True)

    def _result(
        self,
        command: str,
        code: int | None,
        output: OutputBuffer,
        timed_out: bool,
        timeout: float,
        elapsed: float,
    ) -> ToolResult:
        body = output.text().rstrip("\n")
        parts = [f"$ {command}"]
        if body:
            parts.append(body)
        if timed_out:
            parts.append(
                f"[Timed out after {timeout:g} s; the command and its child processes were "
                "killed. Run something shorter, or pass a larger timeout.]"
            )
        elif code is None:
            parts.append("[Ended before it exited; no exit code]")
        elif code < 0:
            parts.append(f"[Killed by signal {_signal_name(-code)}; exit code {code}]")
        else:
            parts.append(f"[exit code {code}]")
        details = {
            "exit_code": code,
            "timed_out": timed_out,
            "duration_s": round(elapsed, 3),
            "output_chars": output.total,
        }
        return ToolResult("\n".join(parts), is_error=timed_out or code != 0, details=details)


async def _sandbox_unavailable(ctx: ToolContext) -> str | None:
    """Why this call's command cannot run in the sandbox (None: it can).
    The first check may start a trial sandbox: off the event loop."""
    if ctx.env.commands is not None:
        return "commands run in the client's terminal, which Rein cannot sandbox"
    sandbox = ctx.env.sandbox
    if sandbox is None:
        return "this session has no sandbox"
    return await anyio.to_thread.run_sync(sandbox.unavailable)


def _note_steering(result: ToolResult, elapsed: float) -> None:
    result.content += (
        f"\n[Stopped after {elapsed:.1f} s: the person sent a message while the "
        "command ran, so it and its child processes were ended. Read the message; "
        "run the command again if it is still needed.]"
    )
    result.details["stopped_for_steering"] = True


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
