"""When the preview is ready after a start or reload.

Configured (``gates.preview.readiness.line`` / ``url``): when an output line
matches and/or the URL answers. Not configured: when a process of the
preview listens on a TCP port (a process that can tell, :class:`ListensOnPorts`),
or else once its output has been quiet for ``readiness.quietMs``. Either
way the wait is bounded by ``readiness.timeoutMs``, and reaching the bound
is a failure that says what was awaited. Error output ends the wait at once
(the observation reports it). The wait says how it ended
(:data:`~rein.preview.values.ReadyBy`): which rule found the program up, or
that it printed error output or ran to its end.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import anyio

from rein.harness.config import PreviewGateConfig
from rein.harness.ports import PreviewProcessFactory
from rein.preview.output_log import OutputLog, find_errors
from rein.preview.values import ReadyBy, _PreviewRun

__all__ = ["ListensOnPorts", "ReadinessWait"]


@runtime_checkable
class ListensOnPorts(Protocol):
    """A PreviewProcess that can tell the TCP ports its group listens on
    (optional; the local processes can, on Linux)."""

    def listening_ports(self) -> set[int]: ...


class ReadinessWait:
    """Mixed into :class:`~rein.preview.coordinator.PreviewCoordinator`."""

    config: PreviewGateConfig
    factory: PreviewProcessFactory
    _clock: Callable[[], float]
    _output: OutputLog
    _patterns: list[re.Pattern[str]]
    _ready_line: re.Pattern[str] | None
    _changed: anyio.Event

    def _readiness_text(self) -> str:
        readiness = self.config.readiness
        parts = []
        if readiness.line:
            parts.append(f"a line matching {readiness.line!r}")
        if readiness.url:
            parts.append(f"an answer from {readiness.url}")
        return " and ".join(parts)

    def _configured_rule(self) -> ReadyBy:
        readiness = self.config.readiness
        if self._ready_line is not None and readiness.url is not None:
            return "line and url"
        return "line" if self._ready_line is not None else "url"

    async def _wait_ready(self, run: _PreviewRun, mark: int) -> tuple[str | None, ReadyBy | None]:
        """``(None, how)`` when ready (or when it printed error output: the
        observation reports that); else ``(why not, None)``. Ends early when
        the process exits."""
        readiness = self.config.readiness
        if self._ready_line is None and readiness.url is None:
            return await self._wait_up(run, mark)
        timeout = readiness.timeout_ms / 1000
        poll = readiness.poll_ms / 1000
        deadline = self._clock() + timeout
        seen_line = self._ready_line is None
        scanned = mark
        while True:
            new = self._output.since(scanned)
            scanned = self._output.total
            if not seen_line and self._ready_line is not None:
                seen_line = any(self._ready_line.search(line) for line in new)
            if find_errors(new, self._patterns)[0]:
                return None, "error output"
            if seen_line and readiness.url is None:
                return None, self._configured_rule()
            if run.exited.is_set():
                return f"the preview exited with code {run.exit_code} before it was ready", None
            left = deadline - self._clock()
            if seen_line and readiness.url is not None:
                if await self.factory.http_ready(readiness.url, max(0.05, min(1.0, left))):
                    return None, self._configured_rule()
                left = deadline - self._clock()
            if left <= 0:
                return (
                    f"the preview did not become ready within {timeout:g} s "
                    f"(waiting for {self._readiness_text()})"
                ), None
            changed = self._changed
            wait = left if readiness.url is None or not seen_line else min(left, poll)
            with anyio.move_on_after(wait):
                await changed.wait()

    async def _wait_up(self, run: _PreviewRun, mark: int) -> tuple[str | None, ReadyBy | None]:
        """Without a readiness setting: up once a port of it listens, or once
        its output has been quiet for ``quiet_ms``. A program that ran to its
        end without an error exit is not waited for."""
        readiness = self.config.readiness
        timeout = readiness.timeout_ms / 1000
        quiet = readiness.quiet_ms / 1000
        poll = readiness.poll_ms / 1000
        process = run.process
        ports = process if isinstance(process, ListensOnPorts) else None
        began = self._clock()
        deadline = began + timeout
        scanned = mark
        while True:
            new = self._output.since(scanned)
            scanned = self._output.total
            if find_errors(new, self._patterns)[0]:
                return None, "error output"
            if run.exited.is_set():
                code = run.exit_code
                if code not in (0, None) and self.config.error_on_exit:
                    return f"the preview exited with code {code} before it was up", None
                return None, "ended"
            if ports is not None and ports.listening_ports():
                return None, "port"
            now = self._clock()
            last = max(began, self._output.last_at) if self._output.total > mark else began
            quiet_left = last + quiet - now
            if quiet_left <= 0:
                return None, "quiet"
            left = deadline - now
            if left <= 0:
                return (
                    f"the preview did not come up within {timeout:g} s (waiting for it to "
                    f"listen on a port or for its output to be quiet for {quiet:g} s; "
                    "gates.preview.readiness sets both)"
                ), None
            changed = self._changed
            with anyio.move_on_after(min(quiet_left, left, poll if ports else math.inf)):
                await changed.wait()
