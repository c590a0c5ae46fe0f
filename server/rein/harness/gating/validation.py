"""Session-level validation: what a session's runs changed that no gate
pass has validated yet.

Validation is per session, not per run: a run that ends with changes the
gates did not validate (its repair budget ran out, it was aborted, a gate
could not look) leaves them :attr:`SessionValidation.pending`; the next run
of the session carries them (its record's ``carried``), says so with a
``carried_changes`` event, and validates them before it can complete, even
when it makes no edit itself. The state is kept by the session's
:class:`~rein.harness.gating.gates.GatePipeline` and stored with the session
(``to_json``/``from_json``; the session manager saves it in the store's
memory state, so a resumed session knows too).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rein.harness.run.run_record import RunMutation

__all__ = ["SessionValidation"]


class SessionValidation:
    """The session's last validated generation and its unvalidated changes."""

    __slots__ = ("pending", "validated_generation")

    def __init__(self) -> None:
        self.validated_generation = 0
        #: Changes of earlier runs no gate pass validated yet.
        self.pending: list[RunMutation] = []

    def run_ended(self, changes: Iterable[RunMutation]) -> None:
        """A run ended: its changes that are not validated stay pending."""
        known = {m.generation for m in self.pending}
        for change in changes:
            if change.generation > self.validated_generation and change.generation not in known:
                self.pending.append(change)
                known.add(change.generation)
        self.pending.sort(key=lambda m: m.generation)

    def validated(self, generation: int) -> None:
        """Every change the gates were asked about, up to ``generation``,
        passed (carried ones included, whatever their number)."""
        self.validated_generation = max(self.validated_generation, generation)
        self.pending.clear()

    def is_pending(self, change: RunMutation) -> bool:
        return change.generation > self.validated_generation or change in self.pending

    # ------------------------------------------------------------ storage

    def to_json(self) -> dict[str, Any]:
        return {
            "validatedGeneration": self.validated_generation,
            "pending": [m.to_json() for m in self.pending],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> SessionValidation:
        """A stored state. Generations restart with a new process: restored
        changes get generation 0 and stay pending until a pass."""
        state = cls()
        for item in (data or {}).get("pending", []):
            try:
                state.pending.append(RunMutation.from_json(item))
            except (KeyError, TypeError, ValueError):
                continue
        return state

    def keep(self, changes: Iterable[RunMutation]) -> None:
        """Make ``changes`` pending whatever their generation (a flow's
        changes restored from the store, generation 0): the next gate pass
        validates them."""
        for change in changes:
            if change not in self.pending:
                self.pending.append(change)
        self.pending.sort(key=lambda m: m.generation)
