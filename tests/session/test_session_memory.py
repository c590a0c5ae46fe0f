"""The session manager's memory bounds: idle sessions leave memory after
``sessions.idleEvictMs`` (or past ``sessions.maxInMemory``) and come back
from the real SQLite store with their transcripts; a session in use, or one
that only memory holds, stays."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import anyio

from rein.config import ReinConfig, SessionLimits
from rein.harness import AssistantMessage
from rein.harness.ports import ModelRequest
from rein.session import SessionManager
from tests.fakes.clock import run_in_virtual_time
from tests.fakes.models import FunctionModel, assistant
from tests.fakes.session import fake_session_ports

BOUND_MS = 60_000


def _manager(
    tmp_path: Path,
    model: FunctionModel,
    clock: Callable[[], float],
    *,
    storage: bool = True,
    max_in_memory: int = 32,
) -> SessionManager:
    config = ReinConfig(
        sessions=SessionLimits(idle_evict_ms=BOUND_MS, max_in_memory=max_in_memory),
        gates={"analyzer": {"enabled": False}},  # type: ignore[arg-type]
        # The real SQLite store works in threads, which do not hold the
        # virtual clock back: a run waiting on one would see its idle
        # watchdog fire (900 virtual seconds pass at once) and end aborted.
        harness={"runIdleTimeoutMs": 0},  # type: ignore[arg-type]
    )
    ports = fake_session_ports(tmp_path, model)
    return SessionManager(
        lambda: config,
        lambda: ports,
        storage=lambda: tmp_path / "store" if storage else None,
        clock=clock,
        evict=True,
    )


def _answers() -> FunctionModel:
    count = 0

    def answer(request: ModelRequest) -> AssistantMessage:
        nonlocal count
        count += 1
        return assistant(f"answer {count}")

    return FunctionModel(answer)


def test_an_idle_session_is_evicted_at_the_bound_and_reloaded_with_its_transcript(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        manager = _manager(tmp_path, _answers(), loop.time)
        await manager.open_store()
        session = manager.new(title="first")
        evicted: list[str] = []
        manager.on_evict.append(lambda s: evicted.append(s.id))
        result = await manager.run_prompt(session, "hello")
        assert result.status == "completed"
        transcript = [m.model_dump() for m in session.agent.messages]
        await asyncio.sleep(BOUND_MS / 1000 - 1)
        assert session.id in manager.sessions and evicted == []
        await asyncio.sleep(2)  # the timer the run's end armed has fired
        assert session.id not in manager.sessions and evicted == [session.id]
        back = await manager.load(session.id)
        assert back is not None and back is not session
        assert [m.model_dump() for m in back.agent.messages] == transcript
        again = await manager.run_prompt(back, "and again")
        assert again.status == "completed" and again.text == "answer 2"
        manager.close()

    run_in_virtual_time(main)


def test_a_running_session_and_one_only_memory_holds_are_never_evicted(tmp_path: Path) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        release = anyio.Event()

        async def slow(request: ModelRequest) -> AssistantMessage:
            await release.wait()
            return assistant("done")

        manager = _manager(tmp_path, FunctionModel(slow), loop.time)
        await manager.open_store()
        session = manager.new(title="busy")
        task = asyncio.ensure_future(manager.run_prompt(session, "work"))
        await asyncio.sleep(BOUND_MS / 1000 * 3)
        assert manager.sweep() == [] and session.id in manager.sessions
        release.set()
        await task
        await asyncio.sleep(BOUND_MS / 1000 + 1)
        assert session.id not in manager.sessions
        manager.close()

        memory_only = _manager(tmp_path, _answers(), loop.time, storage=False)
        kept = memory_only.new(title="kept")
        await memory_only.run_prompt(kept, "hi")
        await asyncio.sleep(BOUND_MS / 1000 * 3)
        assert memory_only.sweep() == [] and kept.id in memory_only.sessions

    run_in_virtual_time(main)


async def test_past_max_in_memory_the_least_recently_used_idle_session_goes(
    tmp_path: Path,
) -> None:
    now = [1000.0]
    manager = _manager(tmp_path, _answers(), lambda: now[0], max_in_memory=2)
    await manager.open_store()
    ids = []
    for i in range(3):
        session = manager.new(title=f"s{i}")
        await manager.run_prompt(session, f"task {i}")
        ids.append(session.id)
        now[0] += 1
    assert sorted(manager.sessions) == sorted(ids[1:])
    # Loading the evicted one makes it the most recent; the oldest goes.
    assert await manager.load(ids[0]) is not None
    assert sorted(manager.sessions) == sorted([ids[0], ids[2]])
    manager.close()


async def test_a_listener_that_raises_does_not_stop_the_sweep(tmp_path: Path) -> None:
    now = [1000.0]
    manager = _manager(tmp_path, _answers(), lambda: now[0])
    await manager.open_store()
    ids = []
    for i in range(2):
        session = manager.new(title=f"s{i}")
        await manager.run_prompt(session, f"task {i}")
        ids.append(session.id)

    def fail_first(session: object) -> None:
        if getattr(session, "id", None) == ids[0]:
            raise RuntimeError("a broken listener")

    manager.on_evict.append(fail_first)
    now[0] += BOUND_MS / 1000
    assert manager.sweep() == [ids[1]]
    assert manager.sessions == {}
    manager.close()
