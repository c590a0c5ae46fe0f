"""One connection to one MCP server through the ``mcp`` SDK.

The only module that imports the SDK. A :class:`McpConnection` runs the
SDK's transport and session in a task of its own (their context managers
must be entered and left by one task), so a call may come from any task.
Stdio servers run under :func:`rein.process.groups.dies_with_us`: they are
killed with Rein even when Rein is killed; in the OS sandbox when
``sandbox.also`` names them (the connection's ``sandbox``). The server's stderr goes to a
temporary file whose tail explains a failed start.

Failures are :class:`McpCallFailed` with a ``kind``: "timeout" (the call
took longer than the server's timeout; it was cancelled, which sends the
MCP cancellation), "closed" (the connection is gone: a crash) or "error"
(the server answered with a JSON-RPC error). Cancelling the caller (an
aborted run) cancels the request the same way.

A stdio server's output is decoded with replacement: one line that is not
UTF-8 is a message that does not parse (dropped), not a dead reader (the
SDK's strict default ended its reader and every later call waited out its
timeout). When the server's output ends without our stop (it exited, was
killed, closed its stdout), ``on_closed`` says why at once, calls or not:
the manager restarts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import IO, Any

import anyio
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation, ToolListChangedNotification
from pydantic import ValidationError

from rein.harness.ports import ProcessSandbox
from rein.mcp.config import McpServerSpec
from rein.mcp.tools import McpCallFailed, McpToolInfo
from rein.process.groups import dies_with_us

__all__ = ["McpConnection"]

_STDERR_TAIL = 2000


class McpConnection:
    """A started server: its tools, calls, and a way to stop it."""

    def __init__(
        self,
        spec: McpServerSpec,
        *,
        on_tools_changed: Callable[[], None],
        on_closed: Callable[[str], None] | None = None,
        sandbox: ProcessSandbox | None = None,
    ) -> None:
        self.spec = spec
        #: The sandbox a stdio server runs in (``sandbox.also``); None: none.
        self.sandbox = sandbox
        self._on_tools_changed = on_tools_changed
        self._on_closed = on_closed
        self._session: ClientSession | None = None
        self._stop = asyncio.Event()
        #: The server's output ended before :meth:`stop` (see ``on_closed``).
        self._output_ended = False
        self._task: asyncio.Task[None] | None = None
        self._stderr: IO[str] | None = None
        #: The last line of the server's output that was not JSON-RPC (a
        #: banner or a log line on stdout): said when the start fails.
        self._not_json: str | None = None
        self.closed = False

    async def start(self, timeout_s: float) -> None:
        """Connect and initialize, within ``timeout_s``; raises with the
        server's stderr tail on failure (and leaves nothing running)."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.get_running_loop().create_task(self._run(ready))
        try:
            async with asyncio.timeout(timeout_s):
                await asyncio.shield(ready)
        except TimeoutError:
            note = self._output_note() + self._stderr_note()
            await self.stop()
            if ready.done() and not ready.cancelled():
                ready.exception()  # the stop's cancellation: this time-out says why
            raise RuntimeError(f"did not start within {timeout_s:g} s{note}") from None
        except BaseException as exc:
            note = self._output_note() + self._stderr_note()
            await self.stop()
            if isinstance(exc, Exception):
                raise RuntimeError(f"{_describe(exc)}{note}") from exc
            raise

    async def _transport(self) -> Any:
        spec = self.spec
        if spec.transport == "http":
            return _http_transport(spec.url or "", dict(spec.headers))
        from mcp.client.stdio import StdioServerParameters, stdio_client

        argv = [spec.command or "", *spec.args]
        if self.sandbox is not None:
            argv = (await self.sandbox.start(argv, cwd=spec.cwd or os.getcwd(), ends=False)).argv
        argv = dies_with_us(argv)
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        params = StdioServerParameters(
            command=argv[0],
            args=argv[1:],
            env=dict(spec.env) or None,
            cwd=spec.cwd,
            encoding_error_handler="replace",
        )
        return stdio_client(params, errlog=self._stderr)

    async def _run(self, ready: asyncio.Future[None]) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write = (await stack.enter_async_context(await self._transport()))[:2]
                # The session reads through a relay that sees the output end.
                relay, received = anyio.create_memory_object_stream[Any](0)
                relays = await stack.enter_async_context(anyio.create_task_group())
                relays.start_soon(self._relay, read, relay)
                stack.callback(relays.cancel_scope.cancel)  # before the transport closes
                session = await stack.enter_async_context(
                    ClientSession(
                        received,
                        write,
                        message_handler=self._on_message,
                        client_info=Implementation(name="rein", version="0.1.0"),
                    )
                )
                await session.initialize()
                self._session = session
                ready.set_result(None)
                await self._stop.wait()
                if self._output_ended:
                    self.closed = True
                    why = f"its output ended (it exited or closed its stdout){self._stderr_note()}"
                    if self._on_closed is not None:
                        self._on_closed(why)
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            self.closed = True
            self._session = None

    async def _relay(self, read: Any, relay: Any) -> None:
        """Pass the server's messages on to the session; when its output
        ends (not by our stop), wake :meth:`_run` to say so."""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async with relay:
                async for item in read:
                    if isinstance(item, Exception):  # a line that is not JSON-RPC
                        self._not_json = _bad_line(item)
                    await relay.send(item)
        if not self._stop.is_set():
            self._output_ended = True
            self._stop.set()

    async def _on_message(self, message: object) -> None:
        if isinstance(message, ToolListChangedNotification):
            self._on_tools_changed()

    def _output_note(self) -> str:
        if self._not_json is None:
            return ""
        return f"; its output is not JSON-RPC: {self._not_json!r}"

    def _stderr_note(self) -> str:
        if self._stderr is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            self._stderr.seek(0)
            tail = self._stderr.read()[-_STDERR_TAIL:].strip()
            if tail:
                return f"; its stderr ends with:\n{tail}"
        return ""

    async def list_tools(self) -> list[McpToolInfo]:
        session = self._live()
        tools: list[McpToolInfo] = []
        cursor: str | None = None
        from mcp_types import PaginatedRequestParams

        while True:
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(
                McpToolInfo(
                    server=self.spec.name,
                    name=tool.name,
                    description=tool.description or "",
                    input_schema=tool.input_schema,
                )
                for tool in page.tools
            )
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """The call's result as its JSON dict (camelCase keys)."""
        session = self._live()
        try:
            with anyio.fail_after(timeout_s):
                result = await session.call_tool(tool, arguments)
        except TimeoutError:
            raise McpCallFailed(
                "timeout", f"no result within the server's timeout of {timeout_s:g} s"
            ) from None
        except MCPError as exc:
            if self.closed or "closed" in str(exc).lower():
                self.closed = True
                raise McpCallFailed(
                    "closed", f"the server's connection closed during the call ({exc})"
                ) from exc
            raise McpCallFailed("error", f"the server answered with an error: {exc}") from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            self.closed = True
            raise McpCallFailed("closed", f"the server's connection broke ({exc!r})") from exc
        dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped

    def _live(self) -> ClientSession:
        if self._session is None or self.closed:
            raise McpCallFailed("closed", "the server is not running")
        return self._session

    async def stop(self) -> None:
        """Stop the server (the SDK ends the process and its children)."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            if self._session is not None:
                # Running: leave the session and the transport in order (bounded).
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(asyncio.shield(task), 10)
            if not task.done():
                # Still starting (a start past its bound), or stuck leaving:
                # cancelled, which ends the server's process with it.
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def _bad_line(exc: Exception) -> str:
    """The line the SDK could not parse (its validation error's input)."""
    if isinstance(exc, ValidationError) and exc.errors():
        line = exc.errors()[0].get("input")
        if isinstance(line, str):
            return line[:200]
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


class _SaidByRein(logging.Filter):
    """The SDK logs a line that is not JSON-RPC with a traceback on stderr;
    Rein says it itself, in the server's failure (:meth:`McpConnection.start`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to parse JSONRPC message")


logging.getLogger("mcp.client.stdio").addFilter(_SaidByRein())


@contextlib.asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """Streamable HTTP with the configured headers, on an HTTP client with
    the SDK's own timeouts (its helper; the SDK takes headers only that way)."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=headers or None) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
