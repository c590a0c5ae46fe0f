"""The mutation check: every eval scenario passes as it is and fails when the
behaviour it scores is switched off by its declared mutation."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.evals import SCENARIOS, Rig, run_all
from rein.evals import scenarios as _scenarios  # noqa: F401  (registers them)
from rein.harness import Agent
from rein.harness.config import ToolMisuseBreakerConfig
from rein.providers.replay import ReplayModel

NAMES = sorted(SCENARIOS)


def _switches(rig: Rig) -> tuple[object, ...]:
    """A copy of every switch a mutation may set."""
    return (
        dict(rig.harness),
        dict(rig.config),
        dict(rig.flow_options),
        list(rig.agent_setup),
        list(rig.patches),
    )


def test_there_are_scenarios_to_check() -> None:
    assert len(NAMES) >= 10


@pytest.mark.parametrize("name", NAMES)
def test_every_scenario_declares_a_documented_mutation_that_sets_a_switch(
    name: str, tmp_path: Path
) -> None:
    spec = SCENARIOS[name]
    assert callable(spec.mutation), f"{name} declares no mutation"
    assert (spec.mutation.__doc__ or "").strip(), f"{name}'s mutation has no docstring"
    rig = Rig(tmp_path)
    untouched = _switches(rig)
    spec.mutation(rig)
    assert _switches(rig) != untouched, f"{name}'s mutation {spec.mutation.__name__} sets nothing"


@pytest.mark.parametrize("name", NAMES)
async def test_a_scenario_passes_and_fails_once_its_behaviour_is_switched_off(name: str) -> None:
    spec = SCENARIOS[name]
    [plain] = await run_all([name])
    assert plain.passed, f"{name} fails unmutated: {plain.reason}"
    assert plain.model_calls <= plain.budget < plain.script_turns

    [mutated] = await run_all([name], mutated=True)
    assert not mutated.passed, (
        f"{name} still passes with {spec.mutation.__name__}: it cannot fail on the behaviour "
        "it scores"
    )
    # It fails on the behaviour, not by crashing.
    assert mutated.status != "crashed", mutated.reason


async def test_the_breaker_switch_is_the_agents_own() -> None:
    """The mutation turns off the scenario's agent's breaker, not anyone
    else's."""
    [score] = await run_all(["breaker-stops-repeats"], mutated=True)
    assert not score.passed
    assert Agent(ReplayModel([])).tool_misuse_breaker == ToolMisuseBreakerConfig()


def test_the_docs_name_every_scenario_and_its_mutation() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "evals.md").read_text()
    for name, spec in SCENARIOS.items():
        assert f"| `{name}` | {spec.category} | {spec.budget} / " in docs, (
            f"docs/evals.md does not list {name} with its category and budget"
        )
        assert f"| `{spec.mutation.__name__}` |" in docs, (
            f"docs/evals.md does not describe the mutation {spec.mutation.__name__}"
        )
