"""What a plan-act session stores to resume in any state.

:class:`PlanSnapshot` is saved at every transition of the flow (the session
manager keeps it as the planner memory's state) and restored with the session
after a restart. Besides the plan and where it stands it keeps two things the
flow needs to stay honest across a wait or a restart:

* ``unvalidated``: the changes the plan made that no gate pass validated yet
  (the earlier steps run without gates; the last step's gates validate them);
* ``step_work``: the work tools that succeeded in the current step in its
  earlier runs (before an ``ask_user`` wait or a restart), so the step's
  ``complete_step(success=true)`` counts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rein.harness.events import PlanStateName, PlanStep
from rein.harness.run.run_record import RunMutation

__all__ = ["PlanSnapshot"]


@dataclass
class PlanSnapshot:
    """What is persisted to resume a plan-act session."""

    task: str = ""
    state: PlanStateName = "idle"
    steps: list[PlanStep] = field(default_factory=list)
    index: int = 0
    replans: int = 0
    #: Changes of the plan's steps that no gate pass has validated yet.
    unvalidated: list[RunMutation] = field(default_factory=list)
    #: Work tools that succeeded in the current step's earlier runs.
    step_work: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "state": self.state,
            "steps": [s.model_dump() for s in self.steps],
            "index": self.index,
            "replans": self.replans,
            "unvalidated": [m.to_json() for m in self.unvalidated],
            "stepWork": list(self.step_work),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlanSnapshot:
        """A stored :meth:`to_json`. Restored changes get generation 0
        (generations restart with a new process); they stay unvalidated.
        Raises ValueError naming what is damaged (a change is never dropped:
        the gates could not validate it)."""
        unvalidated = []
        for number, item in enumerate(data.get("unvalidated", []), 1):
            try:
                unvalidated.append(RunMutation.from_json(item))
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(
                    f"the stored plan is damaged: its unvalidated change {number} ({item!r}) "
                    f"cannot be read: {type(exc).__name__}: {exc}"
                ) from exc
        return cls(
            task=str(data.get("task", "")),
            state=data.get("state", "idle"),
            steps=[PlanStep.model_validate(s) for s in data.get("steps", [])],
            index=int(data.get("index", 0)),
            replans=int(data.get("replans", 0)),
            unvalidated=unvalidated,
            step_work=[str(name) for name in data.get("stepWork", [])],
        )
