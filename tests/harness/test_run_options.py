"""RunOptions: per-run gates, required output, model options, extra tools and
carried changes, passed to ``prompt`` instead of set on the Agent."""

from __future__ import annotations

import pytest

from rein.harness import Agent, RunOptions
from rein.harness.gating.gates import GatePipeline
from rein.harness.ports import ModelOptions, Mutation
from rein.harness.run.output import OutputTool
from rein.harness.run.run_record import RunMutation
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog
from tests.fakes.tools import EchoArgs, EchoTool


def echo(text: str) -> dict:
    return {"tool_calls": [{"name": "echo", "arguments": {"text": text}}]}


def answer(text: str) -> dict:
    return {"tool_calls": [{"name": "answer", "arguments": {"text": text}}]}


class CountingGate:
    """A gate that passes and counts the changes it was asked about."""

    name = "counting"

    def __init__(self) -> None:
        self.touched: list[frozenset[str]] = []

    async def on_run_start(self, generation: int) -> None:
        return None

    async def check(self, ctx):  # type: ignore[no-untyped-def]
        from rein.harness.gating.gates import GateOutcome

        self.touched.append(ctx.touched)
        return GateOutcome()


async def test_options_apply_to_the_run_and_the_agent_keeps_its_own() -> None:
    answer_tool = OutputTool("answer", "Give the answer.", EchoArgs)
    model = ReplayModel(
        [
            answer("forty-two"),
            {"text": "plain"},
        ]
    )
    agent = Agent(model, tools=[EchoTool()])
    first = await agent.prompt(
        "what is it?",
        run=RunOptions(
            options=ModelOptions(tool_choice="required"),
            required_output="answer",
            extra_tools=[answer_tool],
        ),
    )
    assert first.status == "completed", first.error
    assert first.output is not None and first.output["output"] == {"text": "forty-two"}
    second = await agent.prompt("and now?")
    assert second.status == "completed" and second.text == "plain"
    assert [(r.tools, r.tool_choice) for r in model.requests] == [
        (["echo", "answer"], "required"),
        (["echo"], None),
    ]
    assert (agent.options, agent.required_output, agent.tools.names()) == (
        ModelOptions(),
        None,
        ["echo"],
    )


async def test_gates_can_be_switched_off_for_one_run_and_carried_changes_are_validated() -> None:
    gate = CountingGate()
    pipeline = GatePipeline([gate])
    model = ReplayModel([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    agent = Agent(model, gates=pipeline)
    events = EventLog()
    agent.subscribe(events)
    carried = [RunMutation(Mutation(3, ("a.py",), "agent"), "tool")]
    await agent.prompt("no gates", run=RunOptions(gates=None, carried=carried))
    assert gate.touched == []
    await agent.prompt("the agent's gates", run=RunOptions(carried=carried))
    assert gate.touched == [frozenset({"a.py"})]
    # Without carried changes there is nothing unvalidated: no gate runs.
    result = await agent.prompt("nothing changed")
    assert gate.touched == [frozenset({"a.py"})]
    assert result.mutations == [] and agent.gates is pipeline


async def test_an_extra_tool_may_not_shadow_one_of_the_agents() -> None:
    agent = Agent(ReplayModel([{"text": "unused"}]), tools=[EchoTool()])
    with pytest.raises(ValueError, match="'echo' is already registered"):
        await agent.prompt("go", run=RunOptions(extra_tools=[EchoTool()]))
    assert agent.tools.names() == ["echo"] and not agent.is_running


def test_run_options_are_frozen() -> None:
    options = RunOptions()
    with pytest.raises(AttributeError):
        options.gates = None  # type: ignore[misc]
