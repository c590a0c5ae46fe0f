"""Issue 33 item 1: an abort that returns True stops every run it was aimed
at, the follow-up about to run included, and the caller's result says
``aborted``; one that comes when nothing is left to stop returns False."""

from __future__ import annotations

from rein.harness import Agent
from rein.harness.events import Event
from rein.harness.messages import UserMessage
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog, assert_well_formed
from tests.fakes.persistence import MemoryPersistence


def _agent(
    *replies: str, persistence: MemoryPersistence | None = None
) -> tuple[Agent, ReplayModel]:
    model = ReplayModel([{"text": text} for text in replies])
    return Agent(model, persistence=persistence), model


async def test_abort_from_a_follow_up_started_listener_stops_the_follow_up() -> None:
    agent, model = _agent("first", "follow-up ran")
    agent.follow_up("then this")
    log = EventLog()
    agent.subscribe(log)
    returned: list[bool] = []

    def on_event(event: Event) -> None:
        if event.type == "follow_up_started":
            returned.append(agent.abort("not this one"))

    agent.subscribe(on_event)
    result = await agent.prompt("go")
    assert returned == [True]
    assert (result.status, result.error) == ("aborted", "not this one")
    assert len(model.requests) == 1
    assert [(e.status, e.reason) for e in log.of("run_end")] == [
        ("completed", None),
        ("aborted", "not this one"),
    ]
    # The announced follow-up is kept in the transcript, like an aborted prompt's.
    assert [m.content for m in agent.messages if isinstance(m, UserMessage)] == [
        "go",
        "then this",
    ]
    assert log.of("agent_end")[0].status == "aborted"
    assert_well_formed(log.types())


async def test_abort_at_the_first_run_end_reports_aborted_to_the_caller() -> None:
    agent, model = _agent("first", "follow-up ran")
    agent.follow_up("then this")
    log = EventLog()
    agent.subscribe(log)
    returned: list[bool] = []

    def on_event(event: Event) -> None:
        if event.type == "run_end":
            returned.append(agent.abort("stop after this run"))

    agent.subscribe(on_event)
    result = await agent.prompt("go")
    assert returned == [True]
    assert (result.status, result.error) == ("aborted", "stop after this run")
    assert agent.last_result == result
    assert len(model.requests) == 1
    assert agent.has_queued_messages()  # the follow-up stays queued: the host decides
    assert log.of("agent_end")[0].status == "aborted"


async def test_abort_after_the_last_run_ended_has_nothing_to_stop() -> None:
    agent, model = _agent("only")
    returned: list[bool] = []

    def on_event(event: Event) -> None:
        if event.type == "run_end":
            returned.append(agent.abort("too late"))

    agent.subscribe(on_event)
    result = await agent.prompt("go")
    assert returned == [False]
    assert result.status == "completed"
    assert len(model.requests) == 1


async def test_abort_while_the_store_commits_reports_aborted() -> None:
    store = MemoryPersistence()
    agent, model = _agent("first", "follow-up ran", persistence=store)
    agent.follow_up("then this")
    original = store.checkpoint
    returned: list[bool] = []

    async def checkpoint() -> None:
        if agent.last_result is None and agent.current_run_id and model.requests:
            returned.append(agent.abort("stop now"))
        await original()

    store.checkpoint = checkpoint  # type: ignore[method-assign]
    result = await agent.prompt("go")
    assert returned == [True]
    assert (result.status, result.error) == ("aborted", "stop now")
    assert len(model.requests) == 1


async def test_an_abort_during_the_final_steering_check_ends_the_run_aborted() -> None:
    # The final check asks the external steering source; an abort that
    # lands while it answers (here: from inside it, returning without a
    # checkpoint, as a source that waits on a thread would) returned True
    # and the run still ended completed.
    agent, model = _agent("the answer")
    returned: list[bool] = []

    async def source() -> list[str]:
        if model.requests:  # the final check, after the answer
            returned.append(agent.abort("stopped at the end"))
        return []

    agent.external_steering_source = source
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("go")
    assert returned == [True]
    assert (result.status, result.error) == ("aborted", "stopped at the end")
    assert [(e.status, e.reason) for e in log.of("run_end")] == [("aborted", "stopped at the end")]
    assert_well_formed(log.types())
