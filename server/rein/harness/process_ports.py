"""The process ports: a command the gates run (:class:`CommandRunner`),
``run_command``'s command run elsewhere (:class:`CommandExecutor`), the OS
sandbox ``run_command``'s local commands run in (:class:`CommandSandbox`),
the same sandbox around the other commands when a setting asks for it
(:class:`ProcessSandbox`), and the person's program the preview runs
(:class:`PreviewProcess`, :class:`PreviewProcessFactory`). :mod:`rein.harness.ports` lists them with
the other ports."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "CommandExecutor",
    "CommandResult",
    "CommandRunner",
    "CommandSandbox",
    "PreviewProcess",
    "PreviewProcessFactory",
    "ProcessSandbox",
    "SandboxedStart",
]


@dataclass(frozen=True, slots=True)
class CommandResult:
    exit_code: int
    #: Combined stdout and stderr (head and tail kept when long).
    output: str
    timed_out: bool = False
    duration_s: float = 0.0


class CommandRunner(Protocol):
    """Runs a shell command in the workspace root (gates: installs, runtime
    checks). Kills the whole process group on timeout or cancellation."""

    async def run(
        self, command: str, *, timeout_s: float = 600.0, writable: Sequence[str] = ()
    ) -> CommandResult:
        """``writable``: scratch folders of Rein's the command may write
        when it runs sandboxed (the tests gate's shadow tree)."""
        ...


class CommandExecutor(Protocol):
    """Runs ``run_command``'s commands somewhere other than a local
    subprocess: the ACP client's terminal (``rein.acp.terminal``). Without
    one (``ToolEnvironment.commands`` is None) ``run_command`` starts its own
    process group, as always.

    ``on_terminal(terminal_id)`` is called once, when the command has
    started where the person can watch it; ``on_output(text)`` with each new
    piece of output, in order. On ``timeout_s`` the command is killed and the
    result says ``timed_out``; when the caller's scope is cancelled (the run
    is aborted) the command is killed and the cancellation re-raised. Either
    way what was acquired for it is released before ``run`` returns. A
    command killed by a signal has a negative ``exit_code`` (minus the
    signal's number). Raises :class:`~rein.harness.errors.ToolError` when
    the command could not be run there (the result the model reads)."""

    async def run(
        self,
        command: str,
        *,
        cwd: str,
        timeout_s: float,
        on_output: Callable[[str], None],
        on_terminal: Callable[[str], None],
    ) -> CommandResult: ...


class CommandSandbox(Protocol):
    """The OS sandbox ``run_command``'s local commands run in
    (``rein.sandboxing``: bubblewrap on Linux). ``ToolEnvironment.sandbox``;
    None: no sandbox, as if it could not start."""

    def unavailable(self) -> str | None:
        """None when the sandbox works here; else why not, in a sentence
        (checked once, then remembered)."""
        ...

    async def start(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        """The command line that runs ``argv`` in ``cwd`` inside the
        sandbox (what it looks at first, the workspace's nested git
        repositories, is looked at off the event loop). Only called when
        :meth:`unavailable` is None."""
        ...

    def failure_note(self, output: str) -> str | None:
        """For a sandboxed command that failed with ``output``: a note for
        the model when the sandbox may be why (a write outside the writable
        folders, a network call, the sandbox could not start), else None."""
        ...

    async def ended(self) -> str | None:
        """After a sandboxed command ended: what it created where a
        protected path was missing (``.git``, ``.vscode/settings.json``),
        and a git repository it made below the root, is moved aside (looked
        for off the event loop); a note saying so, else None."""
        ...

    def temp_dir(self) -> str:
        """The session's temporary folder (``TMPDIR`` of every command,
        sandboxed or not)."""
        ...

    def refused_hosts(self) -> list[str]:
        """The hosts (``name`` or ``name:port``) the sandbox's allowlist
        proxy refused since the last call, in order; without a proxy (no
        network at all), those the last failed command could not resolve."""
        ...

    def allow_host(self, host: str) -> None:
        """Let this session's sandboxed commands reach ``host`` from their
        next start on (the person allowed it for the session)."""
        ...


class SandboxedStart(Protocol):
    """One command's start in a :class:`ProcessSandbox`: its command line
    and its end, in the sandbox it started in (a settings change while it
    runs changes the sandbox of the next commands, not of its end)."""

    @property
    def argv(self) -> list[str]:
        """``argv`` as it is to be started: inside the sandbox, or unchanged."""
        ...

    async def ended(self) -> str | None:
        """After the command ended: what it created where a protected path
        was missing when it started (``.git``, ``.vscode/settings.json``,
        ``.mcp.json``, ...), and a git repository it made below the root,
        is moved aside (the sandbox cannot mount over a missing path); a
        note saying so, else None."""
        ...

    def ended_now(self) -> str | None:
        """:meth:`ended`, blocking the caller (a shutdown, where nothing
        else waits)."""
        ...

    def failure_note(self, output: str) -> str | None:
        """For the command, failed with ``output``: when it ran in the
        sandbox and the sandbox may be why (a write outside the writable
        folders, a network call), a note saying so and which settings open
        it (the model cannot); else None."""
        ...


class ProcessSandbox(Protocol):
    """The OS sandbox around one kind of the other commands (the gates',
    the preview's, the installs', the hooks', the MCP stdio servers'), used
    where that process is started: ``rein.sandboxing.others``."""

    async def start(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        writable: Sequence[str] = (),
        ends: bool = True,
    ) -> SandboxedStart:
        """``argv`` as it is to be started in ``cwd`` (:attr:`SandboxedStart.argv`):
        inside the sandbox when ``sandbox.also`` names this kind and the
        sandbox works here, else unchanged (the session's start said why,
        once); what the sandbox looks at first (the workspace's nested git
        repositories) is looked at off the event loop. ``writable``: scratch
        folders of Rein's in the machine's temporary folder this command
        may also write (the tests gate's shadow tree). ``ends``: its
        :meth:`SandboxedStart.ended` will be called when it ends (False: a
        kept process, a hook, an MCP server, not watched)."""
        ...


# --------------------------------------------------------------------- preview


class PreviewProcess(Protocol):
    """One run of the preview command: the person's program, in its own
    process group (so stopping it ends its children too)."""

    @property
    def pid(self) -> int:
        """The process id, which is also the process group id."""
        ...

    @property
    def exit_code(self) -> int | None:
        """The exit code once the process has exited (negative: killed by
        that signal), else None."""
        ...

    async def read_line(self) -> str | None:
        """The next line of output (stdout and stderr merged, without the
        line break), or None once the output is closed."""
        ...

    async def wait(self) -> int:
        """Wait until the process exits; its exit code."""
        ...

    def send_signal(self, signum: int) -> None:
        """Send ``signum`` to the process group (nothing if it is gone)."""
        ...

    async def stop(self, grace_s: float) -> None:
        """End the whole process group: SIGTERM, SIGKILL after ``grace_s``.
        Returns once it is gone. Never raises for a process already gone."""
        ...

    def kill(self) -> None:
        """SIGKILL the process group now, without waiting (the last resort
        when the server exits)."""
        ...


class PreviewProcessFactory(Protocol):
    """Starts preview processes in the workspace root and probes them."""

    async def start(self, command: str) -> PreviewProcess:
        """Start ``command`` (a shell command line). Raises OSError when it
        cannot be started."""
        ...

    async def http_ready(self, url: str, timeout_s: float) -> bool:
        """One HTTP GET of ``url`` (on 127.0.0.1): True when it answers with a
        status below 500 within ``timeout_s``."""
        ...


# ------------------------------------------------------------------ persistence
