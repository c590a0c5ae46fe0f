"""The preview's gates, after the analyzer in the pipeline
(:func:`preview_gates`):

* :class:`PreviewLoadGate` loads the validated changes into the running
  preview (restart, signal, or wait for the program's own reload; a restart
  after a dependency manifest changed, whatever the strategy); a failed
  reload is a blocker with the output tail;
* :class:`RuntimeObservationGate` checks the output since that load at once,
  waits the observation window and checks again: new error output (or a
  non-zero exit) is a blocker with the matching lines and the traceback;
* :class:`PreviewStartGate` starts and observes the preview
  (:func:`~rein.preview.watch.start_watched`, as the editor's start) when the run
  changed code and no preview runs (a run that changed only documentation,
  ``gates.preview.nonCode``, leaves it stopped).

They share the pipeline's one repair budget with the other gates.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from rein.harness.events import Blocker
from rein.harness.gating.gates import Gate, GateContext, GateOutcome
from rein.preview.coordinator import Observation, PreviewCoordinator, PreviewOutcome
from rein.preview.output_log import FRAME
from rein.preview.watch import start_watched

__all__ = ["PreviewLoadGate", "PreviewStartGate", "RuntimeObservationGate", "preview_gates"]


def _deepest_frame(lines: Sequence[str], root: str | None) -> tuple[str | None, int | None]:
    """The innermost traceback frame in a workspace file: (path, 0-based line)."""
    found: tuple[str | None, int | None] = (None, None)
    base = root.rstrip("/") + "/" if root else None
    for line in lines:
        m = FRAME.match(line)
        if m is None:
            continue
        path = posixpath.normpath(m["path"])
        if path.startswith("<"):
            continue
        if path.startswith("/"):
            if base is None or not path.startswith(base):
                continue
            path = path[len(base) :]
        if path.startswith(("..", ".venv/")) or "/site-packages/" in path:
            continue
        found = (path, int(m["line"]) - 1)
    return found


def _failure_blocker(gate: str, outcome: PreviewOutcome) -> Blocker:
    return Blocker(gate=gate, message=outcome.message, context="\n".join(outcome.lines) or None)


def _runtime_blocker(gate: str, observation: Observation, ctx: GateContext) -> Blocker:
    root = ctx.workspace.root if ctx.workspace is not None else None
    path, line = _deepest_frame(observation.excerpt, root)
    return Blocker(
        gate=gate,
        message=observation.message,
        path=path,
        line=line,
        severity=1 if path is not None else None,
        source="preview" if path is not None else None,
        context="\n".join(observation.excerpt) or None,
    )


class PreviewLoadGate:
    """Loads the validated changes into the running preview; a failed reload
    (the process exits, the readiness probe fails, the preview is busy) is a
    blocker with the output tail. Nothing to do when no preview runs."""

    name = "preview_load"

    def __init__(self, preview: PreviewCoordinator) -> None:
        self.preview = preview
        #: Where this pass's load begins in the output; None: nothing loaded.
        self.mark: int | None = None

    async def on_run_start(self, generation: int) -> None:
        self.mark = None

    async def check(self, ctx: GateContext) -> GateOutcome:
        self.mark = None
        preview = self.preview
        if not preview.enabled:
            return GateOutcome(detail="no preview is configured")
        if not preview.running:
            return GateOutcome(detail=f"the preview is {preview.state}; preview_start starts it")
        outcome = await preview.reload(ctx.generation, emit=ctx.emit)
        if outcome.action == "not_running":
            return GateOutcome(detail=f"{outcome.message}; preview_start starts it")
        if not outcome.ok:
            return GateOutcome([_failure_blocker(self.name, outcome)], detail=outcome.message)
        self.mark = outcome.mark
        if outcome.action == "unchanged":
            return GateOutcome(detail=f"generation {outcome.generation} is already loaded")
        strategy = outcome.strategy or preview.config.reload
        how: str = strategy
        if strategy != preview.config.reload:
            how = f"{strategy}: a dependency manifest changed"
        return GateOutcome(detail=f"loaded generation {outcome.generation} ({how})")


class RuntimeObservationGate:
    """Watches the preview's output after the load: error lines (with their
    traceback) or a non-zero exit are blockers."""

    name = "runtime_observation"

    def __init__(self, preview: PreviewCoordinator, load: PreviewLoadGate) -> None:
        self.preview = preview
        self.load = load

    async def on_run_start(self, generation: int) -> None:
        return None

    async def check(self, ctx: GateContext) -> GateOutcome:
        mark = self.load.mark
        if mark is None:
            return GateOutcome(detail="nothing was loaded into the preview")
        observation = await self.preview.observe(mark, emit=ctx.emit)
        if observation.ok:
            window = self.preview.config.observation_window_ms
            return GateOutcome(detail=f"no runtime error within {window} ms")
        return GateOutcome(
            [_runtime_blocker(self.name, observation, ctx)], detail=observation.message
        )


class PreviewStartGate:
    """When the run changed code and no preview runs: start it and observe
    it; a failed start or error output is a blocker. A run whose changes
    are all documentation (none is code by ``gates.preview.nonCode``) does
    not start it; a check without the run's paths does, as before."""

    name = "preview_start"

    def __init__(self, preview: PreviewCoordinator) -> None:
        self.preview = preview

    async def on_run_start(self, generation: int) -> None:
        return None

    async def check(self, ctx: GateContext) -> GateOutcome:
        preview = self.preview
        if not preview.enabled:
            return GateOutcome(detail="no preview is configured")
        if preview.running:
            return GateOutcome(detail="the preview is running")
        if ctx.touched and not any(preview.config.is_code(p) for p in ctx.touched):
            return GateOutcome(detail="the run changed no code; the preview is not started")
        watched = await start_watched(preview, ctx.generation, emit=ctx.emit)
        outcome, observation = watched.outcome, watched.observation
        if not outcome.ok:
            return GateOutcome([_failure_blocker(self.name, outcome)], detail=outcome.message)
        if observation is None:
            return GateOutcome(detail="the preview is running")
        if not observation.ok:
            return GateOutcome(
                [_runtime_blocker(self.name, observation, ctx)], detail=observation.message
            )
        return GateOutcome(detail=f"started generation {outcome.generation}; no runtime error")


def preview_gates(preview: PreviewCoordinator) -> list[Gate]:
    """The preview's gates in pipeline order: load, observation, start."""
    load = PreviewLoadGate(preview)
    return [load, RuntimeObservationGate(preview, load), PreviewStartGate(preview)]
