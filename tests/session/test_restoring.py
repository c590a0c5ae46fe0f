"""A restore in a live session: refused while it runs, noted in the
transcript (the next model request carries the note), announced with
``files_restored``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rein.checkpoints.restore import RestoreRequest
from rein.harness import Agent
from rein.harness.errors import BusyError
from rein.harness.messages import AssistantMessage, UserMessage
from rein.harness.ports import ModelRequest, Mutation, TextDelta
from rein.session import Session
from rein.session.restoring import restore_in_session
from tests.fakes.checkpoints import CheckpointJournal
from tests.fakes.events import EventLog
from tests.fakes.models import FunctionModel, PausingModel, assistant
from tests.fakes.persistence import MemoryPersistence

SID = CheckpointJournal.SID


def done(request: ModelRequest) -> AssistantMessage:
    return assistant("done")


async def journal() -> CheckpointJournal:
    j = CheckpointJournal({"a.py": "a0\n", "b.py": "b0\n"})
    await j.run("run-1", {1: {"a.py": "a1\n", "b.py": "b1\n"}})
    return j


async def test_the_next_model_request_carries_the_restore_note() -> None:
    model = FunctionModel(done)
    persistence = MemoryPersistence()
    session = Session(SID, Agent(model, persistence=persistence))
    events = EventLog()
    session.subscribe(events)
    await session.run(lambda: session.agent.prompt("change a and b"))
    j = await journal()
    j.ws.person_edits("b.py", "mine\n")

    result = await restore_in_session(session, j.store, j.ws, RestoreRequest(SID, "run-1"))

    assert j.ws.files["a.py"] == "a0\n" and j.ws.buffers["b.py"][0] == "mine\n"
    (event,) = events.of("files_restored")
    assert (event.restore_id, event.run_id, event.restored, event.conflicts) == (
        result.restore_id,
        "run-1",
        ["a.py"],
        ["b.py"],
    )
    note = session.agent.messages[-1]
    assert isinstance(note, UserMessage) and note.origin == "restore"
    assert note in persistence.committed  # persisted now, not at the next run

    await session.run(lambda: session.agent.prompt("what now?"))
    sent = model.requests[-1].messages
    roles = [m.role for m in sent]
    assert roles == ["user", "assistant", "user", "user"]
    assert "a.py (modified again)" in sent[2].content  # type: ignore[union-attr]
    assert "changed them after the run: b.py" in sent[2].content  # type: ignore[union-attr]
    assert sent[3].content == "what now?"  # type: ignore[union-attr]


async def test_a_restore_while_a_run_is_active_is_refused_and_changes_nothing() -> None:
    model = PausingModel([([TextDelta("x")], assistant("x"))])
    session = Session(SID, Agent(model))
    j = await journal()
    task = asyncio.ensure_future(session.run(lambda: session.agent.prompt("go")))
    await asyncio.wait_for(model.paused.wait(), 10)
    with pytest.raises(BusyError, match="abort or wait for the run"):
        await restore_in_session(session, j.store, j.ws, RestoreRequest(SID, "run-1"))
    assert j.ws.files == {"a.py": "a1\n", "b.py": "b1\n"}
    assert await j.run_ids() == ["run-1"]
    model.resume()
    await asyncio.wait_for(task, 10)
    assert [m.role for m in session.agent.messages] == ["user", "assistant"]


async def test_no_run_starts_while_a_restore_writes() -> None:
    session = Session(SID, Agent(FunctionModel(done)))
    j = await journal()
    writing, go_on = asyncio.Event(), asyncio.Event()
    real_write = j.ws.write_text

    async def slow(path: str, text: str, *, expected_version: int | None = None) -> Mutation:
        writing.set()
        await go_on.wait()
        return await real_write(path, text, expected_version=expected_version)

    j.ws.write_text = slow  # type: ignore[method-assign]
    restore = asyncio.ensure_future(
        restore_in_session(session, j.store, j.ws, RestoreRequest(SID, "run-1"))
    )
    await asyncio.wait_for(writing.wait(), 10)
    with pytest.raises(BusyError, match="restoring files"):
        await session.run(lambda: session.agent.prompt("go"))
    with pytest.raises(BusyError, match="restoring files"):
        await restore_in_session(session, j.store, j.ws, RestoreRequest(SID, "run-1"))
    go_on.set()
    await asyncio.wait_for(restore, 10)
    assert not session.restoring
    assert j.ws.files == {"a.py": "a0\n", "b.py": "b0\n"}


async def test_a_restore_with_nothing_to_do_adds_no_note() -> None:
    session = Session(SID, Agent(FunctionModel(done)))
    j = await journal()
    await restore_in_session(session, j.store, j.ws, RestoreRequest(SID, "run-1"))
    await restore_in_session(session, j.store, j.ws, RestoreRequest(SID, "run-1"))
    assert [m.origin for m in session.agent.messages] == ["restore"]  # type: ignore[union-attr]


async def test_the_manager_refuses_a_prompt_while_a_restore_writes_and_marks_nothing_running(
    tmp_path: Path,
) -> None:
    from rein.config import ReinConfig
    from rein.session import SessionManager
    from tests.fakes.session import fake_session_ports

    model = FunctionModel(done)
    config = ReinConfig(gates={"analyzer": {"enabled": False}})  # type: ignore[arg-type]
    ports = fake_session_ports(tmp_path, model)
    manager = SessionManager(lambda: config, lambda: ports, storage=lambda: tmp_path / "store")
    store = await manager.open_store()
    assert store is not None
    session = manager.new(title="t")
    await manager.run_prompt(session, "first")
    session.restoring = True
    with pytest.raises(BusyError, match="restoring files"):
        await manager.run_prompt(session, "second")
    assert not manager.in_use(session.id)
    record = await store.get_session(session.id)
    assert record is not None and record.status == "completed"
    assert len(model.requests) == 1
    manager.close()


async def test_in_plan_mode_the_planner_is_told_too() -> None:
    session = Session(SID, Agent(FunctionModel(done)), mode="plan")
    session.planner = Agent(FunctionModel(done))
    j = await journal()
    await restore_in_session(session, j.store, j.ws, RestoreRequest(SID, "run-1"))
    for agent in (session.agent, session.planner):
        (note,) = agent.messages
        assert isinstance(note, UserMessage) and note.origin == "restore"
        assert "a.py (modified again)" in note.content
