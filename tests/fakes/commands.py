"""The CommandRunner port: commands answered from a dict."""

from __future__ import annotations

import anyio
import anyio.lowlevel


class FakeCommandRunner:
    """A CommandRunner answering from a dict command -> (exit_code, output);
    ``gate`` (an anyio.Event) holds every run until set, to test overlap."""

    def __init__(self, results: dict[str, tuple[int, str]] | None = None) -> None:
        from rein.harness.ports import CommandResult

        self._result_type = CommandResult
        self.results = dict(results or {})
        self.calls: list[str] = []
        #: The ``writable`` folders of each call, in order.
        self.writable: list[list[str]] = []
        self.running = 0
        self.max_running = 0
        self.gate: anyio.Event | None = None

    async def run(self, command: str, *, timeout_s: float = 600.0, writable=()):  # type: ignore[no-untyped-def]
        self.calls.append(command)
        self.writable.append(list(writable))
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            if self.gate is not None:
                await self.gate.wait()
            else:
                await anyio.lowlevel.checkpoint()
        finally:
            self.running -= 1
        code, output = self.results.get(command, (0, ""))
        return self._result_type(exit_code=code, output=output)
