"""A start watched like the gates watch it: started (waiting until the
program is up, by the configured readiness or the rule that needs none),
then observed for the runtime-error window. The preview start gate and the
editor's ``rein/preview`` start and restart share it."""

from __future__ import annotations

from rein.harness.events import Emit
from rein.preview.coordinator import PreviewCoordinator
from rein.preview.values import Observation, Watched

__all__ = ["start_watched"]


async def start_watched(
    preview: PreviewCoordinator,
    generation: int,
    *,
    restart: bool = False,
    emit: Emit | None = None,
) -> Watched:
    """Start (or ``restart``) the preview and observe it when it started; a
    failed start's observation is its output tail and exit code. An unchanged
    start (it ran already), a busy or an unconfigured preview is not
    observed. Bounded by the busy, readiness and observation
    settings; cancelling it before the program is up stops the program."""
    if restart:
        outcome = await preview.restart(generation, emit=emit)
    else:
        outcome = await preview.start(generation, emit=emit)
    if outcome.action == "failed":
        # Error output ends the readiness wait as a start (the observation
        # reports it), so a failed start printed none: its tail and exit.
        seen = Observation(outcome.message, (), outcome.lines, outcome.exit_code)
        return Watched(outcome, seen)
    if outcome.action != "started":
        return Watched(outcome)
    return Watched(outcome, await preview.observe(outcome.mark, emit=emit))
