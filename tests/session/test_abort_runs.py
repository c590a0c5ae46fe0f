"""A host's shutdown aborts the sessions' runs and waits for them, bounded
(:func:`rein.session.ending.abort_runs`): a run that ends on the abort is
over when it returns (its last messages are in the transcript the
SessionEnd hooks read); one that does not end is not waited for past the
bound."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rein.session import ending


class Running:
    """A session whose run ends on the abort, or never (``stuck``)."""

    def __init__(self, stuck: bool = False) -> None:
        self.task: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.stuck = stuck
        self.reasons: list[str] = []

    @property
    def busy(self) -> bool:
        return not self.task.done()

    def abort(self, reason: str) -> bool:
        self.reasons.append(reason)
        if not self.stuck:
            asyncio.get_running_loop().call_soon(self.task.set_result, None)
        return True


async def test_the_aborted_runs_are_waited_for_within_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ending, "RUN_END_WAIT_S", 0.05)
    ends, stuck = Running(), Running(stuck=True)
    sessions: list[Any] = [ends, stuck]
    await ending.abort_runs(sessions, "the server is shutting down")
    assert ends.task.done() and not stuck.task.done()
    assert ends.reasons == stuck.reasons == ["the server is shutting down"]
    stuck.task.cancel()
