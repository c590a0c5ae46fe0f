"""The terminals of the test ACP client (:class:`tests.fakes.acp_client.FakeAcpClient`):
scripted ones for unit tests of the ports, real local processes for the
scenario tests of ``rein acp``. Both answer ``terminal/*`` the same way."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from typing import Protocol

import anyio
from acp.schema import TerminalExitStatus, TerminalOutputResponse, WaitForTerminalExitResponse

__all__ = ["ClientTerminal", "FakeTerminal", "LocalTerminal"]


class ClientTerminal(Protocol):
    """One terminal of the client, as its ``terminal/*`` methods use it."""

    killed: bool
    released: bool

    async def output(self) -> TerminalOutputResponse: ...

    async def wait_exit(self) -> WaitForTerminalExitResponse: ...

    async def kill(self) -> None: ...

    async def release(self) -> None:
        """End the command (a released terminal's command ends, as the ACP
        spec says) and mark the terminal released."""


class FakeTerminal:
    """A scripted terminal. Each ``terminal/output`` serves the next chunk of
    ``chunks`` (the answer is everything served so far, as a client's is);
    once every chunk was served the command exits with ``exit_code`` (or
    ``signal``), unless it ``hangs``: then it runs until ``terminal/kill``."""

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
    def text(self) -> str:
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

    def _status(self) -> TerminalExitStatus | None:
        if not self.exited.is_set():
            return None
        return TerminalExitStatus(exit_code=self.exit_code, signal=self.signal)

    async def output(self) -> TerminalOutputResponse:
        self.served = min(self.served + 1, len(self.chunks))
        self._check_exit()
        return TerminalOutputResponse(output=self.text, truncated=False, exit_status=self._status())

    async def wait_exit(self) -> WaitForTerminalExitResponse:
        await self.exited.wait()
        return WaitForTerminalExitResponse(exit_code=self.exit_code, signal=self.signal)

    async def kill(self) -> None:
        if not self.exited.is_set():
            self.killed = True
            self.exit_code, self.signal = None, "SIGKILL"
        self.exited.set()

    async def release(self) -> None:
        await self.kill()
        self.released = True


class LocalTerminal:
    """A real local subprocess (output merged, truncated from the start at
    ``limit`` bytes as the spec says, never inside a UTF-8 character). Use
    :meth:`start`."""

    def __init__(self, process: asyncio.subprocess.Process, limit: int | None) -> None:
        self.process = process
        self.limit = limit
        self.buffer = bytearray()
        self.truncated = False
        self.killed = False
        self.released = False
        self._reader = asyncio.create_task(self._pump())

    @classmethod
    async def start(
        cls,
        command: str,
        args: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        limit: int | None,
    ) -> LocalTerminal:
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            cwd=cwd,
            env={**os.environ, **env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        return cls(process, limit)

    async def _pump(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while chunk := await stream.read(4096):
            self._append(chunk)

    def _append(self, chunk: bytes) -> None:
        self.buffer += chunk
        if self.limit is not None and len(self.buffer) > self.limit:
            cut = len(self.buffer) - self.limit
            # Never cut a UTF-8 character in half: skip continuation bytes.
            while cut < len(self.buffer) and (self.buffer[cut] & 0xC0) == 0x80:
                cut += 1
            del self.buffer[:cut]
            self.truncated = True

    def _status(self) -> TerminalExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return TerminalExitStatus(exit_code=None, signal=f"signal {-code}")
        return TerminalExitStatus(exit_code=code, signal=None)

    async def output(self) -> TerminalOutputResponse:
        if self.process.returncode is not None:
            await self._reader  # the last output before the exit status
        return TerminalOutputResponse(
            output=self.buffer.decode("utf-8", errors="replace"),
            truncated=self.truncated,
            exit_status=self._status(),
        )

    async def wait_exit(self) -> WaitForTerminalExitResponse:
        await self.process.wait()
        status = self._status()
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.killed = True
            self.process.kill()
            await self.process.wait()

    async def release(self) -> None:
        await self.kill()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        self.released = True
