"""What a scenario is and where it is registered. The scenario modules import
this, not :mod:`rein.evals`, so the package that runs them and the modules
that define them do not import each other."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SCENARIOS", "Outcome", "Rig", "ScenarioFn", "scenario"]


@dataclass
class Outcome:
    """What a scenario reports; :func:`score` turns it into a Score."""

    status: str
    model_calls: int
    events: list[Any] = field(default_factory=list)
    #: The scenario's own verdict and why.
    check: bool = True
    why: str = ""
    expect_status: str = "completed"
    steering_honoured: bool | None = None


ScenarioFn = Callable[["Rig"], Awaitable[Outcome]]


@dataclass
class _Scenario:
    name: str
    category: str
    budget: int
    fn: ScenarioFn


SCENARIOS: dict[str, _Scenario] = {}


def scenario(category: str, *, budget: int) -> Callable[[ScenarioFn], ScenarioFn]:
    def register(fn: ScenarioFn) -> ScenarioFn:
        name = fn.__name__.removeprefix("eval_").replace("_", "-")
        SCENARIOS[name] = _Scenario(name, category, budget, fn)
        return fn

    return register


class Rig:
    """Scratch space for one scenario: a temporary workspace folder."""

    def __init__(self, root: Any) -> None:
        self.root = root
