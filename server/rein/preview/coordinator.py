"""The preview: the person's program, run by Rein, loaded with every validated
change and watched for runtime errors.

:class:`PreviewCoordinator` is the stateful core; the process itself is behind
the :class:`~rein.harness.ports.PreviewProcess` port. Start, reload, restart
and stop are serialised: an operation waits while another runs (looking
again every ``busyPollMs``, for at most ``busyTimeoutMs``; past that it fails
with "the preview is busy"). Reloads are keyed by mutation generation: at most one per
generation, and a newer generation supersedes a queued reload (the operation
that gets its turn loads what is on disk, the newest requested generation,
so the older queued request finds its generation loaded).

The coordinator is a mutation listener (``on_mutation``, subscribed to the
host's MutationLog) and tells the hosts which changed files are the
preview's own (``is_preview_output``): both in :mod:`rein.preview.writes`.
When a start or reload is ready is in :mod:`rein.preview.readiness`. The
gates that use it (load, runtime observation, start) are in
:mod:`rein.preview.gates`; the observation of the output for runtime errors
in :mod:`rein.preview.observation`; the process's output read, its exit and
its stop in :mod:`rein.preview.process_life`; its output bookkeeping and
error finding in :mod:`rein.preview.output_log`; its values in
:mod:`rein.preview.values`.

Events (preview_started, preview_reloaded, preview_output, preview_error,
preview_stopped) go to the emit of the run that caused them, else to the
host's ``emit``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import replace
from typing import Any

import anyio
import anyio.lowlevel

from rein.harness.config import PreviewGateConfig
from rein.harness.events import (
    Emit,
    Event,
    PreviewError,
    PreviewOutput,
    PreviewReloaded,
    PreviewStarted,
    PreviewStateName,
    PreviewStopped,
)
from rein.harness.gating.path_globs import is_code, is_preview_output
from rein.harness.ports import PreviewProcessFactory
from rein.harness.redaction import redact
from rein.preview.observation import RuntimeObservation
from rein.preview.output_log import TAIL_LINES, OutputLog
from rein.preview.process_life import ProcessLife
from rein.preview.readiness import ReadinessWait
from rein.preview.values import Observation, PreviewOutcome, PreviewStatus, _PreviewRun
from rein.preview.writes import WRITES_KEPT, WritesFiles, WriteWatch, _Write

__all__ = [
    "Observation",
    "PreviewCoordinator",
    "PreviewOutcome",
    "PreviewStatus",
    "WritesFiles",
    "is_code",
    "is_preview_output",
]

log = logging.getLogger(__name__)

#: Starts a background task that outlives the caller (a host task group's
#: ``start_soon``).
Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], object]

OUTPUT_INTERVAL_S = 0.1


class PreviewCoordinator(WriteWatch, ReadinessWait, RuntimeObservation, ProcessLife):
    """Starts, reloads, stops and watches the preview; one per workspace,
    shared by the sessions. Stateful and idempotent, keyed by generation."""

    def __init__(
        self,
        factory: PreviewProcessFactory,
        config: PreviewGateConfig,
        *,
        emit: Emit,
        spawn: Spawn,
        output_interval_s: float = OUTPUT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.factory = factory
        self.emit = emit
        self.spawn = spawn
        self.output_interval_s = output_interval_s
        self._clock = clock
        self.configure(config)
        self._run: _PreviewRun | None = None
        self._state: PreviewStateName = "stopped"
        #: The newest generation whose files the running preview has loaded.
        self.loaded_generation = -1
        self._wanted = -1
        self._last_load: PreviewOutcome | None = None
        self._busy = False
        self._idle = anyio.Event()
        self._idle.set()
        self._output = OutputLog(clock)
        self._changed = anyio.Event()
        self._flush_scheduled = False
        self._owners: list[Emit] = []
        self._closed = False
        self._writes: deque[_Write] = deque(maxlen=WRITES_KEPT)
        #: Files the preview's current (or last) process was seen holding
        #: open for writing; forgotten when a new process starts.
        self._written: set[str] = set()

    def configure(self, config: PreviewGateConfig) -> None:
        """Use ``config`` from the next start on (a running preview keeps
        running)."""
        self.config = config
        self._patterns = [re.compile(p) for p in config.error_patterns]
        line = config.readiness.line
        self._ready_line = re.compile(line) if line else None

    # ------------------------------------------------------------------ state

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    @property
    def state(self) -> PreviewStateName:
        if not self.enabled and not self.running:
            return "off"
        return self._state

    @property
    def running(self) -> bool:
        run = self._run
        return (
            run is not None
            and not run.exited.is_set()
            and self._state in ("starting", "running", "reloading")
        )

    @property
    def pid(self) -> int | None:
        run = self._run
        return run.process.pid if run is not None and not run.exited.is_set() else None

    @property
    def busy(self) -> bool:
        return self._busy

    def lines_since(self, mark: int) -> list[str]:
        return self._output.since(mark)

    def status(self, tail: int = 50) -> PreviewStatus:
        return PreviewStatus(
            self.state,
            self.pid,
            self.loaded_generation if self.running else None,
            self.config.command,
            tuple(self.lines_since(self._output.total - tail)),
        )

    # ---------------------------------------------------------------- events

    @contextlib.contextmanager
    def _owner(self, emit: Emit | None) -> Iterator[None]:
        """Events caused while ``emit``'s run waits go to that run."""
        if emit is None:
            yield
            return
        self._owners.append(emit)
        try:
            yield
        finally:
            self._flush()  # what it printed meanwhile belongs to that run
            self._owners.remove(emit)

    def _send(self, event: Event) -> None:
        target = self._owners[-1] if self._owners else self.emit
        try:
            target(event)
        except Exception:  # a listener must not break the preview
            log.exception("preview event listener raised on %s", event.type)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _append(self, line: str) -> None:
        self._output.append(line)
        self._notify()
        if not self._flush_scheduled:
            self._flush_scheduled = True
            try:
                self.spawn(self._flush_later)
            except Exception:
                self._flush()

    async def _flush_later(self) -> None:
        try:
            await anyio.sleep(self.output_interval_s)
        finally:
            self._flush()

    def _flush(self) -> None:
        self._flush_scheduled = False
        pending = self._output.take_pending()
        if pending is not None:
            self._send(PreviewOutput(text=pending[0], lines_dropped=pending[1]))

    # ------------------------------------------------------------ serialising

    async def _acquire(self) -> bool:
        deadline = self._clock() + self.config.busy_timeout_ms / 1000
        poll = self.config.busy_poll_ms / 1000
        while self._busy:
            left = deadline - self._clock()
            if left <= 0:
                return False
            idle = self._idle
            with anyio.move_on_after(min(poll, left)):
                await idle.wait()
        self._busy = True
        self._idle = anyio.Event()
        return True

    def _release(self) -> None:
        self._busy = False
        self._idle.set()

    def _busy_outcome(self, generation: int) -> PreviewOutcome:
        return PreviewOutcome(
            "busy",
            generation,
            self._output.total,
            f"the preview is busy: another start, reload or stop did not finish within "
            f"{self.config.busy_timeout_ms / 1000:g} s",
        )

    def _off(self, generation: int) -> PreviewOutcome:
        return PreviewOutcome(
            "off",
            generation,
            self._output.total,
            "no preview is configured (gates.preview.command)",
        )

    # ------------------------------------------------------------ operations

    async def _serialised(
        self,
        generation: int | None,
        emit: Emit | None,
        operation: Callable[[], Awaitable[PreviewOutcome]],
    ) -> PreviewOutcome:
        """``operation`` as the only start, reload, restart or stop, its events
        to ``emit``'s run; "off" unconfigured (but a stop: ``generation`` None),
        "busy" past the busy timeout."""
        if generation is not None and not self.enabled:
            return self._off(generation)
        with self._owner(emit):
            if not await self._acquire():
                busy = self.loaded_generation if generation is None else generation
                return self._busy_outcome(busy)
            try:
                return await operation()
            finally:
                self._release()

    async def start(self, generation: int, *, emit: Emit | None = None) -> PreviewOutcome:
        """Start the preview unless it runs."""

        async def start() -> PreviewOutcome:
            if self.running:
                return self._unchanged(generation)
            return await self._start(generation, "start")

        return await self._serialised(generation, emit, start)

    async def restart(self, generation: int, *, emit: Emit | None = None) -> PreviewOutcome:
        """Stop the preview if it runs and start it again."""

        async def restart() -> PreviewOutcome:
            if self._run is not None:
                await self._stop_run(self._run)
            return await self._start(generation, "restart")

        return await self._serialised(generation, emit, restart)

    async def reload(self, generation: int, *, emit: Emit | None = None) -> PreviewOutcome:
        """Load the files of ``generation`` into the running preview, once."""
        if self.enabled:  # asked before waiting: a newer one supersedes a queued reload
            self._wanted = max(self._wanted, generation)

        async def reload() -> PreviewOutcome:
            if not self.running:
                return PreviewOutcome(
                    "not_running", generation, self._output.total, f"the preview is {self.state}"
                )
            if self.loaded_generation >= generation:
                return self._unchanged(generation)
            return await self._reload(self._wanted)

        return await self._serialised(generation, emit, reload)

    async def stop(
        self, reason: str = "stopped on request", *, emit: Emit | None = None
    ) -> PreviewOutcome:
        async def stop() -> PreviewOutcome:
            run = self._run
            if run is None or not run.alive:
                if self._state != "off":
                    self._state = "stopped"
                return PreviewOutcome("stopped", self.loaded_generation, self._output.total)
            await self._stop_run(run)
            self._state = "stopped"
            self._send(PreviewStopped(reason=reason, state="stopped", exit_code=run.exit_code))
            return PreviewOutcome("stopped", self.loaded_generation, self._output.total)

        return await self._serialised(None, emit, stop)

    async def shutdown(self) -> None:
        """Stop the preview for good (the server or the session ends); does
        not wait for a running operation."""
        self._closed = True
        run = self._run
        if run is not None and run.alive:
            await self._stop_run(run)
            self._state = "stopped"
            self._send(PreviewStopped(reason="Rein is shutting down", exit_code=run.exit_code))

    def kill_now(self) -> None:
        """SIGKILL the preview's process group without waiting (exit paths)."""
        self._closed = True
        run = self._run
        if run is not None and run.alive:
            run.stopping = True
            run.process.kill()

    # -------------------------------------------------------------- internals

    def _unchanged(self, generation: int) -> PreviewOutcome:
        last = self._last_load
        if last is None:
            return PreviewOutcome("unchanged", self.loaded_generation, self._output.total)
        return replace(last, action="unchanged")

    async def _start(self, generation: int, what: str) -> PreviewOutcome:
        command = self.config.command or ""
        mark = self._output.total
        if self._closed:
            return PreviewOutcome("failed", generation, mark, "the preview is shut down")
        self._state = "starting"
        try:
            process = await self.factory.start(command)
        except Exception as exc:
            self._state = "failed"
            message = redact(
                f"could not start the preview `{command}`: {type(exc).__name__}: {exc}"
            )
            self._send(PreviewError(message=message, state="failed"))
            return PreviewOutcome("failed", generation, mark, message)
        run = _PreviewRun(process)
        self._run = run
        self._written = set()
        self.spawn(functools.partial(self._pump, run))
        if self._closed:
            await self._stop_run(run)
            self._state = "stopped"
            return PreviewOutcome("failed", generation, mark, "the preview is shut down")
        try:
            failure, ready_by = await self._wait_ready(run, mark)
        except anyio.get_cancelled_exc_class():
            # Aborted before it was up (the request or the run was
            # cancelled): no half-started preview is left behind.
            await self._stop_run(run)
            self._state = "stopped"
            self._send(PreviewStopped(reason=f"the {what} was cancelled", exit_code=run.exit_code))
            raise
        if failure is not None:
            return await self._fail(run, generation, mark, f"{failure} ({what})")
        self._state = "exited" if run.exited.is_set() else "running"
        self.loaded_generation = max(self.loaded_generation, generation)
        outcome = PreviewOutcome("started", generation, mark, ready_by=ready_by)
        self._last_load = outcome
        self._send(PreviewStarted(pid=process.pid, generation=generation, command=command))
        return outcome

    async def _reload(self, generation: int) -> PreviewOutcome:
        run = self._run
        assert run is not None
        strategy = self.config.reload
        if strategy == "restart" or self._manifest_changed(generation):
            # A manifest change (its install done by the dependencies gate,
            # which runs first) changes what the program runs: a hot reload
            # would keep the old packages loaded.
            strategy = "restart"
            await self._stop_run(run)
            outcome = await self._start(generation, "reload")
            if outcome.ok:
                outcome = replace(outcome, action="reloaded", strategy=strategy)
                self._last_load = outcome
                self._send(PreviewReloaded(generation=generation, strategy=strategy, pid=self.pid))
            return outcome
        await anyio.lowlevel.checkpoint()  # let the reader take what is already there
        mark = self._output.total
        wait = True
        if strategy == "self":
            # The program reloaded when the file was written, maybe long
            # before this gate got its turn: what it printed since counts.
            write = self._self_reload_mark(generation)
            if write is not None:
                mark, wait = write
        self._state = "reloading"
        if strategy == "signal":
            run.process.send_signal(self.config.signal_number)
        failure, ready_by = await self._wait_ready(run, mark) if wait else (None, None)
        if failure is not None:
            return await self._fail(run, generation, mark, f"{failure} (reload, {strategy})")
        self._state = "exited" if run.exited.is_set() else "running"
        self.loaded_generation = generation
        outcome = PreviewOutcome("reloaded", generation, mark, ready_by=ready_by, strategy=strategy)
        self._last_load = outcome
        self._send(PreviewReloaded(generation=generation, strategy=strategy, pid=self.pid))
        return outcome

    async def _fail(
        self, run: _PreviewRun, generation: int, mark: int, message: str
    ) -> PreviewOutcome:
        await self._stop_run(run)
        self._state = "failed"
        tail = tuple(self.lines_since(mark)[-TAIL_LINES:])
        self._send(
            PreviewError(message=message, lines=list(tail), state="failed", exit_code=run.exit_code)
        )
        return PreviewOutcome("failed", generation, mark, message, tail, exit_code=run.exit_code)
