"""What a scenario is, its mutation and where it is registered. The
scenario modules and :mod:`rein.evals.mutations` import this, not
:mod:`rein.evals`, so the package that runs them and the modules that define
them do not import each other."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rein.harness import Agent

__all__ = ["SCENARIOS", "Mutation", "Outcome", "Rig", "ScenarioFn", "scenario"]


@dataclass
class Outcome:
    """What a scenario reports; :func:`score` turns it into a Score."""

    status: str
    model_calls: int
    events: list[Any] = field(default_factory=list)
    #: How many turns the scenario's scripts hold in all (every replay model
    #: it used). Must exceed the budget: the spare turns are what a model
    #: would go on doing if the behaviour under test did not stop it.
    script_turns: int = 0
    #: The scenario's own verdict and why.
    check: bool = True
    why: str = ""
    expect_status: str = "completed"
    steering_honoured: bool | None = None


ScenarioFn = Callable[["Rig"], Awaitable[Outcome]]
#: Switches off the behaviour a scenario scores by setting switches on the Rig
#: before the scenario runs. Its docstring says what it switches off.
Mutation = Callable[["Rig"], None]


@dataclass
class _Scenario:
    name: str
    category: str
    budget: int
    fn: ScenarioFn
    mutation: Mutation


SCENARIOS: dict[str, _Scenario] = {}


def scenario(
    category: str, *, budget: int, mutation: Mutation
) -> Callable[[ScenarioFn], ScenarioFn]:
    """Register a scenario: its category, the most model calls a correct run
    may use (below its script's length), and the mutation that switches off
    the behaviour it scores."""

    def register(fn: ScenarioFn) -> ScenarioFn:
        name = fn.__name__.removeprefix("eval_").replace("_", "-")
        if name in SCENARIOS:
            raise ValueError(f"eval scenario {name!r} is defined twice")
        SCENARIOS[name] = _Scenario(name, category, budget, fn, mutation)
        return fn

    return register


class Rig:
    """One scenario run: a temporary workspace folder, and the switches a
    mutation sets. The helpers in :mod:`rein.evals.scenarios._common` honour
    the switches; unmutated they are all empty and change nothing."""

    def __init__(self, root: Path) -> None:
        self.root = root
        #: HarnessConfig fields for every Agent the helpers build (last word).
        self.harness: dict[str, Any] = {}
        #: Rein configuration (rein.json shape), merged last into the
        #: configuration of every headless session the helpers build.
        self.config: dict[str, Any] = {}
        #: Keyword arguments for every PlanActFlow the helpers build.
        self.flow_options: dict[str, Any] = {}
        #: Called with every Agent the helpers build, once it is built.
        self.agent_setup: list[Callable[[Agent], None]] = []
        #: Entered around the scenario run: switches that no configuration or
        #: public API offers (see rein.evals.mutations).
        self.patches: list[AbstractContextManager[Any]] = []
