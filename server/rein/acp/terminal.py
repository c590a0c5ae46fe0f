"""``run_command`` in the ACP client's terminal (``terminal/*``): the person
watches the command run in their editor, and its output streams into the
tool call.

One command is one terminal: ``terminal/create`` (``bash -c <command>`` in
the workspace root, with an output byte limit), the terminal's id to the
caller once (the client embeds it in the tool call), ``terminal/output``
polled for the new output, ``terminal/wait_for_exit`` bounded by the
command's timeout, ``terminal/kill`` on that timeout or when the run is
aborted (the caller's scope is cancelled), and ``terminal/release`` always,
whatever happened. Every request to the client is bounded too.

The command runs with the editor's environment, not Rein's: variables that
look secret in Rein's own environment (``rein.process.environment``) are
set empty for it, and the quiet variables ``run_command`` sets locally
(``PAGER=cat``, ...) are set. The gates' commands (installs, checks) stay
local: they are Rein's, not the model's.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

import anyio
from acp.schema import EnvVariable, TerminalExitStatus

from rein.acp._client_calls import CLIENT_BOUND_S, ask_client, client_session
from rein.acp.context import ClientLink
from rein.harness.errors import ToolError
from rein.harness.ports import CommandResult
from rein.process.environment import git_safety, is_secret_name

__all__ = ["ClientTerminalCommands", "client_terminal"]

log = logging.getLogger(__name__)

#: How much output the client keeps for one command (it drops the start past it).
OUTPUT_BYTE_LIMIT = 1_000_000
#: Seconds between two ``terminal/output`` polls while the command runs.
POLL_S = 0.25
#: How long a killed command may take to report its exit before Rein reads
#: its last output anyway; also the bound on each clean-up request after an
#: abort or a failure (so an abort is not held up by a client that hangs).
KILL_GRACE_S = 5.0
_QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb", "NO_COLOR": "1"}
#: How much of the last output locates the new output after the client
#: dropped the start of it.
_ANCHOR = 256


class _NewOutput:
    """Turns the client's "all output so far" answers into the new pieces."""

    def __init__(self, on_output: Callable[[str], None]) -> None:
        self.on_output = on_output
        self.last = ""

    def feed(self, output: str) -> None:
        if output.startswith(self.last):
            new = output[len(self.last) :]
        else:
            # The client dropped the start (its byte limit): the answer is
            # an end of the last one and then the new output.
            new = output[self._overlap(output) :]
        self.last = output
        if new:
            self.on_output(new)

    def _overlap(self, output: str) -> int:
        """Where the new output starts in ``output``: after its longest
        start that ends the last answer (0 when none does)."""
        anchor = self.last[-min(_ANCHOR, max(1, len(self.last) // 2)) :]
        at = output.find(anchor)
        while at >= 0:
            end = at + len(anchor)
            if self.last.endswith(output[:end]):
                return end
            at = output.find(anchor, at + 1)
        return 0


def _exit_code(status: TerminalExitStatus | None) -> int:
    """The exit code, or minus the signal's number (-1 when nothing says)."""
    if status is None:
        return -1
    if status.exit_code is not None:
        return status.exit_code
    if status.signal:
        try:
            return -signal.Signals[status.signal.upper()].value
        except KeyError:
            return -1
    return -1


def _environment(pass_env: Iterable[str]) -> list[EnvVariable]:
    keep = set(pass_env)
    blanked = sorted(k for k in os.environ if is_secret_name(k) and k not in keep)
    # Git's safety settings are numbered after Rein's own GIT_CONFIG_COUNT:
    # the editor's environment is not known here.
    variables = {**dict.fromkeys(blanked, ""), **_QUIET_ENV, **git_safety(os.environ)}
    return [EnvVariable(name=name, value=value) for name, value in variables.items()]


class ClientTerminalCommands:
    """The ``CommandExecutor`` port over the client's ``terminal/*``.

    ``session_id_of()`` names the ACP session the command runs for
    (:data:`rein.acp.context.current_session`). ``pass_env`` names variables
    that look secret and are passed on anyway (``tools.passEnv``).
    """

    def __init__(
        self,
        link: ClientLink,
        root: str | Path,
        session_id_of: Callable[[], str | None],
        *,
        pass_env: Iterable[str] = (),
        bound_s: float = CLIENT_BOUND_S,
        poll_s: float = POLL_S,
        kill_grace_s: float = KILL_GRACE_S,
        output_byte_limit: int = OUTPUT_BYTE_LIMIT,
    ) -> None:
        self.link = link
        self.root = str(root)
        self.session_id_of = session_id_of
        self.pass_env = tuple(pass_env)
        self.bound_s = bound_s
        self.poll_s = poll_s
        self.kill_grace_s = kill_grace_s
        self.output_byte_limit = output_byte_limit

    async def run(
        self,
        command: str,
        *,
        cwd: str,
        timeout_s: float,
        on_output: Callable[[str], None],
        on_terminal: Callable[[str], None],
    ) -> CommandResult:
        session_id = client_session("terminal/create", self.session_id_of())
        conn = self.link.conn
        started = time.monotonic()
        created = await ask_client(
            "terminal/create",
            lambda: conn.create_terminal(
                session_id=session_id,
                command="bash",
                args=["-c", command],
                cwd=cwd,
                env=_environment(self.pass_env),
                output_byte_limit=self.output_byte_limit,
            ),
            bound_s=self.bound_s,
        )
        terminal_id = created.terminal_id
        finished = False
        try:
            on_terminal(terminal_id)
            new_output = _NewOutput(on_output)
            status: TerminalExitStatus | None = None
            failure: ToolError | None = None
            with anyio.move_on_after(timeout_s) as deadline:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._poll, session_id, terminal_id, new_output)
                    try:
                        # Bounded by the command's timeout (the scope around it).
                        status = await self._wait_exit(session_id, terminal_id, math.inf)
                    except ToolError as exc:
                        failure = exc  # raised below, not wrapped in a group
                    tg.cancel_scope.cancel()
            if failure is not None:
                raise failure
            timed_out = deadline.cancelled_caught
            if timed_out:
                await self._kill(session_id, terminal_id, self.bound_s)
                try:
                    status = await self._wait_exit(session_id, terminal_id, self.kill_grace_s)
                except ToolError as exc:
                    log.warning("terminal %s after the kill: %s", terminal_id, exc)
            last = await ask_client(
                "terminal/output",
                lambda: conn.terminal_output(session_id=session_id, terminal_id=terminal_id),
                bound_s=self.bound_s,
            )
            new_output.feed(last.output)
            finished = True
            output = last.output
            if last.truncated:
                output = "[the start of the output was dropped by the editor's terminal]\n" + output
            return CommandResult(
                exit_code=_exit_code(status or last.exit_status),
                output=output,
                timed_out=timed_out,
                duration_s=time.monotonic() - started,
            )
        finally:
            # Aborted, failed or done: the terminal goes (kill first unless
            # the command was seen to the end), within bounds, whatever
            # cancelled us.
            with anyio.CancelScope(shield=True):
                if not finished:
                    await _quietly(self._kill(session_id, terminal_id, self.kill_grace_s))
                await _quietly(
                    ask_client(
                        "terminal/release",
                        lambda: conn.release_terminal(
                            session_id=session_id, terminal_id=terminal_id
                        ),
                        bound_s=self.kill_grace_s,
                    )
                )

    async def _poll(self, session_id: str, terminal_id: str, new_output: _NewOutput) -> None:
        """Stream the output while the command runs; a poll that fails ends
        the polling (the last output is read after the exit anyway)."""
        conn = self.link.conn
        while True:
            try:
                answer = await ask_client(
                    "terminal/output",
                    lambda: conn.terminal_output(session_id=session_id, terminal_id=terminal_id),
                    bound_s=self.bound_s,
                )
            except ToolError as exc:
                log.warning("streaming terminal %s stopped: %s", terminal_id, exc)
                return
            new_output.feed(answer.output)
            if answer.exit_status is not None:
                return
            await anyio.sleep(self.poll_s)

    async def _wait_exit(
        self, session_id: str, terminal_id: str, bound_s: float
    ) -> TerminalExitStatus:
        exited = await ask_client(
            "terminal/wait_for_exit",
            lambda: self.link.conn.wait_for_terminal_exit(
                session_id=session_id, terminal_id=terminal_id
            ),
            bound_s=bound_s,
        )
        return TerminalExitStatus(exit_code=exited.exit_code, signal=exited.signal)

    async def _kill(self, session_id: str, terminal_id: str, bound_s: float) -> None:
        await ask_client(
            "terminal/kill",
            lambda: self.link.conn.kill_terminal(session_id=session_id, terminal_id=terminal_id),
            bound_s=bound_s,
        )


async def _quietly(call: Awaitable[object]) -> None:
    """Await a clean-up request; its failure is logged, not raised (the
    command's own outcome, or the cancellation, is what the caller needs)."""
    try:
        await call
    except ToolError as exc:
        log.warning("terminal clean-up: %s", exc)


def client_terminal(
    link: ClientLink,
    root: str | Path,
    session_id_of: Callable[[], str | None],
    *,
    pass_env: Iterable[str] = (),
) -> ClientTerminalCommands | None:
    """The client's terminal as the commands port when it offers
    ``terminal/*`` in ``initialize``; None keeps ``run_command`` local."""
    capabilities = link.capabilities
    if capabilities is None or not capabilities.terminal:
        return None
    return ClientTerminalCommands(link, root, session_id_of, pass_env=pass_env)
