"""The Reviewer (rein.checkpoints.review) over the in-memory checkpoint store and
the fake workspace: pending files, hunks, keep and undo per hunk, file and
run, refusals when the person changed a region, undo recorded as a restore
run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rein.checkpoints.model import (
    CheckpointChange,
    CheckpointRun,
    CheckpointStore,
    FileChange,
    FileVersion,
    MemoryCheckpointStore,
)
from rein.checkpoints.review import Reviewer
from rein.harness.errors import ReviewError
from rein.harness.events import Event, ReviewDecided, ReviewPending
from rein.store._checkpoint_schema import compress
from rein.store.checkpoints import SqliteCheckpointStore
from tests.fakes.workspace import FakeWorkspace

SID = "ses_review"
RUN = "run_1"
BEFORE = "".join(f"line {i}\n" for i in range(1, 11))
#: Two hunks: line 2 changed, line 9 replaced by two lines.
AFTER = BEFORE.replace("line 2\n", "LINE TWO\n").replace("line 9\n", "nine a\nnine b\n")


async def agent_run(
    store: CheckpointStore,
    ws: FakeWorkspace,
    edits: list[tuple[str, str | None]],
    run_id: str = RUN,
    secret: bool = False,
) -> None:
    """Apply ``edits`` (text, or None to delete) as a run would, recording
    each as the capture does: the text before, then the text after (a
    ``secret`` file's kept apart, as the capture keeps them)."""

    async def kept(text: str) -> FileVersion:
        if secret:
            return FileVersion("text", await store.put_secret(text))
        await store.put_text(text)
        return FileVersion.of_text(text)

    await store.begin_run(CheckpointRun(SID, run_id, ws.root, "run", "task", 1.0))
    for turn, (path, text) in enumerate(edits, start=1):
        if await ws.exists(path):
            before = await kept((await ws.read_text(path)).text)
        else:
            before = FileVersion.absent()
        if text is None:
            mutation = await ws.delete(path)
            after = FileVersion.absent()
        else:
            mutation = await ws.write_text(path, text)
            after = await kept(text)
        await store.record(
            CheckpointChange(
                SID,
                run_id,
                turn,
                mutation.generation,
                "tool",
                (FileChange(path, before, after),),
                2.0,
            )
        )


def reviewer(store: CheckpointStore, ws: FakeWorkspace, events: list[Event]) -> Reviewer:
    return Reviewer(store, ws, SID, emit=events.append, clock=lambda: 5.0)


@pytest.fixture
def events() -> list[Event]:
    return []


StoreFactory = Callable[[], CheckpointStore]


@pytest.fixture(params=["memory", "sqlite"])
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Makes the store the reviews live in: memory, or a real SQLite file."""
    opened: list[SqliteCheckpointStore] = []

    def sqlite() -> CheckpointStore:
        opened.append(SqliteCheckpointStore.open(tmp_path / f"db{len(opened)}"))
        return opened[-1]

    yield sqlite if request.param == "sqlite" else MemoryCheckpointStore
    for store in opened:
        store.close()


async def two_hunks_and_a_new_file(
    events: list[Event], new_store: StoreFactory
) -> tuple[CheckpointStore, FakeWorkspace, Reviewer]:
    store, ws = new_store(), FakeWorkspace({"app.py": BEFORE, "gone.txt": "old\n"})
    await agent_run(
        store, ws, [("app.py", AFTER), ("new.py", "print('new')\n"), ("gone.txt", None)]
    )
    rev = reviewer(store, ws, events)
    assert await rev.mark_pending(RUN) == ["app.py", "new.py", "gone.txt"]
    return store, ws, rev


async def test_marking_pending_lists_each_file_with_its_hunks(
    events: list[Event], new_store: StoreFactory
) -> None:
    _, _, rev = await two_hunks_and_a_new_file(events, new_store)
    assert events == [
        ReviewPending(session_id=SID, run_id=RUN, paths=["app.py", "new.py", "gone.txt"])
    ]
    [(run_id, files)] = await rev.runs()
    assert run_id == RUN
    app, new, gone = files
    assert (app.change, app.status) == ("modified", "pending")
    assert [h.hunk.header for h in app.hunks] == ["@@ -2,1 +2,1 @@", "@@ -9,1 +9,2 @@"]
    assert app.hunks[1].hunk.diff_lines() == ["-line 9", "+nine a", "+nine b"]
    assert "+LINE TWO" in app.diff
    assert (new.change, len(new.hunks), gone.change) == ("created", 1, "deleted")
    # A second marking adds nothing (decided files keep their state).
    assert await rev.mark_pending(RUN) == []


async def test_undo_one_hunk_and_keep_the_other(
    events: list[Event], new_store: StoreFactory
) -> None:
    store, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    undone = await rev.decide(RUN, "undo", "app.py", 0)
    assert [(d.path, d.hunk, d.status) for d in undone.decided] == [("app.py", 0, "undone")]
    kept = await rev.decide(RUN, "keep", "app.py", 1)
    assert [(d.path, d.hunk, d.status) for d in kept.decided] == [("app.py", 1, "kept")]
    # Exactly before-hunk-1 + after-hunk-2.
    assert ws.files["app.py"] == BEFORE.replace("line 9\n", "nine a\nnine b\n")
    (app,) = [f for f in await rev.files(RUN) if f.path == "app.py"]
    assert app.status == "mixed"
    assert [h.status for h in app.hunks] == ["undone", "kept"]
    assert (await store.reviews(SID))[(RUN, "app.py")] == "mixed"
    assert [e for e in events if isinstance(e, ReviewDecided)] == [
        ReviewDecided(
            session_id=SID, run_id=RUN, path="app.py", hunk=0, decision="undo", status="undone"
        ),
        ReviewDecided(
            session_id=SID, run_id=RUN, path="app.py", hunk=1, decision="keep", status="kept"
        ),
    ]


async def test_an_undo_is_a_restore_run_recording_the_edit(
    events: list[Event], new_store: StoreFactory
) -> None:
    store, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    result = await rev.decide(RUN, "undo", "app.py", 1)
    assert result.restore_id is not None and result.restore_id.startswith("restore-")
    restore = [r for r in await store.runs(SID) if r.run_id == result.restore_id]
    assert [(r.kind, r.restored_run) for r in restore] == [("restore", RUN)]
    [change] = await store.changes(SID, result.restore_id)
    assert (change.turn, change.origin) == (0, "restore")
    [fc] = change.files
    assert fc.before == FileVersion.of_text(AFTER)
    assert fc.after == FileVersion.of_text(ws.files["app.py"])
    assert await store.get_text(fc.before.blob or "") == AFTER


async def test_typing_inside_a_hunk_refuses_its_undo_and_changes_nothing(
    events: list[Event],
    new_store: StoreFactory,
) -> None:
    store, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    typed = AFTER.replace("LINE TWO\n", "LINE TWO (mine)\n")
    ws.person_edits("app.py", typed)
    runs_before = len(await store.runs(SID))
    result = await rev.decide(RUN, "undo", "app.py", 0)
    assert result.decided == ()
    [refused] = result.refused
    assert (refused.path, refused.hunk) == ("app.py", 0)
    assert refused.reason.startswith("the person changed this region")
    assert (await ws.read_text("app.py")).text == typed
    assert len(await store.runs(SID)) == runs_before  # no restore run
    # The other hunk is still undoable, below the person's line.
    await rev.decide(RUN, "undo", "app.py", 1)
    assert (await ws.read_text("app.py")).text == typed.replace("nine a\nnine b\n", "line 9\n")


async def test_a_file_undo_is_all_or_nothing(events: list[Event], new_store: StoreFactory) -> None:
    _, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    ws.person_edits("app.py", AFTER.replace("nine b\n", "nine B\n"))
    result = await rev.decide(RUN, "undo", "app.py")
    assert [(r.path, r.hunk) for r in result.refused] == [("app.py", 1)]
    assert result.decided == ()
    assert (await ws.read_text("app.py")).text == AFTER.replace("nine b\n", "nine B\n")


async def test_the_editor_refusing_the_versioned_edit_is_a_refusal(
    events: list[Event], new_store: StoreFactory
) -> None:
    _, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    ws.refuse_next = "app.py changed in the editor since it was read; read it again"
    result = await rev.decide(RUN, "undo", "app.py", 0)
    assert [r.reason for r in result.refused] == [
        "the edit was refused: app.py changed in the editor since it was read; read it again"
    ]
    assert ws.files["app.py"] == AFTER
    assert [h.status for h in (await rev.files(RUN))[0].hunks] == ["pending", "pending"]


async def test_undo_of_a_created_file_deletes_it_and_of_a_deleted_one_recreates_it(
    events: list[Event],
    new_store: StoreFactory,
) -> None:
    _, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    await rev.decide(RUN, "undo", "new.py")
    assert "new.py" not in ws.files
    await rev.decide(RUN, "undo", "gone.txt")
    assert ws.files["gone.txt"] == "old\n"
    statuses = {f.path: f.status for f in await rev.files(RUN)}
    assert statuses == {"app.py": "pending", "new.py": "undone", "gone.txt": "undone"}


async def test_a_created_file_the_person_changed_is_not_deleted(
    events: list[Event], new_store: StoreFactory
) -> None:
    _, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    ws.person_edits("new.py", "print('mine')\n")
    result = await rev.decide(RUN, "undo", "new.py")
    assert [r.reason for r in result.refused] == ["the person changed this file since the run"]
    assert await ws.exists("new.py")
    ws.files["gone.txt"] = "the person's own\n"
    result = await rev.decide(RUN, "undo", "gone.txt")
    assert [r.reason for r in result.refused] == [
        "the person created this file again since the run"
    ]
    assert ws.files["gone.txt"] == "the person's own\n"


async def test_keep_all_then_undo_all(events: list[Event], new_store: StoreFactory) -> None:
    store, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    await rev.decide(RUN, "undo", "app.py", 0)
    kept = await rev.decide(RUN, "keep")
    assert [(d.path, d.status) for d in kept.decided] == [
        ("app.py", "mixed"),
        ("new.py", "kept"),
        ("gone.txt", "kept"),
    ]
    undone = await rev.decide(RUN, "undo")
    assert [(d.path, d.status) for d in undone.decided] == [
        ("app.py", "undone"),
        ("new.py", "undone"),
        ("gone.txt", "undone"),
    ]
    assert ws.files == {"app.py": BEFORE, "gone.txt": "old\n"}
    # One restore run holds the whole batch.
    assert undone.restore_id is not None
    assert len(await store.changes(SID, undone.restore_id)) == 3


async def test_keeping_an_undone_hunk_is_refused(
    events: list[Event], new_store: StoreFactory
) -> None:
    _, _, rev = await two_hunks_and_a_new_file(events, new_store)
    await rev.decide(RUN, "undo", "app.py", 0)
    result = await rev.decide(RUN, "keep", "app.py", 0)
    assert result.decided == ()
    assert "was undone" in result.refused[0].reason


@pytest.mark.parametrize(
    ("run_id", "path", "hunk", "message"),
    [
        pytest.param("run_x", None, None, "no checkpoint run 'run_x'", id="unknown-run"),
        pytest.param(RUN, "other.py", None, "other.py is not under review", id="unknown-path"),
        pytest.param(RUN, "app.py", 2, "there is no hunk 2", id="unknown-hunk"),
        pytest.param(RUN, None, 0, "a hunk needs its path", id="hunk-without-path"),
    ],
)
async def test_bad_requests_are_review_errors_and_change_nothing(
    events: list[Event],
    new_store: StoreFactory,
    run_id: str,
    path: str | None,
    hunk: int | None,
    message: str,
) -> None:
    _, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    files = dict(ws.files)
    with pytest.raises(ReviewError, match=message):
        await rev.decide(run_id, "undo", path, hunk)
    assert ws.files == files


async def test_a_run_not_in_review_has_nothing_to_decide(
    events: list[Event], new_store: StoreFactory
) -> None:
    store, ws = new_store(), FakeWorkspace({"a.py": "a\n"})
    await agent_run(store, ws, [("a.py", "b\n")])
    rev = reviewer(store, ws, events)
    assert await rev.runs() == []
    with pytest.raises(ReviewError, match="no changes under review"):
        await rev.decide(RUN, "keep")


async def test_a_file_without_its_earlier_content_can_be_kept_not_undone(
    events: list[Event],
    new_store: StoreFactory,
) -> None:
    store, ws = new_store(), FakeWorkspace({"data.bin": "now"})
    await store.begin_run(CheckpointRun(SID, RUN, ws.root, "run", "task", 1.0))
    await store.put_text("now")
    change = FileChange("data.bin", FileVersion.unstored("binary"), FileVersion.of_text("now"))
    await store.record(CheckpointChange(SID, RUN, 1, 1, "command", (change,), 2.0))
    rev = reviewer(store, ws, events)
    await rev.mark_pending(RUN)
    (file,) = await rev.files(RUN)
    assert file.hunks == () and "binary" in file.reason
    result = await rev.decide(RUN, "undo", "data.bin")
    assert "not stored (binary)" in result.refused[0].reason
    assert ws.files["data.bin"] == "now"
    kept = await rev.decide(RUN, "keep", "data.bin")
    assert [d.status for d in kept.decided] == ["kept"]


TEXT = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "x = 1\n"]), max_size=8).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=TEXT, after=TEXT, data=st.data())
def test_undoing_every_hunk_one_by_one_restores_the_file(
    before: str, after: str, data: st.DataObject
) -> None:
    async def scenario() -> None:
        store, ws = MemoryCheckpointStore(), FakeWorkspace({"f.py": before})
        await agent_run(store, ws, [("f.py", after)])
        rev = reviewer(store, ws, [])
        if not await rev.mark_pending(RUN):
            assert before == after
            return
        (file,) = await rev.files(RUN)
        order = data.draw(st.permutations([h.hunk.index for h in file.hunks]))
        for index in order:
            result = await rev.decide(RUN, "undo", "f.py", index)
            assert result.refused == ()
        assert ws.files["f.py"] == before
        assert (await rev.files(RUN))[0].status == "undone"

    asyncio.run(scenario())


async def test_a_rename_is_undone_by_recreating_the_old_path_and_deleting_the_new(
    events: list[Event], new_store: StoreFactory
) -> None:
    store, ws = new_store(), FakeWorkspace({"old.py": "x = 1\n"})
    await store.begin_run(CheckpointRun(SID, RUN, ws.root, "run", "task", 1.0))
    await store.put_text("x = 1\n")
    mutation = await ws.rename("old.py", "new.py")
    text = FileVersion.of_text("x = 1\n")
    files = (
        FileChange("old.py", text, FileVersion.absent()),
        FileChange("new.py", FileVersion.absent(), text, renamed_from="old.py"),
    )
    await store.record(CheckpointChange(SID, RUN, 1, mutation.generation, "tool", files, 2.0))
    rev = reviewer(store, ws, events)
    assert await rev.mark_pending(RUN) == ["old.py", "new.py"]
    changes = {f.path: (f.change, f.renamed_from) for f in await rev.files(RUN)}
    assert changes == {"old.py": ("deleted", None), "new.py": ("renamed", "old.py")}
    result = await rev.decide(RUN, "undo")
    assert result.refused == ()
    assert ws.files == {"old.py": "x = 1\n"}


async def test_an_undo_that_was_itself_undone_makes_the_hunk_pending_again(
    events: list[Event], new_store: StoreFactory
) -> None:
    _, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    await rev.decide(RUN, "undo", "app.py", 0)
    await rev.decide(RUN, "undo", "new.py")
    # What rein/restore of those undos writes: the agent's text again.
    await ws.write_text("app.py", AFTER)
    await ws.write_text("new.py", "print('new')\n")
    files = {f.path: f for f in await rev.files(RUN)}
    assert [h.status for h in files["app.py"].hunks] == ["pending", "pending"]
    assert files["new.py"].status == "pending"
    kept = await rev.decide(RUN, "keep", "app.py", 0)
    assert [(d.hunk, d.status) for d in kept.decided] == [(0, "kept")]
    assert ws.files["app.py"] == AFTER


async def test_an_undone_hunk_the_person_rewrote_stays_undone(
    events: list[Event], new_store: StoreFactory
) -> None:
    _, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    await rev.decide(RUN, "undo", "app.py", 0)
    ws.person_edits("app.py", ws.files["app.py"].replace("line 2\n", "my own line 2\n"))
    (app,) = [f for f in await rev.files(RUN) if f.path == "app.py"]
    assert [h.status for h in app.hunks] == ["undone", "pending"]


async def test_changes_a_restore_put_back_are_undone_in_the_review(
    events: list[Event], new_store: StoreFactory
) -> None:
    _, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    await rev.decide(RUN, "keep", "app.py", 1)
    # What rein/restore (or rein undo) of the run writes: the files as before.
    await ws.write_text("app.py", BEFORE.replace("line 2\n", "LINE TWO\n"))  # hunk 1 only
    await ws.delete("new.py")
    await ws.write_text("gone.txt", "old\n")
    files = {f.path: f for f in await rev.files(RUN)}
    assert [h.status for h in files["app.py"].hunks] == ["pending", "undone"]
    assert (files["new.py"].status, files["gone.txt"].status) == ("undone", "undone")
    # Undoing what is already undone writes nothing.
    result = await rev.decide(RUN, "undo", "new.py")
    assert result.restore_id is None and result.refused == ()


async def test_decisions_at_once_are_taken_one_after_the_other(
    events: list[Event], new_store: StoreFactory
) -> None:
    _, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    first, second = await asyncio.gather(
        rev.decide(RUN, "undo", "app.py", 0), rev.decide(RUN, "undo", "app.py", 1)
    )
    assert first.refused == () and second.refused == ()
    assert ws.files["app.py"] == BEFORE


async def test_a_status_the_file_changed_is_recorded(
    events: list[Event], new_store: StoreFactory
) -> None:
    store, ws, rev = await two_hunks_and_a_new_file(events, new_store)
    await ws.delete("new.py")  # as a restore of the run does
    await rev.files(RUN)
    assert (await store.reviews(SID))[(RUN, "new.py")] == "undone"
    assert (await store.hunk_reviews(SID))[(RUN, "new.py", 0)] == "undone"


async def test_undoing_a_hunk_of_a_secret_file_keeps_its_texts_out_of_the_database(
    events: list[Event], tmp_path: Path
) -> None:
    before = "A=1\nTOKEN=old-secret-4f1e\nC=3\n"
    after = before.replace("A=1", "A=2").replace("C=3", "C=4")
    store = SqliteCheckpointStore.open(tmp_path)
    try:
        ws = FakeWorkspace({".env": before})
        await agent_run(store, ws, [(".env", after)], secret=True)
        rev = reviewer(store, ws, events)
        assert await rev.mark_pending(RUN) == [".env"]
        result = await rev.decide(RUN, "undo", ".env", 0)
        assert ws.files[".env"] == after.replace("A=2", "A=1")
        [change] = await store.changes(SID, result.restore_id)
        [fc] = change.files
        # The undo's journal keeps the texts apart too, and they read back.
        assert fc.before.blob is not None and fc.before.blob.startswith("secret:")
        assert await store.get_text(fc.before.blob) == after
        assert await store.get_text(fc.after.blob or "") == ws.files[".env"]
    finally:
        store.close()
    for data in _database_bytes(tmp_path):
        for text in (before, after, ws.files[".env"]):
            assert compress(text) not in data and b"old-secret-4f1e" not in data


def _database_bytes(folder: Path) -> list[bytes]:
    """Every byte of the checkpoint database's files (its WAL included)."""
    found = [path.read_bytes() for path in folder.glob("checkpoints.db*")]
    assert found
    return found
