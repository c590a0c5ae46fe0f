"""The preview's values: what a start, reload, restart or stop did
(:class:`PreviewOutcome`), what the output showed after a load
(:class:`Observation`), the status a client is shown, and one process run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import anyio

from rein.harness.events import PreviewStateName
from rein.harness.ports import PreviewProcess

__all__ = ["Observation", "OutcomeAction", "PreviewOutcome", "PreviewStatus"]

OutcomeAction = Literal[
    "started", "reloaded", "unchanged", "not_running", "stopped", "failed", "busy", "off"
]


@dataclass(frozen=True, slots=True)
class PreviewOutcome:
    """What a start, reload, restart or stop did."""

    action: OutcomeAction
    generation: int = 0
    #: The output index where this start or reload begins (for observation).
    mark: int = 0
    message: str = ""
    #: The output tail of a failure.
    lines: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.action not in ("failed", "busy")


@dataclass(frozen=True, slots=True)
class Observation:
    """What the output showed after a load; ``ok`` when nothing."""

    message: str = ""
    #: The lines that matched an error pattern.
    matches: tuple[str, ...] = ()
    #: The error lines with their tracebacks (bounded), or the output tail.
    excerpt: tuple[str, ...] = ()
    #: The exit code when the preview exited with an error while watched.
    exit_code: int | None = None

    @property
    def ok(self) -> bool:
        return not self.message


@dataclass(frozen=True, slots=True)
class PreviewStatus:
    state: PreviewStateName
    pid: int | None
    generation: int | None
    command: str | None
    lines: tuple[str, ...]


@dataclass(eq=False, slots=True)
class _PreviewRun:
    """One process of the preview."""

    process: PreviewProcess
    exited: anyio.Event = field(default_factory=anyio.Event)
    exit_code: int | None = None
    #: Rein is stopping it: its exit is not an error.
    stopping: bool = False

    @property
    def alive(self) -> bool:
        """Not known to have exited (its output reader may be gone while it
        still runs, e.g. after the host cancelled its tasks)."""
        return not self.exited.is_set() or self.process.exit_code is None
