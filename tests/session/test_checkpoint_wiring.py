"""Every session of a host gets a checkpoint store: ``checkpoints.db`` next
to the session database, memory when there is none (or it cannot be used,
said once); the prompt's result carries its changes, and the limits are
applied after each prompt with a ``checkpoint_dropped`` event."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

from rein.checkpoints.model import FileChange, FileVersion, MemoryCheckpointStore
from rein.config import ReinConfig, load_config
from rein.harness.events import CheckpointDropped, Event
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from rein.session import SessionManager, SessionPorts
from rein.store.checkpoints import SqliteCheckpointStore
from tests.fakes.commands import FakeCommandRunner
from tests.fakes.diagnostics import FakeDiagnostics
from tests.fakes.models import complete_turn, plan_turn
from tests.fakes.workspace import FakeWorkspace

NO_ANALYZERS: dict[str, Any] = {"gates": {"analyzer": {"enabled": False}}}


def writes(*files: tuple[str, str]) -> ReplayModel:
    return ReplayModel(
        [
            *(
                {"tool_calls": [{"name": "write_file", "arguments": {"path": p, "content": c}}]}
                for p, c in files
            ),
            {"text": "written"},
        ]
    )


def config(**checkpoints: Any) -> ReinConfig:
    return load_config({**NO_ANALYZERS, "checkpoints": checkpoints})


async def test_a_stored_session_records_into_checkpoints_db(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("old\n")
    model = writes(("a.txt", "new\n"))
    async with HeadlessSession(
        ws, model, config(), analyzers=(), watch=False, storage=tmp_path / "store"
    ) as host:
        result = await host.prompt("write")
        session = host.session
        assert isinstance(session.checkpoints, SqliteCheckpointStore)
        assert session.last_changes == [
            FileChange("a.txt", FileVersion.of_text("old\n"), FileVersion.of_text("new\n"))
        ]
        [change] = await session.checkpoints.changes(session.id, result.run_id)
        assert change.files == tuple(session.last_changes)


async def test_memory_only_sessions_keep_checkpoints_in_memory(tmp_path: Path) -> None:
    model = writes(("a.txt", "x\n"))
    async with HeadlessSession(tmp_path, model, config(), analyzers=(), watch=False) as host:
        await host.prompt("write")
        assert isinstance(host.session.checkpoints, MemoryCheckpointStore)
        assert [f.path for f in host.session.last_changes] == ["a.txt"]


async def test_an_unusable_checkpoint_file_is_said_once_and_the_edits_go_on(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    db = sqlite3.connect(store / "checkpoints.db")
    db.execute("PRAGMA user_version=99")
    db.commit()
    db.close()
    ws = tmp_path / "ws"
    ws.mkdir()
    model = writes(("a.txt", "x\n"), ("b.txt", "y\n"))
    async with HeadlessSession(
        ws, model, config(), analyzers=(), watch=False, storage=store
    ) as host:
        result = await host.prompt("write")
        assert result.status == "completed"
        assert (ws / "a.txt").read_text() == "x\n" and (ws / "b.txt").read_text() == "y\n"
        # Sessions are still stored; checkpoints are kept in memory, and the
        # run's changes are there.
        assert host.manager.store is not None
        assert isinstance(host.session.checkpoints, MemoryCheckpointStore)
        assert [f.path for f in host.session.last_changes] == ["a.txt", "b.txt"]
    told = [r for r in host.reports if "checkpoint" in r]
    assert len(told) == 1 and "newer Rein" in told[0], host.reports


async def test_checkpoints_can_be_turned_off(tmp_path: Path) -> None:
    model = writes(("a.txt", "x\n"))
    async with HeadlessSession(
        tmp_path / "", model, config(enabled=False), analyzers=(), watch=False
    ) as host:
        await host.prompt("write")
        assert host.session.capture is None and host.session.last_changes == []


def _noise(seed: int, size: int) -> str:
    """``size`` random characters of 28 (random bytes mapped onto them: a
    random choice per character was most of the test's own time)."""
    alphabet = b"abcdefghijklmnopqrstuvwxyz \n"
    table = bytes(alphabet[b % len(alphabet)] for b in range(256))
    return random.Random(seed).randbytes(size).translate(table).decode()


async def test_the_size_limit_after_a_prompt_drops_the_oldest_run_with_an_event(
    tmp_path: Path,
) -> None:
    """Two sessions in one workspace, each editing a large file (its
    content before and after: ~0.58 MB compressed a run): the second
    session's run takes the workspace over checkpoints.maxMb 1, so the
    first session's run (the oldest) loses its content."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i, path in enumerate(("a.txt", "b.txt")):
        (ws / path).write_text(f"line {i} to change\n" + _noise(i, 450_000))
    storage = tmp_path / "store"
    events: list[Event] = []
    runs: list[str] = []
    sessions: list[str] = []
    for i, path in enumerate(("a.txt", "b.txt")):
        edit = {"path": path, "old_string": f"line {i} to change", "new_string": "changed"}
        model = ReplayModel(
            [{"tool_calls": [{"name": "edit_file", "arguments": edit}]}, {"text": "edited"}]
        )
        async with HeadlessSession(
            ws, model, config(maxMb=1), analyzers=(), watch=False, storage=storage
        ) as host:
            host.subscribe(events.append)
            result = await host.prompt(f"write {path}")
            assert result.status == "completed", result.error
            runs.append(result.run_id)
            sessions.append(host.session.id)
            if i == 0:
                assert not [e for e in events if isinstance(e, CheckpointDropped)]
    dropped = [e for e in events if isinstance(e, CheckpointDropped)]
    assert [(e.session_id, e.run_id) for e in dropped] == [(sessions[0], runs[0])]
    assert dropped[0].bytes > 400_000
    assert "checkpoints.maxMb" in dropped[0].reason
    store = SqliteCheckpointStore.open(storage)
    try:
        [first] = await store.runs(sessions[0])
        [second] = await store.runs(sessions[1])
        assert first.pruned_at is not None and second.pruned_at is None
        assert first.pruned_reason == dropped[0].reason
        assert await store.size(str(ws)) <= 1024 * 1024
    finally:
        store.close()


async def test_each_plan_step_is_a_checkpoint_run_of_its_own(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    def write(path: str, content: str) -> dict[str, Any]:
        return {
            "tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]
        }

    model = ReplayModel(
        [
            plan_turn(("s1", "write a.py"), ("s2", "write b.py")),
            write("a.py", "a = 1\n"),
            complete_turn("s1", summary="wrote a.py"),
            write("b.py", "b = 1\n"),
            complete_turn("s2", summary="wrote b.py"),
            {"text": "Wrote a.py and b.py."},
        ]
    )
    async with HeadlessSession(
        ws, model, config(), analyzers=(), watch=False, mode="plan", storage=tmp_path / "store"
    ) as host:
        result = await host.prompt("write a.py and b.py")
        assert result.status == "completed", result.error
        store = host.session.checkpoints
        assert store is not None
        changes = await store.changes(host.session.id)
        # Two executor runs, one change each; the planner's runs changed nothing.
        assert [[f.path for f in c.files] for c in changes] == [["a.py"], ["b.py"]]
        assert len({c.run_id for c in changes}) == 2
        runs = await store.runs(host.session.id)
        assert [r.run_id for r in runs] == [c.run_id for c in changes]
        # The prompt's result covers every step's change.
        assert [(f.path, f.kind) for f in host.session.last_changes] == [
            ("a.py", "created"),
            ("b.py", "created"),
        ]


async def test_a_session_over_a_plain_workspace_records_checkpoints_of_its_changes(
    tmp_path: Path,
) -> None:
    workspace = FakeWorkspace({"a.txt": "old\n"}, root=str(tmp_path))
    ports = SessionPorts(
        root=tmp_path,
        workspace=workspace,  # no change hooks, no mutation log
        diagnostics=FakeDiagnostics(),
        runner=FakeCommandRunner(),
        approver=lambda session_id: None,
        user=lambda session_id: None,
    )
    manager = SessionManager(config, lambda: ports, storage=lambda: None)
    session = manager.new(model=writes(("a.txt", "new\n")))
    result = await manager.run_prompt(session, "write")
    assert workspace.files["a.txt"] == "new\n"
    assert session.last_changes == [
        FileChange("a.txt", FileVersion.of_text("old\n"), FileVersion.of_text("new\n"))
    ]
    assert session.checkpoints is not None
    [change] = await session.checkpoints.changes(session.id, result.run_id)
    assert change.files == tuple(session.last_changes)
