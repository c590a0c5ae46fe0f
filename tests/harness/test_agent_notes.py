"""Agent.add_note: a message between runs (a restore's), persisted at once
and carried by the next model request."""

from __future__ import annotations

import asyncio

import pytest

from rein.harness import Agent, AgentBusyError
from rein.harness.messages import UserMessage
from rein.harness.ports import TextDelta
from tests.fakes.models import FunctionModel, PausingModel, assistant
from tests.fakes.persistence import MemoryPersistence


async def test_a_note_is_persisted_now_and_sent_with_the_next_request() -> None:
    model = FunctionModel(lambda request: assistant("ok"))
    persistence = MemoryPersistence()
    agent = Agent(model, persistence=persistence)
    await agent.prompt("first")
    note = UserMessage(content="files were restored", origin="restore")
    await agent.add_note(note)
    assert persistence.committed[-1] == note and persistence.queued == []
    await agent.prompt("second")
    sent = model.requests[-1].messages
    assert [getattr(m, "content", None) for m in sent if m.role == "user"] == [
        "first",
        "files were restored",
        "second",
    ]


async def test_a_note_is_refused_while_a_run_is_active() -> None:
    model = PausingModel([([TextDelta("x")], assistant("x"))])
    agent = Agent(model)
    task = asyncio.ensure_future(agent.prompt("go"))
    await asyncio.wait_for(model.paused.wait(), 10)
    with pytest.raises(AgentBusyError):
        await agent.add_note(UserMessage(content="n", origin="restore"))
    model.resume()
    await asyncio.wait_for(task, 10)
    assert [m.role for m in agent.messages] == ["user", "assistant"]
