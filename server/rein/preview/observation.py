"""The preview watched for runtime errors: after a start or reload, the
output since its mark searched for the configured error patterns at once,
then again after the observation window (sooner when the program exits);
an error found waits for the output to settle so its traceback is whole.
An exit code other than 0 is an error too (``errorOnExit``)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

from rein.harness.config import PreviewGateConfig
from rein.harness.events import Emit, Event, PreviewError, PreviewStateName
from rein.preview.output_log import TAIL_LINES, OutputLog, find_errors, headline
from rein.preview.values import Observation, _PreviewRun

__all__ = ["RuntimeObservation"]


class RuntimeObservation:
    """Mixed into :class:`~rein.preview.coordinator.PreviewCoordinator`."""

    config: PreviewGateConfig
    _clock: Callable[[], float]
    _output: OutputLog
    _patterns: list[re.Pattern[str]]
    _changed: anyio.Event
    _run: _PreviewRun | None
    _owner: Callable[[Emit | None], contextlib.AbstractContextManager[None]]
    _send: Callable[[Event], None]
    lines_since: Callable[[int], list[str]]

    if TYPE_CHECKING:

        @property
        def state(self) -> PreviewStateName: ...

    def _scan(self, mark: int) -> tuple[list[str], list[str]]:
        return find_errors(self.lines_since(mark), self._patterns)

    async def _settle(self, run: _PreviewRun | None) -> None:
        deadline = self._clock() + self.config.settle_max_ms / 1000
        settle_quiet = self.config.settle_quiet_ms / 1000
        while run is not None and not run.exited.is_set():
            now = self._clock()
            quiet_left = self._output.last_at + settle_quiet - now
            left = deadline - now
            if quiet_left <= 0 or left <= 0:
                return
            changed = self._changed
            with anyio.move_on_after(min(quiet_left, left)):
                await changed.wait()

    async def observe(
        self, mark: int, *, emit: Emit | None = None, window_s: float | None = None
    ) -> Observation:
        """Errors in the output since ``mark``: checked at once, then again
        after the observation window (sooner when the preview exits)."""
        window = self.config.observation_window_ms / 1000 if window_s is None else window_s
        with self._owner(emit):
            run = self._run
            matches, excerpt = self._scan(mark)
            if not matches and run is not None and not run.exited.is_set():
                with anyio.move_on_after(window):
                    await run.exited.wait()
                matches, excerpt = self._scan(mark)
            if matches:
                await self._settle(run)
                matches, excerpt = self._scan(mark)
            exit_code = None
            if run is not None and run.exited.is_set() and not run.stopping:
                exit_code = run.exit_code
            exit_error = exit_code not in (0, None) and self.config.error_on_exit
            if not matches and not exit_error:
                return Observation()
            parts = []
            if matches:
                parts.append(f"the preview printed a runtime error: {headline(matches)}")
            if exit_error:
                parts.append(f"the preview exited with code {exit_code}")
            message = "; ".join(parts)
            if not excerpt:
                excerpt = self.lines_since(mark)[-TAIL_LINES:]
            self._send(
                PreviewError(message=message, lines=excerpt, state=self.state, exit_code=exit_code)
            )
            return Observation(message, tuple(matches), tuple(excerpt), exit_code)
