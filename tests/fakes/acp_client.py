"""The editor's side of an ACP connection, the one test client of every ACP
test: the unit tests of the ports in ``rein.acp`` call it directly (through
:class:`FakeClientLink`), the scenario tests connect it to a real
``rein acp`` (it behaves as Zed or a JetBrains IDE would).

* every request the agent makes is recorded in :attr:`FakeAcpClient.calls`
  as ``(method, params)``;
* ``fs/*`` go to a map of unsaved buffers over the disk (a read sees the
  buffer when there is one, a write changes only the buffer until
  :meth:`FakeAcpClient.save`);
* ``terminal/*`` serve scripted :class:`FakeTerminal`\\ s, or with
  ``run_commands`` run real local processes (:class:`LocalTerminal`);
* ``session/request_permission`` is answered from a script of option kinds
  or ids (:func:`permission_answer`); a request with the script used up
  fails the test loudly;
* every ``session/update`` is recorded; a test waits for one, with a bound,
  either as the SDK's model (:meth:`FakeAcpClient.wait_update`) or as the
  JSON the agent sent (:meth:`FakeAcpClient.wait_for`): no sleeps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from acp import RequestError
from acp.interfaces import Agent
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from tests.fakes._text import _BOM
from tests.fakes.acp_terminals import ClientTerminal, FakeTerminal, LocalTerminal

__all__ = [
    "FakeAcpClient",
    "FakeClientLink",
    "FakeTerminal",
    "LocalTerminal",
    "Update",
    "permission_answer",
]

#: One ``session/update`` as the agent sent it: ``{"sessionUpdate": ..., ...}``.
Update = dict[str, Any]

#: How long a test waits for an update or a held answer before it fails (a
#: bound, not a pause).
WAIT_S = 60.0


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
    """The editor's side of an ACP connection; see the module docstring.

    ``root``: where local commands run by default. ``fs`` and ``terminal``:
    what :meth:`capabilities` offers in ``initialize``. ``buffers`` maps
    absolute paths to the editor's (unsaved) texts. ``terminals`` are handed
    out in order by ``terminal/create``; once they are used up,
    ``run_commands`` runs the command for real. ``permissions`` are the
    person's answers in order. ``fail[method]`` is raised by that method; a
    method in ``hang`` never answers; a method in ``held`` answers only after
    :meth:`release` (the person is slow to decide)."""

    def __init__(
        self,
        root: Path | None = None,
        *,
        fs: bool = True,
        terminal: bool = True,
        buffers: Mapping[str, str] | None = None,
        terminals: Sequence[FakeTerminal] = (),
        run_commands: bool = False,
        permissions: Sequence[str] = (),
        fail: Mapping[str, BaseException] | None = None,
        hang: Sequence[str] = (),
        held: Sequence[str] = (),
    ) -> None:
        self.root = root
        self.fs = fs
        self.terminal = terminal
        self.buffers = dict(buffers or {})
        #: path -> whether the file it read from disk had a byte order mark.
        self.boms: dict[str, bool] = {}
        self.terminal_script: list[FakeTerminal] = list(terminals)
        self.run_commands = run_commands
        self.terminals: dict[str, ClientTerminal] = {}
        self.permissions = list(permissions)
        #: Every permission request: (session id, tool call JSON, option kinds).
        self.permission_requests: list[tuple[str, dict[str, Any], list[str]]] = []
        self.fail = dict(fail or {})
        self.hang = set(hang)
        self._held = {method: asyncio.Event() for method in held}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        #: Every ``session/update``: (session id, the SDK's model).
        self.updates: list[tuple[str, Any]] = []
        self._changed = asyncio.Condition()
        self.agent: Agent | None = None

    # ------------------------------------------------------------ set-up

    def capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs),
            terminal=self.terminal,
        )

    def on_connect(self, conn: Agent) -> None:
        self.agent = conn

    # ------------------------------------------------------- the calls

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]

    def params(self, method: str) -> list[dict[str, Any]]:
        return [params for m, params in self.calls if m == method]

    def hold(self, method: str) -> None:
        """From now on ``method`` answers only after :meth:`release`."""
        self._held[method] = asyncio.Event()

    def release(self, method: str) -> None:
        self._held[method].set()

    async def _log(self, method: str, params: dict[str, Any]) -> None:
        async with self._changed:
            self.calls.append((method, params))
            self._changed.notify_all()

    async def _enter(self, method: str, **params: Any) -> None:
        await self._log(method, params)
        if method in self.hang:
            await anyio.sleep_forever()
        if method in self.fail:
            raise self.fail[method]
        if method in self._held:
            await asyncio.wait_for(self._held[method].wait(), WAIT_S)

    async def wait_for_call(
        self, method: str, predicate: Callable[[dict[str, Any]], bool] = lambda _: True
    ) -> dict[str, Any]:
        """The params of the first request ``method`` (made before or after
        the call) that match ``predicate``; fails after a bound."""
        return await self._first(
            lambda: next((p for m, p in self.calls if m == method and predicate(p)), None), WAIT_S
        )

    async def _first(self, found: Callable[[], Any], bound: float) -> Any:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: found() is not None), bound)
        return found()

    # ------------------------------------------------------ the buffers

    def text(self, path: Path | str) -> str:
        """What the editor shows for ``path``: the buffer, else the disk."""
        key = str(path)
        if key in self.buffers:
            return self.buffers[key]
        return Path(key).read_text(encoding="utf-8")

    def open(self, path: Path | str, text: str) -> None:
        """The person types ``text`` into ``path`` without saving."""
        self.buffers[str(path)] = text

    def save(self, path: Path | str) -> None:
        """The person saves the editor's buffer of ``path`` to disk."""
        key = str(path)
        bom = _BOM if self.boms.get(key) else b""
        Path(key).write_bytes(bom + self.buffers[key].encode("utf-8"))

    # ------------------------------------------------------------ fs/*

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        await self._enter("fs/read_text_file", session_id=session_id, path=path)
        if not Path(path).is_absolute():
            raise RequestError.invalid_params({"path": f"must be absolute, got {path!r}"})
        if path in self.buffers:
            text = self.buffers[path]
        else:
            try:
                # As an editor loads a file: line ends as they are, a byte
                # order mark kept out of the text (and put back by ``save``).
                data = await anyio.Path(path).read_bytes()
            except FileNotFoundError:
                raise RequestError.resource_not_found(path) from None
            self.boms[path] = data.startswith(_BOM)
            text = data.removeprefix(_BOM).decode("utf-8")
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : None if limit is None else start + limit])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        await self._enter("fs/write_text_file", session_id=session_id, path=path, content=content)
        self.buffers[path] = content
        return WriteTextFileResponse()

    # -------------------------------------------------------- terminal/*

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        await self._enter(
            "terminal/create",
            session_id=session_id,
            command=command,
            args=args,
            env=env,
            cwd=cwd,
            output_byte_limit=output_byte_limit,
        )
        terminal: ClientTerminal
        if self.terminal_script:
            terminal = self.terminal_script.pop(0)
        elif self.run_commands:
            terminal = await LocalTerminal.start(
                command,
                args or [],
                cwd=cwd or str(self.root or Path.cwd()),
                env={variable.name: variable.value for variable in env or []},
                limit=output_byte_limit,
            )
        else:
            raise AssertionError(f"unscripted terminal for {command} {args}")
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _terminal(self, terminal_id: str) -> ClientTerminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None or terminal.released:
            raise RequestError.resource_not_found(terminal_id)
        return terminal

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/output", session_id=session_id, terminal_id=terminal_id)
        return await self._terminal(terminal_id).output()

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/wait_for_exit", session_id=session_id, terminal_id=terminal_id)
        return await self._terminal(terminal_id).wait_exit()

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/kill", session_id=session_id, terminal_id=terminal_id)
        await self._terminal(terminal_id).kill()
        return None

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/release", session_id=session_id, terminal_id=terminal_id)
        await self._terminal(terminal_id).release()
        return None

    async def aclose(self) -> None:
        """Stop every terminal the agent left behind."""
        for terminal in self.terminals.values():
            if not terminal.released:
                await terminal.release()

    # ------------------------------------------------------- permissions

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        call = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.permission_requests.append((session_id, call, [option.kind for option in options]))
        await self._enter(
            "session/request_permission",
            session_id=session_id,
            tool_call=tool_call,
            options=options,
        )
        if not self.permissions:
            raise AssertionError(f"unscripted permission request for {call}")
        return permission_answer(self.permissions.pop(0), options)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        await self._enter("elicitation/create", message=message, mode=mode)
        raise AssertionError("Rein offers no elicitation in protocol version 1")

    # ------------------------------------------------------ session/update

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        await self._log("session/update", {"session_id": session_id, "update": update})

    # The updates as the SDK's models, of every session.

    def of(self, kind: str) -> list[Any]:
        """The updates of one ``sessionUpdate`` kind, in order."""
        return [u for _, u in self.updates if u.session_update == kind]

    def texts(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))

    async def wait_update(self, match: Callable[[Any], bool], timeout_s: float = 10.0) -> Any:
        """The first update (recorded before or after the call) that
        matches; fails after ``timeout_s``."""
        return await self._first(
            lambda: next((u for _, u in self.updates if match(u)), None), timeout_s
        )

    # The updates of one session as the JSON the agent sent (camelCase keys).

    def sent(self, session_id: str, kind: str | None = None) -> list[Update]:
        """The updates of a session so far (of one ``sessionUpdate`` kind)."""
        got = [
            u.model_dump(mode="json", by_alias=True, exclude_none=True)
            for s, u in self.updates
            if s == session_id
        ]
        return [u for u in got if kind is None or u["sessionUpdate"] == kind]

    def said(self, session_id: str) -> str:
        """The agent's message text of a session, chunks joined."""
        return "".join(
            u["content"].get("text", "")
            for u in self.sent(session_id, "agent_message_chunk")
            if u["content"].get("type") == "text"
        )

    def tool_calls(self, session_id: str) -> dict[str, Update]:
        """Every tool call of a session, its start and updates merged (the
        client's view of each call's latest state)."""
        calls: dict[str, Update] = {}
        for update in self.sent(session_id):
            if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
                merged = calls.setdefault(update["toolCallId"], {})
                merged.update({k: v for k, v in update.items() if k != "sessionUpdate"})
        return calls

    async def wait_for(
        self, session_id: str, predicate: Callable[[Update], bool], bound: float = WAIT_S
    ) -> Update:
        """The first update of the session (recorded before or after the
        call) whose JSON matches ``predicate``; fails after ``bound``."""
        return await self._first(
            lambda: next((u for u in self.sent(session_id) if predicate(u)), None), bound
        )

    # ------------------------------------------------------------ the rest

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        await self._log(method, params)


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
