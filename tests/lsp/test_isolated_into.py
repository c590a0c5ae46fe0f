"""Which session an isolated run may be applied into (``intoSessionId``):
an unknown, isolated, busy one or one stored for another folder is
refused, naming the field."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from rein.lsp.isolated_sessions import IsolatedSessions


class _Manager:
    """Live ``sessions``; ``stored``: the store's, by id (its folder, the session loaded)."""

    def __init__(
        self, sessions: dict[str, Any], in_use: set[str], stored: dict[str, Any] | None = None
    ) -> None:
        self.sessions = sessions
        self._in_use = in_use
        self.stored: dict[str, tuple[str, Any]] = stored or {}

    async def open_store(self) -> Any:
        return self

    async def get_session(self, session_id: str) -> Any:
        found = self.stored.get(session_id)
        return None if found is None else SimpleNamespace(workspace=found[0])

    async def load(self, session_id: str) -> Any:
        if session_id in self.stored:
            return self.stored[session_id][1]
        return self.sessions.get(session_id)

    def in_use(self, session_id: str) -> bool:
        return session_id in self._in_use


async def test_the_session_applied_into_is_known_of_the_folder_not_isolated_and_idle(
    tmp_path: Path,
) -> None:
    idle = SimpleNamespace(busy=False, restoring=False)
    sessions = {
        "idle": idle,
        "running": SimpleNamespace(busy=True, restoring=False),
        "restoring": SimpleNamespace(busy=False, restoring=True),
        "starting": SimpleNamespace(busy=False, restoring=False),
    }
    here = SimpleNamespace(busy=False, restoring=False)
    stored = {
        "here": (str(tmp_path / "ws"), here),
        "elsewhere": (str(tmp_path / "other"), SimpleNamespace(busy=False, restoring=False)),
        "unrecorded": ("", SimpleNamespace(busy=False, restoring=False)),
    }
    manager = _Manager(sessions, {"starting"}, stored)
    server: Any = SimpleNamespace(manager=manager, root=tmp_path / "ws")
    isolated = IsolatedSessions(server, lambda config: None)  # type: ignore[arg-type,return-value]
    isolated.live["iso"] = SimpleNamespace()  # type: ignore[assignment]
    assert await isolated.into("idle") is idle
    assert await isolated.into("here") is here  # stored for this folder: loaded
    for session_id, why in (
        ("nosuch", "no session 'nosuch'"),
        ("elsewhere", f"'elsewhere' is of another folder \\('{tmp_path}/other'\\)"),
        ("unrecorded", "'unrecorded' is of another folder \\(not recorded\\)"),
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


async def test_hunks_are_listed_only_while_the_isolated_run_is_idle(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing an isolated session's hunks stages its copy's index: refused
    while its run runs (nothing read), and no prompt of it starts while
    the listing reads (the session is held)."""
    from rein.harness.errors import BusyError
    from rein.lsp import isolated_sessions

    copy = SimpleNamespace(id="iso", busy=True, restoring=False, touch=lambda: None)
    server: Any = SimpleNamespace(manager=_Manager({}, set()), editor_workspace=None)
    isolated = IsolatedSessions(server, lambda config: None)  # type: ignore[arg-type,return-value]
    isolated.live["iso"] = SimpleNamespace(session=copy, record=SimpleNamespace(kind="git"))  # type: ignore[assignment]
    held: list[bool] = []

    def changes(record: object) -> list[object]:
        held.append(copy.restoring)
        return []

    async def reviewed(*args: object, **kwargs: object) -> list[object]:
        return []

    monkeypatch.setattr(isolated_sessions, "run_changes", changes)
    monkeypatch.setattr(isolated_sessions, "review_changes", reviewed)
    with pytest.raises(BusyError, match="session iso is running a task"):
        await isolated.hunks("iso")
    assert held == []
    copy.busy = False
    assert await isolated.hunks("iso") == {"sessionId": "iso", "files": []}
    assert held == [True] and not copy.restoring
