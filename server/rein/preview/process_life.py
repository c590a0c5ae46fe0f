"""The preview's process from its start to its end: its output read line by
line into the log until it ends (the rest drained for a bounded time), its
exit noted (an error for a code other than 0 with ``errorOnExit``, else a
stop), and its stop: the process group, bounded, shielded from
cancellation."""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio

from rein.harness.config import PreviewGateConfig
from rein.harness.events import Event, PreviewError, PreviewStateName, PreviewStopped
from rein.preview.output_log import TAIL_LINES, OutputLog
from rein.preview.values import _PreviewRun

__all__ = ["ProcessLife"]

log = logging.getLogger("rein.preview.coordinator")


class ProcessLife:
    """Mixed into :class:`~rein.preview.coordinator.PreviewCoordinator`."""

    config: PreviewGateConfig
    _output: OutputLog
    _run: _PreviewRun | None
    _state: PreviewStateName
    _append: Callable[[str], None]
    _flush: Callable[[], None]
    _notify: Callable[[], None]
    _send: Callable[[Event], None]
    lines_since: Callable[[int], list[str]]

    async def _stop_run(self, run: _PreviewRun) -> None:
        run.stopping = True
        with anyio.CancelScope(shield=True):
            try:
                await run.process.stop(self.config.stop_timeout_ms / 1000)
            except Exception:
                log.exception("stopping the preview (pid %s) failed", run.process.pid)
            with anyio.move_on_after(2 * self.config.exit_drain_ms / 1000):
                await run.exited.wait()

    async def _pump(self, run: _PreviewRun) -> None:
        """Read the output of ``run`` until it ends; then note the exit."""
        drained = anyio.Event()

        async def read() -> None:
            try:
                while (line := await run.process.read_line()) is not None:
                    self._append(line)
            except Exception as exc:
                log.debug("reading the preview's output ended: %s", exc)
            finally:
                drained.set()

        code: int | None = None
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(read)
                try:
                    code = await run.process.wait()
                except Exception:
                    log.exception("waiting for the preview (pid %s) failed", run.process.pid)
                with anyio.move_on_after(self.config.exit_drain_ms / 1000):
                    await drained.wait()
                tg.cancel_scope.cancel()
        finally:
            self._flush()
            self._exited(run, code)
        if not run.stopping:  # children that outlived the leader
            with anyio.CancelScope(shield=True):
                await run.process.stop(self.config.stop_timeout_ms / 1000)

    def _exited(self, run: _PreviewRun, code: int | None) -> None:
        run.exit_code = code if code is not None else run.process.exit_code
        run.exited.set()  # also when only the reader was cancelled: nobody waits forever
        self._notify()
        if run is not self._run or run.stopping or run.exit_code is None:
            return
        self._state = "exited"
        code = run.exit_code
        if code not in (0, None) and self.config.error_on_exit:
            self._send(
                PreviewError(
                    message=f"the preview exited with code {code}",
                    lines=self.lines_since(self._output.total - TAIL_LINES),
                    state="exited",
                    exit_code=code,
                )
            )
        else:
            self._send(
                PreviewStopped(
                    reason=f"the preview exited with code {code}", state="exited", exit_code=code
                )
            )
