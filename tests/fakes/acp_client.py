"""The editor's side of an ACP connection for unit tests of the ports in
``rein.acp``: scripted terminals and permission answers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from acp.exceptions import RequestError
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.fakes._text import _BOM


class FakeTerminal:
    """One scripted terminal of :class:`FakeAcpClient`. Each
    ``terminal/output`` serves the next chunk of ``chunks`` (the answer is
    everything served so far, as a client's is); once every chunk was
    served the command exits with ``exit_code`` (or ``signal``), unless it
    ``hangs``: then it runs until ``terminal/kill``."""

    def __init__(
        self,
        chunks: Sequence[str] = (),
        *,
        exit_code: int | None = 0,
        signal: str | None = None,
        hangs: bool = False,
    ) -> None:
        self.chunks = list(chunks)
        self.exit_code = exit_code
        self.signal = signal
        self.hangs = hangs
        self.served = 0
        self.killed = False
        self.released = False
        self._exited: anyio.Event | None = None

    @property
    def output(self) -> str:
        return "".join(self.chunks[: self.served])

    @property
    def exited(self) -> anyio.Event:
        if self._exited is None:
            self._exited = anyio.Event()
            self._check_exit()
        return self._exited

    def _check_exit(self) -> None:
        if self.killed or (self.served >= len(self.chunks) and not self.hangs):
            self.exited.set()

    def serve(self) -> None:
        self.served = min(self.served + 1, len(self.chunks))
        self._check_exit()

    def kill(self) -> None:
        if not self.exited.is_set():
            self.killed = True
            self.exit_code, self.signal = None, "SIGKILL"
        self.exited.set()

    def status(self) -> Any:
        if not self.exited.is_set():
            return None
        return TerminalExitStatus(exit_code=self.exit_code, signal=self.signal)


def permission_answer(answer: str, options: Sequence[Any]) -> RequestPermissionResponse:
    """The person's ``answer`` to a permission request: "cancelled", or the
    id or else the kind of the option they select (the first of that kind;
    an ``AssertionError`` when there is none)."""
    if answer == "cancelled":
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
    option = next((o for o in options if o.option_id == answer), None)
    option = option or next((o for o in options if o.kind == answer), None)
    if option is None:
        raise AssertionError(f"no {answer!r} option among {[o.kind for o in options]}")
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
    )


class FakeAcpClient:
    """The editor's side of an ACP connection, for unit tests of the ports
    in ``rein.acp``: implements the requests they send (``fs/*``,
    ``terminal/*``, ``session/request_permission``, elicitation,
    ``session/update``) and records each as ``(method, params)`` in
    ``calls``.

    ``buffers`` maps absolute paths to the editor's (unsaved) texts; a read
    of any other path reads the disk, a write goes into ``buffers`` only
    (``save(path)`` is the person saving it). ``terminals`` are handed out in
    order by ``terminal/create``. ``permissions`` are the person's answers
    in order: an option kind ("allow_once", "allow_always", "reject_once",
    "reject_always", the option of that kind is selected) or "cancelled".
    ``fail[method]`` is raised by that method; a method in ``hang`` never
    answers. ``answered[method]`` is set after each answer."""

    def __init__(
        self,
        *,
        buffers: Mapping[str, str] | None = None,
        terminals: Sequence[FakeTerminal] = (),
        permissions: Sequence[str] = (),
        fail: Mapping[str, BaseException] | None = None,
        hang: Sequence[str] = (),
    ) -> None:
        self.buffers = dict(buffers or {})
        #: path -> whether the file it read from disk had a byte order mark.
        self.boms: dict[str, bool] = {}
        self.terminal_script = list(terminals)
        self.terminals: dict[str, FakeTerminal] = {}
        self.permissions = list(permissions)
        self.fail = dict(fail or {})
        self.hang = set(hang)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.updates: list[tuple[str, Any]] = []

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]

    def params(self, method: str) -> list[dict[str, Any]]:
        return [params for m, params in self.calls if m == method]

    def save(self, path: str) -> None:
        """The person saves the editor's buffer of ``path`` to disk."""
        bom = _BOM if self.boms.get(path) else b""
        Path(path).write_bytes(bom + self.buffers[path].encode("utf-8"))

    async def _enter(self, method: str, **params: Any) -> None:
        self.calls.append((method, params))
        if method in self.hang:
            await anyio.sleep_forever()
        if method in self.fail:
            raise self.fail[method]

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        await self._enter("fs/read_text_file", session_id=session_id, path=path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            # As an editor loads a file: line ends as they are, a byte order
            # mark kept out of the text (and put back by ``save``).
            data = await anyio.Path(path).read_bytes()
            self.boms[path] = data.startswith(_BOM)
            return ReadTextFileResponse(content=data.removeprefix(_BOM).decode("utf-8"))
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        await self._enter("fs/write_text_file", session_id=session_id, path=path, content=content)
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        await self._enter(
            "terminal/create",
            session_id=session_id,
            command=command,
            args=args,
            env=env,
            cwd=cwd,
            output_byte_limit=output_byte_limit,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = self.terminal_script.pop(0)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/output", session_id=session_id, terminal_id=terminal_id)
        terminal = self.terminals[terminal_id]
        terminal.serve()
        return TerminalOutputResponse(
            output=terminal.output, truncated=False, exit_status=terminal.status()
        )

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/wait_for_exit", session_id=session_id, terminal_id=terminal_id)
        terminal = self.terminals[terminal_id]
        await terminal.exited.wait()
        return WaitForTerminalExitResponse(exit_code=terminal.exit_code, signal=terminal.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/kill", session_id=session_id, terminal_id=terminal_id)
        self.terminals[terminal_id].kill()
        return None

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/release", session_id=session_id, terminal_id=terminal_id)
        terminal = self.terminals[terminal_id]
        terminal.kill()  # a released terminal's command ends (the ACP spec)
        terminal.released = True
        return None

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        await self._enter(
            "session/request_permission",
            session_id=session_id,
            tool_call=tool_call,
            options=options,
        )
        return permission_answer(self.permissions.pop(0), options)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        await self._enter("elicitation/create", message=message, mode=mode)
        raise AssertionError("Rein offers no elicitation in protocol version 1")

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.calls.append(("session/update", {"session_id": session_id, "update": update}))
        self.updates.append((session_id, update))


class FakeClientLink:
    """A :class:`rein.acp.context.ClientLink` over a :class:`FakeAcpClient`:
    ``fs`` ("read", "write"), ``terminal`` and ``elicitation`` say what the
    client offered in ``initialize``; ``initialized=False`` is the time
    before it (no capabilities at all)."""

    def __init__(
        self,
        client: FakeAcpClient,
        *,
        fs: Sequence[str] = ("read", "write"),
        terminal: bool = True,
        elicitation: bool = False,
        initialized: bool = True,
    ) -> None:
        self.client = client
        self.capabilities: Any = (
            ClientCapabilities.model_validate(
                {
                    "fs": {"readTextFile": "read" in fs, "writeTextFile": "write" in fs},
                    "terminal": terminal,
                    **({"elicitation": {"form": {}}} if elicitation else {}),
                }
            )
            if initialized
            else None
        )

    @property
    def conn(self) -> Any:
        return self.client


class WatchedAcpClient(FakeAcpClient):
    """A :class:`FakeAcpClient` a test can wait on: :meth:`wait_update`
    returns the first ``session/update`` that matches (bounded), and
    :meth:`texts` joins the agent's message chunks. A method in ``held``
    answers only after :meth:`release` (the person is slow to decide)."""

    def __init__(self, *, held: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._arrived = asyncio.Condition()
        self._held = {method: asyncio.Event() for method in held}

    def release(self, method: str) -> None:
        self._held[method].set()

    async def _enter(self, method: str, **params: Any) -> None:
        await super()._enter(method, **params)
        if method in self._held:
            await self._held[method].wait()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        async with self._arrived:
            self._arrived.notify_all()

    async def wait_update(self, match: Callable[[Any], bool], timeout_s: float = 10.0) -> Any:
        async with self._arrived:
            await asyncio.wait_for(
                self._arrived.wait_for(lambda: any(match(u) for _, u in self.updates)),
                timeout_s,
            )
        return next(u for _, u in self.updates if match(u))

    def of(self, kind: str) -> list[Any]:
        """The updates of one ``sessionUpdate`` kind, in order."""
        return [u for _, u in self.updates if u.session_update == kind]

    def texts(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))
