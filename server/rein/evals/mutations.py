"""The mutations: each switches off one behaviour a scenario scores.

A mutation takes the scenario's :class:`~rein.evals.Rig` before the scenario
runs and sets a switch on it; the helpers in
:mod:`rein.evals.scenarios._common` honour the switches. Where configuration
or the public Agent API offers the switch, the mutation uses it (a gate turned
off in the Rein configuration, a flow without replans, an Agent without the
``task`` tool, without its misuse breaker or its over-window relief); where
neither does, the switch is made here, never in the harness (a
``complete_step`` without its no-work check).

``run_all(mutated=True)`` runs every scenario with its mutation; each must
then fail (tests/evals/test_mutations.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from unittest import mock

from rein.evals._registry import Rig

if TYPE_CHECKING:
    from rein.harness import Agent

__all__ = [
    "analyzer_gate_off",
    "breaker_off",
    "compaction_off",
    "complete_step_unchecked",
    "dependency_gate_off",
    "merged",
    "plan_changes_forgotten",
    "preview_off",
    "repair_budget_unlimited",
    "replans_off",
    "steering_ignored",
    "subagent_questions_dropped",
    "subagents_off",
    "summary_failure_ignored",
    "waiting_question_forgotten",
]


def merged(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``update`` merged in, nested objects key by key."""
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def _merge(rig: Rig, config: dict[str, Any]) -> None:
    rig.config = merged(rig.config, config)


# ------------------------------------------------------------- configuration


def analyzer_gate_off(rig: Rig) -> None:
    """The analyzer gate is disabled (``gates.analyzer.enabled: false``): the
    real analyzers' diagnostics no longer send the model back."""
    _merge(rig, {"gates": {"analyzer": {"enabled": False}}})


def dependency_gate_off(rig: Rig) -> None:
    """The dependency gate is disabled (``gates.dependencies.enabled: false``):
    a manifest change installs nothing."""
    _merge(rig, {"gates": {"dependencies": {"enabled": False}}})


def preview_off(rig: Rig) -> None:
    """The preview is off (``gates.preview.command`` empty): runtime errors of
    the running program never reach the model."""
    _merge(rig, {"gates": {"preview": {"command": ""}}})


def repair_budget_unlimited(rig: Rig) -> None:
    """The repair budget no longer ends the run (``harness.maxRepairAttempts``
    far beyond any script): a model that insists it is done is sent back
    again and again."""
    _merge(rig, {"harness": {"maxRepairAttempts": 1000}})


def replans_off(rig: Rig) -> None:
    """The plan-act flow may not revise its plan (``max_replans=0``): a
    failed step fails the flow."""
    rig.flow_options["max_replans"] = 0


# ---------------------------------------------------------- public Agent API


def steering_ignored(rig: Rig) -> None:
    """``Agent.steer`` drops the text: steering never reaches the model."""

    def ignore(agent: Agent) -> None:
        agent.steer = lambda message: None  # type: ignore[method-assign]

    rig.agent_setup.append(ignore)


def subagents_off(rig: Rig) -> None:
    """The ``task`` tool is removed from every agent: nothing can be
    delegated to a subagent."""

    def remove(agent: Agent) -> None:
        agent.tools = agent.tools.subset(n for n in agent.tools.names() if n != "task")

    rig.agent_setup.append(remove)


def subagent_questions_dropped(rig: Rig) -> None:
    """Every agent's children come from a plain factory (``env.subagents`` a
    function, as the ``task`` tool accepts): a child's unanswered question
    is a failed ``task`` result, never forwarded to the person."""

    def plain(agent: Agent) -> None:
        spawner = agent.env.subagents
        if spawner is not None:
            agent.env.subagents = lambda child_id, tools, max_turns: spawner(
                child_id, tools, max_turns
            )

    rig.agent_setup.append(plain)


def breaker_off(rig: Rig) -> None:
    """Every agent's tool-misuse breaker is off: no note after repeated
    failures and no refusal."""

    def off(agent: Agent) -> None:
        agent.tool_misuse_breaker = None

    rig.agent_setup.append(off)


def compaction_off(rig: Rig) -> None:
    """Every agent has no over-window relief: nothing is elided or
    summarised, and a request over the window fails the run."""

    def swap(agent: Agent) -> None:
        agent.over_window_relief = None

    rig.agent_setup.append(swap)


def complete_step_unchecked(rig: Rig) -> None:
    """The executor's ``complete_step`` accepts ``success=true`` with no work
    done (the flow is given this one, without the check, as its step tool)."""
    from rein.flows.plan_tools import CompleteStepArgs
    from rein.harness.run.output import OutputTool

    rig.flow_options["step_tool"] = OutputTool(
        "complete_step",
        "Finish the current step.",
        CompleteStepArgs,
        summary=lambda a: f"Step {a.step_id} {'done' if a.success else 'failed'}: {a.summary}",
    )


def plan_changes_forgotten(rig: Rig) -> None:
    """The stored plan snapshot drops its changes not yet validated (patched
    ``PlanSnapshot.to_json``): after a restart the last step's gates do not
    see the earlier steps' changes."""
    from rein.flows.plan_snapshot import PlanSnapshot

    original = PlanSnapshot.to_json

    def forgetful(self: PlanSnapshot) -> dict[str, Any]:
        return {**original(self), "unvalidated": []}

    rig.patches.append(mock.patch.object(PlanSnapshot, "to_json", forgetful))


def summary_failure_ignored(rig: Rig) -> None:
    """A failed final summary is reported as a completed run with no text
    (patched ``PlanActFlow._finish``): the person gets no answer and no
    reason."""
    from rein.flows.plan_act import PlanActFlow

    original = PlanActFlow._finish

    async def ignoring(self: PlanActFlow, *args: Any, **kwargs: Any) -> Any:
        result = await original(self, *args, **kwargs)
        if result.status == "failed" and (result.error or "").startswith("the final summary"):
            result.status, result.error, result.text = "completed", None, ""
        return result

    rig.patches.append(mock.patch.object(PlanActFlow, "_finish", ignoring))


def waiting_question_forgotten(rig: Rig) -> None:
    """The stored session drops the question it waits on (patched
    ``SessionManager._memory_state``): a session loaded from the store takes
    the person's answer as a new message, not as the question's result."""
    from rein.session.manager import SessionManager

    original = SessionManager._memory_state

    def forgetful(session: Any, waiting_for: str | None) -> dict[str, Any]:
        return {**original(session, waiting_for), "waiting_for": None}

    rig.patches.append(mock.patch.object(SessionManager, "_memory_state", staticmethod(forgetful)))
