"""Which session an isolated run may be applied into (``intoSessionId``):
an unknown, isolated or busy one is refused, naming the field."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from rein.lsp.isolated_sessions import IsolatedSessions


class _Manager:
    def __init__(self, sessions: dict[str, Any], in_use: set[str]) -> None:
        self.sessions = sessions
        self._in_use = in_use

    async def load(self, session_id: str) -> Any:
        return self.sessions.get(session_id)

    def in_use(self, session_id: str) -> bool:
        return session_id in self._in_use


async def test_the_session_applied_into_is_known_not_isolated_and_idle() -> None:
    idle = SimpleNamespace(busy=False, restoring=False)
    sessions = {
        "idle": idle,
        "running": SimpleNamespace(busy=True, restoring=False),
        "restoring": SimpleNamespace(busy=False, restoring=True),
        "starting": SimpleNamespace(busy=False, restoring=False),
    }
    server: Any = SimpleNamespace(manager=_Manager(sessions, {"starting"}))
    isolated = IsolatedSessions(server, lambda config: None)  # type: ignore[arg-type,return-value]
    isolated.live["iso"] = SimpleNamespace()  # type: ignore[assignment]
    assert await isolated.into("idle") is idle
    for session_id, why in (
        ("nosuch", "no session 'nosuch'"),
        ("iso", "'iso' is isolated"),
        ("running", "'running' is running"),
        ("restoring", "'restoring' is running"),
        ("starting", "'starting' is running"),
    ):
        with pytest.raises(JsonRpcInvalidParams, match=f"intoSessionId: .*{why}"):
            await isolated.into(session_id)


async def test_a_prompt_that_starts_after_into_refuses_the_apply(tmp_path: Any) -> None:
    """The open session became in use (a prompt starting) between into()
    and the apply taking it: refused, the isolated session released,
    nothing of the apply done."""
    from rein.harness.errors import BusyError

    mine = SimpleNamespace(id="mine", busy=False, restoring=False)
    in_use: set[str] = set()
    server: Any = SimpleNamespace(manager=_Manager({"mine": mine}, in_use))
    isolated = IsolatedSessions(server, lambda config: None)  # type: ignore[arg-type,return-value]
    copy = SimpleNamespace(id="iso", busy=False, restoring=False)
    isolated.live["iso"] = SimpleNamespace(session=copy)  # type: ignore[assignment]
    assert await isolated.into("mine") is mine
    in_use.add("mine")  # a prompt of it starts

    async def applied(*args: object) -> dict[str, Any]:
        raise AssertionError("the apply went on")

    isolated._bring_back = applied  # type: ignore[method-assign]
    with pytest.raises(BusyError, match="session mine is running a task"):
        await isolated.bring_back("iso", "keep", None, into=mine)  # type: ignore[arg-type]
    assert not copy.restoring and not mine.restoring
