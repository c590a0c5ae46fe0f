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


class FakeTestsRunner:
    """A CommandRunner standing for a project's test runner behind the tests
    gate's configured command (``gates.tests.command: "fake-tests {junit}"``,
    which the gate runs as ``cd <shadow> && fake-tests <report>``): it reads
    ``module`` in that shadow and writes a JUnit report of one test,
    ``tests/test_mod.py::test_mod``, failing when the text holds ``broken``.
    With ``hold`` cleared, every run waits until it is set; ``started(n)``
    waits until ``n`` runs have started, ``idle()`` until none runs; a run
    cancelled (the gate's abort path: a real runner kills its process
    group) is counted in ``cancelled``."""

    def __init__(self, module: str = "mod.py", broken: str = "BROKEN") -> None:
        from rein.harness.ports import CommandResult

        self._result_type = CommandResult
        self.module, self.broken = module, broken
        #: The module's text in each run's shadow, in order.
        self.texts: list[str] = []
        self.running = 0
        self.cancelled = 0
        self.hold = anyio.Event()
        self.hold.set()
        self._changed = anyio.Event()

    async def run(self, command: str, *, timeout_s: float = 600.0, writable=()):  # type: ignore[no-untyped-def]
        import shlex
        from pathlib import Path

        words = shlex.split(command)
        assert words[0] == "cd" and words[3] == "fake-tests", command
        shadow, report = Path(words[1]), Path(words[4])
        text = await anyio.Path(shadow / self.module).read_text(encoding="utf-8")
        self.texts.append(text)
        self.running += 1
        self._wake()
        try:
            await self.hold.wait()
            await anyio.lowlevel.checkpoint()
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        finally:
            self.running -= 1
            self._wake()
        failure = '<failure message="assert broken">broken</failure>' if self.broken in text else ""
        await anyio.Path(report).write_text(
            '<testsuite><testcase classname="tests.test_mod" name="test_mod" '
            f'file="tests/test_mod.py">{failure}</testcase></testsuite>',
            encoding="utf-8",
        )
        return self._result_type(exit_code=1 if failure else 0, output="")

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def started(self, runs: int) -> None:
        while len(self.texts) < runs:
            await self._changed.wait()

    async def idle(self) -> None:
        while self.running:
            await self._changed.wait()
