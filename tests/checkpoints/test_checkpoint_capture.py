"""Capture: a session's runs' changes, with their content, land in the
checkpoint store whoever made them (a tool, a subagent, a command), at the
turn of the top-level run; other changes do not; and a failing or hanging
store never breaks or blocks an edit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from rein.checkpoints.capture import COMMAND_BEFORE, CheckpointCapture, changes_json
from rein.checkpoints.file_meta import Meta, NoFileMeta
from rein.checkpoints.model import (
    CheckpointChange,
    FileChange,
    FileVersion,
    MemoryCheckpointStore,
    text_hash,
)
from rein.disk.disk_workspace import DiskWorkspace
from rein.flows.subagents import SubagentSpawner
from rein.harness import Agent, ToolRegistry
from rein.harness.events import CheckpointDropped, Event, RunStart
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.run.run_record import RunRecord, recording
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from rein.tools.task import TaskTool
from tests.fakes.checkpoints import FailingCheckpointStore, HangingCheckpointStore
from tests.fakes.tools import FakeCommandTool, FakeWriteTool
from tests.fakes.workspace import FakeWorkspace

SESSION = "ses_capture"


def text(value: str) -> FileVersion:
    return FileVersion.of_text(value)


ABSENT = FileVersion.absent()


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def captured(
    files: dict[str, str] | None = None,
    store: Any = None,
    **options: Any,
) -> tuple[CheckpointCapture, TrackedWorkspace, FakeWorkspace, MutationLog, Any]:
    fake = FakeWorkspace(files)
    log = MutationLog()
    workspace = TrackedWorkspace(fake, log)
    store = store if store is not None else MemoryCheckpointStore()
    capture = CheckpointCapture(store, workspace, SESSION, mutations=log, **options)
    capture.attach()
    return capture, workspace, fake, log, store


def started(capture: CheckpointCapture, run_id: str = "run_1", prompt: str = "fix it") -> RunRecord:
    capture.on_event(RunStart(run_id=run_id, prompt=prompt))
    record = RunRecord(run_id=run_id)
    record.turn = 1
    return record


def files_of(changes: list[CheckpointChange]) -> list[list[FileChange]]:
    return [list(c.files) for c in changes]


async def test_write_create_delete_and_rename_keep_the_content_before_and_after() -> None:
    capture, workspace, _, _, store = captured(
        {"a.py": "a = 1\n", "gone.py": "g = 1\n", "old.py": "o = 1\n"}
    )
    record = started(capture)
    with recording(record):
        await workspace.write_text("a.py", "a = 2\n")
        await workspace.write_text("new.py", "n = 1\n")
        record.turn = 2
        await workspace.delete("gone.py")
        await workspace.rename("old.py", "moved.py")

    changes = await store.changes(SESSION, "run_1")
    assert [(c.turn, c.generation, c.origin) for c in changes] == [
        (1, 1, "tool"),
        (1, 2, "tool"),
        (2, 3, "tool"),
        (2, 4, "tool"),
    ]
    assert files_of(changes) == [
        [FileChange("a.py", text("a = 1\n"), text("a = 2\n"))],
        [FileChange("new.py", ABSENT, text("n = 1\n"))],
        [FileChange("gone.py", text("g = 1\n"), ABSENT)],
        [
            FileChange("old.py", text("o = 1\n"), ABSENT),
            FileChange("moved.py", ABSENT, text("o = 1\n"), renamed_from="old.py"),
        ],
    ]
    # Every text is stored and can be read back by its hash.
    for value in ("a = 1\n", "a = 2\n", "n = 1\n", "g = 1\n", "o = 1\n"):
        assert await store.get_text(text_hash(value)) == value
    [run] = await store.runs(SESSION)
    assert (run.run_id, run.kind, run.title, run.workspace) == ("run_1", "run", "fix it", "/fake")
    assert [c.kind for c in [f for c in changes for f in c.files]] == [
        "modified",
        "created",
        "deleted",
        "deleted",
        "renamed",
    ]


async def test_changes_outside_the_sessions_runs_are_not_captured() -> None:
    capture, workspace, _, _, store = captured({"a.py": "a = 1\n"})
    started(capture, "run_mine")
    await workspace.write_text("a.py", "no run\n")
    with recording(RunRecord(run_id="run_of_another_session")):
        await workspace.write_text("a.py", "another session\n")
    assert await store.changes(SESSION) == []
    assert await store.runs(SESSION) == []


async def test_a_failed_edit_records_nothing() -> None:
    capture, workspace, fake, _, store = captured({"a.py": "a = 1\n"})
    fake.refuse_next = "the editor refused the edit"
    with recording(started(capture)), pytest.raises(Exception, match="refused"):
        await workspace.write_text("a.py", "a = 2\n")
    assert await store.changes(SESSION) == []


async def test_a_subagents_edit_lands_in_the_parents_run_at_the_parents_turn() -> None:
    fake = FakeWorkspace({"lib.py": "x = 1\n"})
    log = MutationLog()
    workspace = TrackedWorkspace(fake, log)
    store = MemoryCheckpointStore()
    capture = CheckpointCapture(store, workspace, SESSION, mutations=log)
    capture.attach()
    env = ToolEnvironment(workspace=workspace)
    child_model = ReplayModel(
        [
            {
                "tool_calls": [
                    {"name": "write", "arguments": {"path": "lib.py", "content": "x = 2\n"}}
                ]
            },
            {"text": "wrote"},
        ],
        name="child",
    )
    env.subagents = SubagentSpawner(child_model, ToolRegistry([FakeWriteTool()]), env)
    task = {"description": "write lib", "prompt": "write lib.py", "tools": ["write"]}
    parent = Agent(
        ReplayModel(
            [
                {
                    "tool_calls": [
                        {"name": "write", "arguments": {"path": "a.py", "content": "a\n"}}
                    ]
                },
                {"tool_calls": [{"name": "task", "arguments": task}]},
                {"text": "done"},
            ],
            name="parent",
        ),
        tools=[FakeWriteTool(), TaskTool()],
        env=env,
    )
    parent.subscribe(capture.on_event)
    result = await parent.prompt("write a and delegate lib")
    assert result.status == "completed"

    runs = await store.runs(SESSION)
    assert [r.run_id for r in runs] == [result.run_id]  # the child's run is not a checkpoint run
    changes = await store.changes(SESSION)
    assert [(c.run_id, c.turn, c.origin) for c in changes] == [
        (result.run_id, 1, "tool"),
        (result.run_id, 2, "subagent"),
    ]
    assert files_of(changes)[1] == [FileChange("lib.py", text("x = 1\n"), text("x = 2\n"))]


async def test_a_commands_change_is_recorded_with_the_content_the_session_knew() -> None:
    fake = FakeWorkspace({"gen.py": "v1\n", "other.py": "o1\n"})
    log = MutationLog()
    workspace = TrackedWorkspace(fake, log)
    store = MemoryCheckpointStore()
    capture = CheckpointCapture(store, workspace, SESSION, mutations=log)
    capture.attach()
    env = ToolEnvironment(workspace=workspace)
    write = {"path": "gen.py", "content": "v2\n"}
    agent = Agent(
        ReplayModel(
            [
                {"tool_calls": [{"name": "write", "arguments": write}]},
                {
                    "tool_calls": [
                        {"name": "run_command", "arguments": {"path": "gen.py", "content": "v3\n"}}
                    ]
                },
                {
                    "tool_calls": [
                        {
                            "name": "run_command",
                            "arguments": {"path": "other.py", "content": "o2\n"},
                        }
                    ]
                },
                {"text": "done"},
            ]
        ),
        tools=[FakeWriteTool(), FakeCommandTool(fake, log)],
        env=env,
    )
    agent.subscribe(capture.on_event)
    capture.start_prompt()
    result = await agent.prompt("generate")
    net = await capture.end_prompt()

    changes = await store.changes(SESSION, result.run_id)
    assert [(c.turn, c.origin) for c in changes] == [(1, "tool"), (2, "command"), (3, "command")]
    assert files_of(changes)[1:] == [
        # The session stored v2 itself: that is the command's before.
        [FileChange("gen.py", text("v2\n"), text("v3\n"))],
        # Rein never had other.py's content before the command changed it.
        [FileChange("other.py", FileVersion.unstored(COMMAND_BEFORE), text("o2\n"))],
    ]
    assert net == [
        FileChange("gen.py", text("v1\n"), text("v3\n")),
        FileChange("other.py", FileVersion.unstored(COMMAND_BEFORE), text("o2\n")),
    ]
    assert changes_json(net) == [
        {"path": "gen.py", "change": "modified"},
        {"path": "other.py", "change": "modified"},
    ]


async def test_the_person_changing_a_file_makes_its_content_unknown_to_later_commands() -> None:
    capture, workspace, fake, log, store = captured({"a.py": "a1\n"})
    record = started(capture)
    with recording(record):
        await workspace.write_text("a.py", "a2\n")
    fake.files["a.py"] = "typed\n"
    log.record(fake._mutate(("a.py",), "person"))
    with recording(record), log.attributing_processes():
        fake.files["a.py"] = "formatted\n"
        log.record(fake._mutate(("a.py",), "external"))
    await capture.flush()
    last = (await store.changes(SESSION))[-1]
    assert last.origin == "command"
    assert list(last.files) == [
        FileChange("a.py", FileVersion.unstored(COMMAND_BEFORE), text("formatted\n"))
    ]


async def test_binary_and_too_large_files_are_recorded_without_content(tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (tmp_path / "big.txt").write_text("x" * 3000)
    log = MutationLog()
    workspace = TrackedWorkspace(DiskWorkspace(tmp_path), log)
    store = MemoryCheckpointStore()
    capture = CheckpointCapture(store, workspace, SESSION, mutations=log, max_file_bytes=2048)
    capture.attach()
    with recording(started(capture)):
        await workspace.write_text("logo.png", "now text\n")
        await workspace.write_text("big.txt", "small\n")
        await workspace.write_text("huge.txt", "y" * 5000)
    changes = await store.changes(SESSION)
    assert files_of(changes) == [
        [FileChange("logo.png", FileVersion.unstored("binary"), text("now text\n"))],
        [
            FileChange(
                "big.txt",
                FileVersion.unstored("too large: 3 KB, over checkpoints.maxFileKb 2"),
                text("small\n"),
            )
        ],
        [
            FileChange(
                "huge.txt",
                ABSENT,
                FileVersion.unstored("too large: 5 KB, over checkpoints.maxFileKb 2"),
            )
        ],
    ]
    assert await store.size() == len(b"now text\n") + len(b"small\n")


async def test_a_store_error_does_not_break_the_edit_and_is_told_once() -> None:
    told: list[str] = []
    capture, workspace, fake, _, store = captured(
        {"a.py": "a1\n"},
        store=FailingCheckpointStore("database or disk is full"),
        on_error=told.append,
    )
    with recording(started(capture)):
        await workspace.write_text("a.py", "a2\n")
        await workspace.write_text("b.py", "b\n")
    assert fake.files == {"a.py": "a2\n", "b.py": "b\n"}
    assert store.attempts >= 2  # it kept trying, and said so once
    assert told == [
        "the checkpoint store could not store a file's content: database or disk is full"
    ]


async def test_a_hanging_store_holds_an_edit_up_no_longer_than_the_bound() -> None:
    told: list[str] = []
    store = HangingCheckpointStore()
    capture, workspace, fake, _, _ = captured(
        {"a.py": "a1\n"}, store=store, on_error=told.append, store_bound_s=0.05
    )
    with anyio.fail_after(5):  # the test's own bound: without the capture's it would hang
        with recording(started(capture)):
            await workspace.write_text("a.py", "a2\n")
            await workspace.write_text("a.py", "a3\n")
            await workspace.write_text("b.py", "b\n")
    assert fake.files == {"a.py": "a3\n", "b.py": "b\n"}
    # Waited on once: a stalled store is not waited on again this prompt.
    assert store.waiting == 1
    assert told == ["the checkpoint store did not store a file's content within 0.05 s"]
    # The next prompt tries it again.
    capture.start_prompt()
    with anyio.fail_after(5), recording(started(capture, "run_2")):
        await workspace.write_text("a.py", "a4\n")
    assert store.waiting == 2


async def test_the_same_text_is_stored_once() -> None:
    capture, workspace, _, _, store = captured({"a.py": "same\n"})
    with recording(started(capture)):
        await workspace.write_text("b.py", "same\n")
        await workspace.write_text("a.py", "other\n")
        await workspace.write_text("a.py", "same\n")
    assert await store.size() == len(b"same\n") + len(b"other\n")


async def test_prune_drops_the_oldest_runs_and_emits_checkpoint_dropped() -> None:
    events: list[Event] = []
    clock = Clock(1000.0)
    capture, workspace, _, _, store = captured({}, emit=events.append, clock=clock)
    for i in range(3):
        clock.now = 1000.0 + i * 100
        with recording(started(capture, f"run_{i}", f"run {i}")):
            await workspace.write_text(f"f{i}.txt", f"{i}" * 100)
    # Within the limits: nothing goes.
    assert await capture.prune(max_bytes=10_000, max_age_s=0) == []
    # The size limit keeps the newest run only.
    clock.now = 1300.0
    dropped = await capture.prune(max_bytes=150, max_age_s=0)
    assert [r.run_id for r in dropped] == ["run_0", "run_1"]
    assert events == [
        CheckpointDropped(
            session_id=SESSION, run_id=f"run_{i}", bytes=100, reason=dropped[i].pruned_reason
        )
        for i in range(2)
    ]
    assert await store.size("/fake") == 100
    # The age limit: run_2 started at 1200, it is 150 s old at 1350.
    clock.now = 1350.0
    [old] = await capture.prune(max_bytes=10_000, max_age_s=100)
    assert old.run_id == "run_2" and "checkpoints.maxAgeDays" in old.pruned_reason
    runs = await store.runs(SESSION)
    assert [(r.run_id, r.pruned_at is not None) for r in runs] == [
        ("run_0", True),
        ("run_1", True),
        ("run_2", True),
    ]


async def test_a_command_removing_a_file_is_recorded_only_when_rein_had_its_content() -> None:
    capture, workspace, fake, log, store = captured({"known.py": "k1\n"})
    record = started(capture)
    with recording(record):
        await workspace.write_text("known.py", "k2\n")
        with log.attributing_processes():
            # sed -i: a temporary file appears and is gone when the command ends;
            # rm of a file the session wrote.
            fake.files["sedX1a2"] = "tmp"
            log.record(fake._mutate(("sedX1a2",), "external"))
            del fake.files["sedX1a2"]
            del fake.files["known.py"]
            log.record(fake._mutate(("sedX1a2", "known.py"), "external"))
    await capture.flush()
    commands = [c for c in await store.changes(SESSION) if c.origin == "command"]
    assert [list(c.files) for c in commands] == [[FileChange("known.py", text("k2\n"), ABSENT)]]


async def test_parallel_calls_changing_one_file_each_keep_their_before(tmp_path: Path) -> None:
    """Two calls of one turn write the same file at once (the disk writes on
    a worker thread, so their steps interleave): each change still has the
    content before it."""
    (tmp_path / "a.py").write_text("v0\n")
    log = MutationLog()
    workspace = TrackedWorkspace(DiskWorkspace(tmp_path), log)
    store = MemoryCheckpointStore()
    capture = CheckpointCapture(store, workspace, SESSION, mutations=log)
    capture.attach()
    with recording(started(capture)):
        async with anyio.create_task_group() as tg:
            tg.start_soon(workspace.write_text, "a.py", "from A\n")
            tg.start_soon(workspace.write_text, "a.py", "from B\n")
    changes = await store.changes(SESSION)
    assert len(changes) == 2
    assert [c.files[0].before.state for c in changes] == ["text", "text"], changes
    assert {c.files[0].after for c in changes} == {text("from A\n"), text("from B\n")}


def test_the_cli_prints_a_dropped_checkpoint() -> None:
    import io

    from rein.render import EventPrinter

    out = io.StringIO()
    EventPrinter(out)(
        CheckpointDropped(
            session_id=SESSION,
            run_id="run_1",
            bytes=100,
            reason="older than 30 days (checkpoints.maxAgeDays)",
        )
    )
    assert out.getvalue() == (
        "  ⌫ checkpoint of run run_1 dropped (older than 30 days (checkpoints.maxAgeDays)): "
        "it can no longer be undone\n"
    )


class _LinkedMeta(NoFileMeta):
    """A disk where ``notes`` is a symbolic link to ``.env``."""

    async def meta(self, path: str) -> Meta | None:
        return Meta(link=".env") if path == "notes" else Meta(mode=0o644)


async def test_a_secret_files_texts_and_a_links_to_one_are_kept_apart() -> None:
    capture, workspace, _, _, store = captured(
        {".env": "TOKEN=old\n", "notes": "TOKEN=old\n", "app.py": "x = 1\n"},
        secret=lambda path: path == ".env",
        meta=_LinkedMeta(),
    )
    with recording(started(capture)):
        await workspace.write_text(".env", "TOKEN=new\n")
        await workspace.delete("notes")
        await workspace.write_text("app.py", "x = 2\n")
    env, notes, app = [c.files[0] for c in await store.changes(SESSION)]
    for version in (env.before, env.after, notes.before):
        assert version.blob is not None and version.blob.startswith("secret:")
    assert notes.before.link == ".env"  # kept apart as what it leads to is
    assert await store.get_text(env.before.blob or "") == "TOKEN=old\n"
    assert await store.get_text(env.after.blob or "") == "TOKEN=new\n"
    assert (app.before, app.after) == (
        FileVersion.of_text("x = 1\n"),
        FileVersion.of_text("x = 2\n"),
    )
    # Nothing of the secret among the store's ordinary texts.
    assert await store.get_text(FileVersion.of_text("TOKEN=old\n").blob or "") is None
