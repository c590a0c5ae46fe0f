"""A CommandRunner on the local machine: the gates' installs and checks.

Runs ``bash -c`` in the workspace root in its own process group and ends the
whole group on timeout or cancellation, keeping head and tail of the output.
With a ``sandbox`` (``sandbox.also``) the command runs inside it, and a
failure the sandbox may have caused ends with its note (a gate's blocker
shows it: the model and the person see why, e.g. a test tool that writes
the home folder). When it ends, what it created where a protected path
was missing (a conftest's ``.git/config``) is moved aside, and the output
says so.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence

import anyio

from rein.harness.ports import CommandResult, ProcessSandbox, SandboxedStart
from rein.process.environment import child_environment
from rein.process.groups import OutputBuffer, dies_with_us, kill_process_group, reaped

__all__ = ["SubprocessRunner"]


class SubprocessRunner:
    def __init__(
        self,
        root: str,
        *,
        head_chars: int = 4_000,
        tail_chars: int = 8_000,
        sandbox: ProcessSandbox | None = None,
    ) -> None:
        self.root = root
        self.sandbox = sandbox
        self.head_chars = head_chars
        self.tail_chars = tail_chars

    async def run(
        self, command: str, *, timeout_s: float = 600.0, writable: Sequence[str] = ()
    ) -> CommandResult:
        started = time.monotonic()
        buffer = OutputBuffer(self.head_chars, self.tail_chars)
        argv = ["bash", "-c", command]
        start: SandboxedStart | None = None
        if self.sandbox is not None:
            start = await self.sandbox.start(argv, cwd=self.root, writable=writable)
            argv = start.argv
        if argv[:2] == ["bash", "-c"]:
            # Not sandboxed: what it leaves in a session of its own (setsid)
            # is ended with it, as the sandbox's pid namespace would.
            argv = reaped(argv)
        try:
            process = await anyio.open_process(
                dies_with_us(argv),
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=child_environment(cwd=self.root),
            )
        except BaseException:
            if start is not None:  # it never ran: its end is its start's
                with anyio.CancelScope(shield=True):
                    await start.ended()
            raise
        timed_out = False
        ended: str | None = None
        try:
            with anyio.move_on_after(timeout_s) as scope:
                assert process.stdout is not None
                async for chunk in process.stdout:
                    buffer.write(chunk.decode("utf-8", errors="replace"))
                await process.wait()
            if scope.cancelled_caught:
                timed_out = True
                buffer.write(f"\n[timed out after {timeout_s:g} s; the process group was killed]\n")
        finally:
            with anyio.CancelScope(shield=True):
                await kill_process_group(process, grace_s=2.0)
                # Its pipe closed now, not left to the garbage collector
                # (a timed-out read stops before the end of file).
                await process.aclose()
                if start is not None:
                    # Cancelled too (a newer edit's gate): what it planted
                    # goes now, before another start takes it for there.
                    ended = await start.ended()
        code = process.returncode if process.returncode is not None else -1
        output = buffer.text()
        if start is not None:
            notes = [ended]
            if code != 0 and not timed_out:
                notes.append(start.failure_note(output))
            for note in notes:
                if note is not None:
                    output = f"{output.rstrip()}\n{note}\n"
        return CommandResult(
            exit_code=code,
            output=output,
            timed_out=timed_out,
            duration_s=time.monotonic() - started,
        )
