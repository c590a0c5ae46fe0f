"""The preview's process factory: processes a test drives."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.lowlevel


class FakePreviewProcess:
    """A PreviewProcess the test drives: ``print(*lines)`` adds output,
    ``exit(code)`` ends it. ``stop`` ends it like SIGTERM (-15), ``kill``
    like SIGKILL (-9); signals go to the factory's ``on_signal``. ``ports``
    are the TCP ports it listens on (``listening_ports``)."""

    def __init__(self, factory: FakePreviewFactory, pid: int, command: str) -> None:
        self.factory = factory
        self._pid = pid
        self.command = command
        self._send, self._receive = anyio.create_memory_object_stream[str](10_000)
        self._exit_code: int | None = None
        self.exited = anyio.Event()
        self.signals: list[int] = []
        self.ports: set[int] = set()

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def exit_code(self) -> int | None:
        return self._exit_code

    def print(self, *lines: str) -> None:
        for line in lines:
            self._send.send_nowait(line)

    def exit(self, code: int) -> None:
        if self._exit_code is None:
            self._exit_code = code
            self._send.close()
            self.exited.set()

    async def read_line(self) -> str | None:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            return None

    async def wait(self) -> int:
        await self.exited.wait()
        assert self._exit_code is not None
        return self._exit_code

    def send_signal(self, signum: int) -> None:
        with self.factory.operation("signal", self.pid):
            self.signals.append(signum)
            if self.factory.on_signal is not None:
                self.factory.on_signal(self, signum)

    async def stop(self, grace_s: float) -> None:
        with self.factory.operation("stop", self.pid):
            await anyio.lowlevel.checkpoint()
            self.exit(-15)

    def kill(self) -> None:
        self.exit(-9)

    def listening_ports(self) -> set[int]:
        return set() if self._exit_code is not None else set(self.ports)


class FakePreviewFactory:
    """A PreviewProcessFactory of FakePreviewProcesses.

    ``on_start(process)`` runs right after each start (print "ready", or
    ``exit(1)``); ``on_signal(process, signum)`` on each signal. While
    ``hold`` (an anyio.Event) is not set, every start waits for it and
    ``holding`` is set. ``operations`` records ``(op, pid, began, ended)``
    on the event loop's clock; ``max_active`` is the most operations that
    ever overlapped. ``http_ready`` answers False for the first
    ``http_fails`` calls, then True."""

    def __init__(
        self,
        on_start: Callable[[FakePreviewProcess], None] | None = None,
        on_signal: Callable[[FakePreviewProcess, int], None] | None = None,
    ) -> None:
        self.on_start = on_start
        self.on_signal = on_signal
        self.processes: list[FakePreviewProcess] = []
        self.operations: list[tuple[str, int, float, float]] = []
        self.active = 0
        self.max_active = 0
        self.hold: anyio.Event | None = None
        self.holding = anyio.Event()
        self.http_fails = 0
        self.http_calls: list[str] = []
        self.fail_next: Exception | None = None

    def operation(self, name: str, pid: int) -> _PreviewOperation:
        return _PreviewOperation(self, name, pid)

    async def start(self, command: str) -> FakePreviewProcess:
        if self.fail_next is not None:
            exc, self.fail_next = self.fail_next, None
            raise exc
        pid = 4000 + len(self.processes)
        with self.operation("start", pid):
            if self.hold is not None and not self.hold.is_set():
                self.holding.set()
                await self.hold.wait()
            else:
                await anyio.lowlevel.checkpoint()
            process = FakePreviewProcess(self, pid, command)
            self.processes.append(process)
            if self.on_start is not None:
                self.on_start(process)
        return process

    async def http_ready(self, url: str, timeout_s: float) -> bool:
        self.http_calls.append(url)
        await anyio.lowlevel.checkpoint()
        return len(self.http_calls) > self.http_fails

    def ops(self, name: str | None = None) -> list[tuple[str, int, float, float]]:
        return [op for op in self.operations if name is None or op[0] == name]


class _PreviewOperation:
    """Records one operation of a FakePreviewFactory and counts overlaps."""

    def __init__(self, factory: FakePreviewFactory, name: str, pid: int) -> None:
        self.factory, self.name, self.pid = factory, name, pid
        self.began = 0.0

    def __enter__(self) -> None:
        self.began = anyio.current_time()
        self.factory.active += 1
        self.factory.max_active = max(self.factory.max_active, self.factory.active)

    def __exit__(self, *exc: object) -> None:
        self.factory.active -= 1
        self.factory.operations.append((self.name, self.pid, self.began, anyio.current_time()))
