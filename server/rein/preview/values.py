"""The preview's values: what a start, reload, restart or stop did
(:class:`PreviewOutcome`), what the output showed after a load
(:class:`Observation`), both for a start that was watched
(:class:`Watched`), the status a client is shown, and one process run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import anyio

from rein.harness.config import PreviewReload
from rein.harness.events import PreviewStateName
from rein.harness.ports import PreviewProcess

__all__ = ["Observation", "OutcomeAction", "PreviewOutcome", "PreviewStatus", "ReadyBy", "Watched"]

OutcomeAction = Literal[
    "started", "reloaded", "unchanged", "not_running", "stopped", "failed", "busy", "off"
]

#: How a start or reload ended its readiness wait: the program came up by a
#: rule ("line", "url", "line and url" as configured; "port" or "quiet"
#: without a setting), or the wait ended without it coming up: it printed
#: error output (the observation reports it), or it ran to its end cleanly.
ReadyBy = Literal["line", "url", "line and url", "port", "quiet", "error output", "ended"]

#: The rules by which a program is up.
UP_RULES: frozenset[str] = frozenset({"line", "url", "line and url", "port", "quiet"})


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
    #: How the readiness wait of a start or reload ended (None: no wait).
    ready_by: ReadyBy | None = None
    #: The exit code of a process that exited while it failed.
    exit_code: int | None = None
    #: How a reload loaded the change ("restart", "signal", "self"; a
    #: "self" or "signal" reload after a manifest change is a "restart").
    strategy: PreviewReload | None = None

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
class Watched:
    """A start (or restart) and what the observation after it saw (None:
    nothing was started, so nothing observed)."""

    outcome: PreviewOutcome
    observation: Observation | None = None

    @property
    def up(self) -> bool:
        """It came up by a rule and the observation saw no runtime error."""
        return (
            self.outcome.action == "started"
            and self.outcome.ready_by in UP_RULES
            and (self.observation is None or self.observation.ok)
        )

    @property
    def message(self) -> str:
        """Why it is not up ("" when it is, or nothing was started)."""
        if not self.outcome.ok:
            return self.outcome.message
        return self.observation.message if self.observation is not None else ""


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
