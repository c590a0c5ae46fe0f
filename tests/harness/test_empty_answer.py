"""Issue 33 item 6: an empty final answer (an empty reply accepted after
``harness.maxEmptyRetries``) fails a run that changed files, with a reason
the person reads; a run with no changes completes as before; the rule is a
setting (``harness.emptyAnswerWithChanges``)."""

from __future__ import annotations

from rein.harness import HarnessConfig
from tests.fakes.events import assert_well_formed
from tests.harness.test_gates_truth import World, write


async def test_an_empty_final_answer_fails_a_run_that_changed_files() -> None:
    world = World({"app.py": "a = 1\n"})
    agent, model, events = world.agent(
        [write("app.py", "a = 2\n"), {"text": ""}, {"text": ""}, {"text": "never"}],
        max_empty_retries=1,
    )
    result = await agent.prompt("edit")
    assert len(model.requests) == 3  # the retry came first
    [gate] = events.of("gate_result")
    assert gate.status == "passed"  # the gates ran before the verdict
    assert result.status == "failed"
    assert "final answer was empty after 1 retry" in (result.error or "")
    assert "app.py" in (result.error or "")
    assert "harness.emptyAnswerWithChanges" in (result.error or "")
    assert events.of("run_end")[0].reason == result.error
    assert_well_formed(events.types())


async def test_an_empty_final_answer_with_changes_is_accepted_when_configured() -> None:
    world = World({"app.py": "a = 1\n"})
    agent, _, _ = world.agent(
        [write("app.py", "a = 2\n"), {"text": ""}, {"text": ""}],
        max_empty_retries=1,
        empty_answer_with_changes="accept",
    )
    result = await agent.prompt("edit")
    assert result.status == "completed"
    assert "empty reply 2 times" in (result.error or "")


async def test_an_empty_final_answer_without_changes_still_completes() -> None:
    world = World({"app.py": "a = 1\n"})
    agent, _, _ = world.agent([{"text": ""}, {"text": ""}], max_empty_retries=1)
    result = await agent.prompt("look only")
    assert result.status == "completed"
    assert "empty reply 2 times" in (result.error or "")


async def test_an_answer_after_an_accepted_empty_reply_completes_the_run() -> None:
    """The repair turn after an accepted empty answer says something: the
    run completes with it, not failed for the earlier empty one."""
    world = World({"app.py": "a = 1\n"})
    agent, _, _ = world.agent(
        [
            write("app.py", "a = 1\nERROR new\n"),
            {"text": ""},
            {"text": ""},
            write("app.py", "a = 2\n"),
            {"text": "fixed"},
        ],
        max_empty_retries=1,
    )
    result = await agent.prompt("edit")
    assert (result.status, result.text, result.error) == ("completed", "fixed", None)


def test_the_setting_is_camel_case_and_defaults_to_fail() -> None:
    assert HarnessConfig().empty_answer_with_changes == "fail"
    config = HarnessConfig.model_validate({"emptyAnswerWithChanges": "accept"})
    assert config.empty_answer_with_changes == "accept"
