"""Why a gate could not take its baseline passes the redactor every other
gate text passes (safe20): the ``error`` event of a gate whose
``on_run_start`` raised with a key in its message held the key before."""

from __future__ import annotations

from rein.harness import Agent
from rein.harness.gating.gate_types import GateContext, GateOutcome
from rein.harness.gating.gates import GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog
from tests.fakes.workspace import FakeWorkspace

KEY = "ghp_BASELINExx0123456789abcdefghijklmnopq"


class _NoBaseline:
    """A gate whose baseline command failed, quoting what it printed."""

    name = "tests"

    async def on_run_start(self, generation: int) -> None:
        raise RuntimeError(f"collecting failed: conftest.py printed token={KEY}")

    async def check(self, ctx: GateContext) -> GateOutcome:
        return GateOutcome(detail="nothing changed")


async def test_why_a_gate_could_not_take_its_baseline_is_redacted() -> None:
    agent = Agent(
        ReplayModel([{"text": "done"}]),
        tools=[],
        env=ToolEnvironment(workspace=TrackedWorkspace(FakeWorkspace(), MutationLog())),
        gates=GatePipeline([_NoBaseline()]),
    )
    events = EventLog()
    agent.subscribe(events)
    await agent.prompt("go")
    [error] = [e for e in events.of("error") if e.where == "gate:tests"]
    assert "could not take its baseline" in error.message
    assert "token=[redacted]" in error.message and KEY not in error.message
