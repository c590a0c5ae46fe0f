"""A session's run preparations (MCP servers starting) can be aborted: the
run does not start and the prompt ends aborted at once."""

from __future__ import annotations

import asyncio

from rein.harness import Agent
from rein.providers.replay import ReplayModel
from rein.session.session import Session


async def test_abort_while_preparing_ends_the_run_before_it_starts() -> None:
    model = ReplayModel([{"text": "never"}])
    session = Session(id="ses_test", agent=Agent(model))
    entered = asyncio.Event()
    cancelled = asyncio.Event()

    async def start_servers() -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    session.before_run.append(start_servers)
    run = asyncio.ensure_future(session.run(lambda: session.agent.prompt("hi")))
    await entered.wait()
    assert session.abort("stop")
    result = await asyncio.wait_for(run, 5)
    assert (result.status, result.error) == ("aborted", "aborted before the run started: stop")
    assert cancelled.is_set()
    assert model.requests == [] and session.agent.messages == []
    assert not session.busy


async def test_a_cancelled_prompt_while_preparing_is_still_a_cancellation() -> None:
    session = Session(id="ses_test", agent=Agent(ReplayModel([{"text": "never"}])))
    entered = asyncio.Event()

    async def start_servers() -> None:
        entered.set()
        await asyncio.Event().wait()

    session.before_run.append(start_servers)
    run = asyncio.ensure_future(session.run(lambda: session.agent.prompt("hi")))
    await entered.wait()
    run.cancel()
    try:
        await asyncio.wait_for(run, 5)
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the cancelled prompt returned a result")
    assert not session.busy
