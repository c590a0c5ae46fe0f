"""MCP configuration's questions at a terminal (``rein run``, ``rein mcp list``).

Inputs (``${input:...}`` of ``.vscode/mcp.json``) are asked on the terminal,
a password with the typing hidden; never stored (the next run asks again).
A workspace-defined server is trusted after a yes at the terminal,
remembered in the storage folder (:class:`~rein.mcp.trust.FileTrustStore`).
With no terminal (CI, a pipe) nothing is asked: inputs and trust are refused
and the servers skipped with the reason, unless ``--trust-mcp`` trusts the
workspace's servers. ``--yes`` (approve tool calls) does not trust them.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio

from rein.mcp.config import McpConfigError, given_lines
from rein.mcp.spec import InputSpec, McpServerSpec
from rein.mcp.trust import FileTrustStore

__all__ = ["NO_TERMINAL_INPUT", "NO_TERMINAL_TRUST", "TerminalMcpPorts", "read_line"]

NO_TERMINAL_TRUST = (
    "no terminal to ask whether to trust it; run once in a terminal, or pass --trust-mcp"
)
NO_TERMINAL_INPUT = "no terminal to ask for it"


@contextlib.contextmanager
def _hidden(enabled: bool) -> Iterator[None]:
    """The terminal does not echo what is typed (a password)."""
    if not enabled:
        yield
        return
    import termios

    fd = sys.stdin.fileno()
    try:
        old = termios.tcgetattr(fd)
    except termios.error:
        yield
        return
    new = list(old)
    new[3] = new[3] & ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSADRAIN, new)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
        print(file=sys.stderr)


async def _read_line(prompt: str, timeout_s: float, hidden: bool = False) -> str | None:
    """One line from the terminal within ``timeout_s`` (None: no answer)."""
    print(prompt, end="", file=sys.stderr, flush=True)
    with _hidden(hidden), anyio.move_on_after(timeout_s):
        await anyio.wait_readable(sys.stdin.fileno())
        line = sys.stdin.readline()
        return line.rstrip("\n") if line else None
    print(file=sys.stderr)
    return None


#: One line from the terminal within a time limit (the hooks' question too).
read_line = _read_line


def _note(spec: McpServerSpec) -> str:
    return "".join(f"  {line}\n" for line in given_lines(spec))


class TerminalMcpPorts:
    """:class:`~rein.mcp.config.McpConfigPorts` at a terminal."""

    def __init__(self, storage: Path, trust_mcp: bool = False, timeout_s: float = 600.0) -> None:
        # --trust-mcp trusts for this process only: nothing is remembered.
        self.trust = FileTrustStore(storage, persist=not trust_mcp)
        self.trust_mcp = trust_mcp
        self.timeout_s = timeout_s

    async def ask_input(self, spec: InputSpec) -> str | None:
        if not sys.stdin.isatty():
            raise McpConfigError(NO_TERMINAL_INPUT)
        about = spec.description or spec.id
        if spec.type == "pickString":
            choices = ", ".join(spec.options)
            prompt = f"\nMCP input {spec.id}: {about} [{choices}]"
            prompt += f" (Enter: {spec.default})> " if spec.default else "> "
            answer = await _read_line(prompt, self.timeout_s)
            if answer == "" and spec.default:
                return spec.default
            if answer is not None and answer not in spec.options:
                raise McpConfigError(f"{answer!r} is not one of {choices}")
            return answer or None
        answer = await _read_line(
            f"\nMCP input {spec.id}: {about}> ", self.timeout_s, spec.password
        )
        if answer == "" and spec.default:
            return spec.default
        return answer or None

    async def confirm_trust(self, spec: McpServerSpec) -> bool:
        if self.trust_mcp:
            return True
        if not sys.stdin.isatty():
            raise McpConfigError(NO_TERMINAL_TRUST)
        where = {"vscode": ".vscode/mcp.json", "mcp.json": ".mcp.json"}.get(spec.source, "settings")
        answer = await _read_line(
            f"\nThe workspace's {where} defines the MCP server '{spec.name}', which runs:\n"
            f"  {spec.command_line()}\n{_note(spec)}Trust it and start it? [y/N] ",
            self.timeout_s,
        )
        return answer is not None and answer.strip().lower() in ("y", "yes")
