"""The editor in the ACP tests: an SDK ``Client`` that behaves like Zed or a
JetBrains IDE would towards ``rein acp``.

* every ``session/update`` is recorded per session (as the JSON the agent
  sent, camelCase keys), and :meth:`EditorClient.wait_for` waits, with a
  bound, for one matching a predicate: no sleeps;
* ``fs/read_text_file`` and ``fs/write_text_file`` go to an in-memory map of
  unsaved buffers over the disk (a read sees the buffer when there is one, a
  write changes only the buffer until :meth:`EditorClient.save`);
* ``terminal/*`` runs real local subprocesses (output merged, truncated from
  the start at ``outputByteLimit`` as the spec says);
* ``session/request_permission`` is answered from a script of option kinds
  (``"allow_once"``, ``"allow_always"``, ``"reject_once"``,
  ``"reject_always"`` or ``"cancelled"``); a request with the script used up
  fails the test loudly.

Every client request the agent makes is logged in :attr:`EditorClient.calls`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.interfaces import Agent
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    FileSystemCapabilities,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.fakes.acp_client import permission_answer

__all__ = ["EditorClient", "Update"]

#: One ``session/update`` as the agent sent it: ``{"sessionUpdate": ..., ...}``.
Update = dict[str, Any]

#: How long a test waits for an update before it fails (a bound, not a pause).
WAIT_S = 60.0


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None

    def append(self, chunk: bytes) -> None:
        self.output += chunk
        if self.limit is not None and len(self.output) > self.limit:
            cut = len(self.output) - self.limit
            # Never cut a UTF-8 character in half: skip continuation bytes.
            while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                cut += 1
            del self.output[:cut]
            self.truncated = True

    def exit_status(self) -> TerminalExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return TerminalExitStatus(exit_code=None, signal=f"signal {-code}")
        return TerminalExitStatus(exit_code=code, signal=None)


class EditorClient:
    """An editor as an ACP client; see the module docstring."""

    def __init__(
        self,
        root: Path,
        *,
        permissions: list[str] | None = None,
        fs: bool = True,
        terminal: bool = True,
    ) -> None:
        self.root = root
        self.fs = fs
        self.terminal = terminal
        #: Unsaved buffers by absolute path (what the person sees in the editor).
        self.buffers: dict[Path, str] = {}
        #: The permission answers still to give, in order.
        self.permissions: list[str] = list(permissions or [])
        #: When set, permission requests wait (bounded) until it is set: a
        #: test holds a run at a known point (a busy session, a steer).
        self.hold_permissions: asyncio.Event | None = None
        #: Every permission request: (session id, tool call JSON, option kinds).
        self.permission_requests: list[tuple[str, dict[str, Any], list[str]]] = []
        #: Every client request the agent made: (method, params JSON).
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.updates: dict[str, list[Update]] = {}
        self.terminals: dict[str, _Terminal] = {}
        self._changed = asyncio.Condition()
        self._next_terminal = 0
        self.agent: Agent | None = None

    # ------------------------------------------------------------ set-up

    def capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs),
            terminal=self.terminal,
        )

    def on_connect(self, conn: Agent) -> None:
        self.agent = conn

    # ------------------------------------------------------ the buffers

    def _path(self, path: str) -> Path:
        given = Path(path)
        if not given.is_absolute():
            raise RequestError.invalid_params({"path": f"must be absolute, got {path!r}"})
        return given

    def text(self, path: Path) -> str:
        """What the editor shows for ``path``: the buffer, else the disk."""
        if path in self.buffers:
            return self.buffers[path]
        return path.read_text(encoding="utf-8")

    def open(self, path: Path, text: str) -> None:
        """The person types ``text`` into ``path`` without saving."""
        self.buffers[path] = text

    def save(self, path: Path) -> None:
        path.write_text(self.buffers[path], encoding="utf-8")

    # ------------------------------------------------------ session/update

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        data = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        async with self._changed:
            self.updates.setdefault(session_id, []).append(data)
            self._changed.notify_all()

    def of(self, session_id: str, kind: str | None = None) -> list[Update]:
        """The updates of a session so far (of one ``sessionUpdate`` kind)."""
        got = self.updates.get(session_id, [])
        return [u for u in got if kind is None or u["sessionUpdate"] == kind]

    def said(self, session_id: str) -> str:
        """The agent's message text of a session, chunks joined."""
        return "".join(
            u["content"].get("text", "")
            for u in self.of(session_id, "agent_message_chunk")
            if u["content"].get("type") == "text"
        )

    def tool_calls(self, session_id: str) -> dict[str, Update]:
        """Every tool call of a session, its start and updates merged (the
        client's view of each call's latest state)."""
        calls: dict[str, Update] = {}
        for update in self.updates.get(session_id, []):
            if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
                merged = calls.setdefault(update["toolCallId"], {})
                merged.update({k: v for k, v in update.items() if k != "sessionUpdate"})
        return calls

    async def wait_for(
        self,
        session_id: str,
        predicate: Callable[[Update], bool],
        bound: float = WAIT_S,
    ) -> Update:
        """The first update of the session (recorded before or after the
        call) that matches ``predicate``; fails after ``bound`` seconds."""

        def found() -> Update | None:
            return next((u for u in self.updates.get(session_id, []) if predicate(u)), None)

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: found() is not None), bound)
        match = found()
        assert match is not None
        return match

    async def wait_for_call(
        self, method: str, predicate: Callable[[dict[str, Any]], bool] = lambda _: True
    ) -> dict[str, Any]:
        """The first client request ``method`` (made before or after the call)
        whose params match ``predicate``."""

        def found() -> dict[str, Any] | None:
            return next((p for m, p in self.calls if m == method and predicate(p)), None)

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: found() is not None), WAIT_S)
        match = found()
        assert match is not None
        return match

    async def _log(self, method: str, params: dict[str, Any]) -> None:
        async with self._changed:
            self.calls.append((method, params))
            self._changed.notify_all()

    # ------------------------------------------------------------ fs/*

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        await self._log(
            "fs/read_text_file",
            {"sessionId": session_id, "path": path, "line": line, "limit": limit},
        )
        target = self._path(path)
        try:
            text = self.text(target)
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            end = None if limit is None else start + limit
            text = "".join(lines[start:end])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        await self._log(
            "fs/write_text_file", {"sessionId": session_id, "path": path, "content": content}
        )
        self.buffers[self._path(path)] = content
        return WriteTextFileResponse()

    # ------------------------------------------------------- permissions

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        call = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
        kinds = [option.kind for option in options]
        await self._log("session/request_permission", {"sessionId": session_id, "toolCall": call})
        self.permission_requests.append((session_id, call, kinds))
        if self.hold_permissions is not None:
            await asyncio.wait_for(self.hold_permissions.wait(), WAIT_S)
        if not self.permissions:
            raise AssertionError(f"unscripted permission request for {call}")
        return permission_answer(self.permissions.pop(0), options)

    # -------------------------------------------------------- terminal/*

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        await self._log(
            "terminal/create",
            {"sessionId": session_id, "command": command, "args": args or [], "cwd": cwd},
        )
        extra = {variable.name: variable.value for variable in env or []}
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd or str(self.root),
            env={**os.environ, **extra},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        self._next_terminal += 1
        terminal_id = f"term-{self._next_terminal}"
        terminal = _Terminal(process, output_byte_limit)
        terminal.reader = asyncio.create_task(self._pump(terminal))
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def _pump(self, terminal: _Terminal) -> None:
        stream = terminal.process.stdout
        assert stream is not None
        while chunk := await stream.read(4096):
            terminal.append(chunk)

    def _terminal(self, terminal_id: str) -> _Terminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.resource_not_found(terminal_id)
        return terminal

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        await self._log("terminal/output", {"sessionId": session_id, "terminalId": terminal_id})
        terminal = self._terminal(terminal_id)
        if terminal.process.returncode is not None and terminal.reader is not None:
            await terminal.reader  # the last output before the exit status
        return TerminalOutputResponse(
            output=terminal.output.decode("utf-8", errors="replace"),
            truncated=terminal.truncated,
            exit_status=terminal.exit_status(),
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        await self._log(
            "terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id}
        )
        terminal = self._terminal(terminal_id)
        await terminal.process.wait()
        status = terminal.exit_status()
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        await self._log("terminal/kill", {"sessionId": session_id, "terminalId": terminal_id})
        terminal = self._terminal(terminal_id)
        if terminal.process.returncode is None:
            terminal.process.kill()
            await terminal.process.wait()
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        await self._log("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
        terminal = self.terminals.pop(terminal_id, None)
        if terminal is None:
            raise RequestError.resource_not_found(terminal_id)
        await _stop(terminal)
        return ReleaseTerminalResponse()

    async def aclose(self) -> None:
        """Stop every terminal the agent left behind."""
        for terminal in self.terminals.values():
            await _stop(terminal)
        self.terminals.clear()

    # ------------------------------------------------------ the rest

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        await self._log(method, params)


async def _stop(terminal: _Terminal) -> None:
    if terminal.process.returncode is None:
        terminal.process.kill()
        await terminal.process.wait()
    if terminal.reader is not None:
        with contextlib.suppress(asyncio.CancelledError):
            await terminal.reader
