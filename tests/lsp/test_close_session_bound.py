"""``rein/closeSession`` when the aborted run does not end within the bound:
the answer says it was not closed and why, the session takes prompts again
and nothing of it is ended or forgotten (the handler over fakes)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from rein.lsp.handlers import sessions as handlers


class StuckSession:
    """A busy session whose run ignores the abort."""

    def __init__(self) -> None:
        self.id = "ses_stuck"
        self.closing = False
        self.task: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.aborted: list[str] = []

    @property
    def busy(self) -> bool:
        return not self.task.done()

    def abort(self, reason: str) -> bool:
        self.aborted.append(reason)
        return True


async def test_a_run_that_does_not_end_leaves_the_session_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def ready() -> None:
        return None

    stuck = StuckSession()
    manager = SimpleNamespace(sessions={stuck.id: stuck}, store=None)
    server: Any = SimpleNamespace(
        ready=ready, isolated=SimpleNamespace(session=lambda _id: None), manager=manager
    )
    monkeypatch.setattr(handlers, "CLOSE_WAIT_S", 0.01)
    answer = await handlers.close_session(server, {"sessionId": stuck.id})
    assert answer == {"closed": False, "reason": "its run did not end within 0.01 s of the abort"}
    assert stuck.aborted == ["the session was closed"]
    assert not stuck.closing and manager.sessions == {stuck.id: stuck}
    stuck.task.cancel()
