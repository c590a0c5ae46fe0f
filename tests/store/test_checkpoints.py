"""The checkpoint stores: the SQLite one (``checkpoints.db``) and the
in-memory one keep the same contract; the SQLite file stores a text once,
compressed, refuses a newer or damaged file, and stays bounded on disk
under the limits however many runs come and go."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rein.checkpoints.model import (
    CheckpointChange,
    CheckpointRun,
    CheckpointStore,
    FileChange,
    FileVersion,
    MemoryCheckpointStore,
    text_hash,
)
from rein.harness.errors import StoreError
from rein.store._checkpoint_schema import compress
from rein.store.checkpoints import CHECKPOINT_SCHEMA_VERSION, SqliteCheckpointStore

WORKSPACE = "/home/me/proj"


@pytest.fixture(params=["sqlite", "memory"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield MemoryCheckpointStore()
        return
    opened = SqliteCheckpointStore.open(tmp_path)
    yield opened
    opened.close()


def run(
    run_id: str, started_at: float, session_id: str = "ses_a", workspace: str = WORKSPACE
) -> CheckpointRun:
    return CheckpointRun(session_id, run_id, workspace, "run", f"title of {run_id}", started_at)


async def change(
    store: CheckpointStore,
    run_id: str,
    generation: int,
    path: str,
    before: str | None,
    after: str | None,
    session_id: str = "ses_a",
) -> CheckpointChange:
    async def version(value: str | None) -> FileVersion:
        if value is None:
            return FileVersion.absent()
        return FileVersion("text", await store.put_text(value))

    recorded = CheckpointChange(
        session_id,
        run_id,
        turn=1,
        generation=generation,
        origin="tool",
        files=(FileChange(path, await version(before), await version(after)),),
        at=float(generation),
    )
    await store.record(recorded)
    return recorded


async def test_runs_and_changes_read_back_as_recorded(store: Any) -> None:
    await store.begin_run(run("run_1", 10.0))
    await store.begin_run(run("run_1", 99.0))  # idempotent: the first registration stays
    rename = CheckpointChange(
        "ses_a",
        "run_1",
        turn=2,
        generation=7,
        origin="subagent",
        files=(
            FileChange(
                "old.py", FileVersion("text", await store.put_text("o\n")), FileVersion.absent()
            ),
            FileChange(
                "new.py",
                FileVersion.absent(),
                FileVersion("text", text_hash("o\n")),
                renamed_from="old.py",
            ),
        ),
        at=123.5,
    )
    first = await change(store, "run_1", 3, "a.py", "a1\n", "a2\n")
    await store.record(rename)
    unstored = CheckpointChange(
        "ses_a",
        "run_1",
        turn=2,
        generation=9,
        origin="command",
        files=(
            FileChange("logo.png", FileVersion.unstored("binary"), FileVersion.unstored("binary")),
        ),
        at=124.0,
    )
    await store.record(unstored)
    assert await store.changes("ses_a") == [first, rename, unstored]
    assert await store.changes("ses_a", "run_1") == [first, rename, unstored]
    assert await store.changes("ses_b") == []
    [listed] = await store.runs("ses_a")
    assert (listed.run_id, listed.started_at, listed.title, listed.pruned_at) == (
        "run_1",
        10.0,
        "title of run_1",
        None,
    )
    assert listed.bytes > 0
    assert await store.get_text(text_hash("a1\n")) == "a1\n"
    assert await store.get_text(text_hash("never stored")) is None


async def test_a_change_of_a_run_not_begun_is_refused(store: Any) -> None:
    with pytest.raises((StoreError, KeyError)):
        await change(store, "run_x", 1, "a.py", None, "a\n")


async def test_reviews_are_kept_per_run_and_path(store: Any) -> None:
    await store.set_review("ses_a", "run_1", "a.py", "pending")
    await store.set_review("ses_a", "run_1", "a.py", "kept")
    await store.set_review("ses_a", "run_2", "b.py", "undone")
    assert await store.reviews("ses_a") == {("run_1", "a.py"): "kept", ("run_2", "b.py"): "undone"}
    assert await store.reviews("ses_b") == {}


async def test_the_size_limit_drops_the_oldest_runs_and_their_unshared_blobs(store: Any) -> None:
    shared = "shared by every run\n" * 20
    for i in range(4):
        await store.begin_run(run(f"run_{i}", 100.0 + i))
        await change(store, f"run_{i}", i + 1, f"f{i}.py", shared, f"own content {i}\n" * 200)
    await store.begin_run(run("run_other", 50.0, "ses_other", workspace="/elsewhere"))
    await change(store, "run_other", 9, "x.py", None, "elsewhere\n" * 100, "ses_other")
    total = await store.size(WORKSPACE)
    one_run = (await store.runs("ses_a"))[0].bytes
    assert one_run > 0
    dropped = await store.prune(WORKSPACE, max_bytes=total - one_run, max_age_s=0, now=200.0)
    assert [(r.run_id, r.bytes) for r in dropped] == [("run_0", one_run)]
    assert "checkpoints.maxMb" in dropped[0].pruned_reason
    assert await store.get_text(text_hash("own content 0\n" * 200)) is None
    assert await store.get_text(text_hash(shared)) == shared  # the others still hold it
    assert await store.size(WORKSPACE) <= total - one_run
    # Another workspace's runs are not this workspace's limit's business.
    assert await store.get_text(text_hash("elsewhere\n" * 100)) is not None
    listed = await store.runs("ses_a")
    assert [(r.run_id, r.pruned_at) for r in listed][:2] == [("run_0", 200.0), ("run_1", None)]
    # Its changes stay listed (what it changed), only the content is gone.
    assert len(await store.changes("ses_a", "run_0")) == 1
    # Several runs at once: only the newest fits.
    newest = await store.size(WORKSPACE) - sum(r.bytes for r in listed[1:3])
    again = await store.prune(WORKSPACE, max_bytes=newest, max_age_s=0, now=300.0)
    assert [r.run_id for r in again] == ["run_1", "run_2"]
    assert await store.size(WORKSPACE) <= newest
    assert await store.get_text(text_hash(shared)) == shared  # run_3 still holds it


async def test_the_age_limit_drops_runs_older_than_it(store: Any) -> None:
    for i, started in enumerate((100.0, 200.0, 300.0)):
        await store.begin_run(run(f"run_{i}", started))
        await change(store, f"run_{i}", i + 1, "a.py", None, f"{i}\n")
    dropped = await store.prune(WORKSPACE, max_bytes=10**9, max_age_s=150.0, now=360.0)
    assert [r.run_id for r in dropped] == ["run_0", "run_1"]
    assert all("checkpoints.maxAgeDays" in r.pruned_reason for r in dropped)
    assert await store.prune(WORKSPACE, max_bytes=10**9, max_age_s=0, now=10**6) == []


async def test_sizes_per_session_and_per_workspace(store: Any) -> None:
    await store.begin_run(run("run_1", 1.0, "ses_a"))
    await store.begin_run(run("run_2", 2.0, "ses_b"))
    await change(store, "run_1", 1, "a.py", None, "a" * 1000, "ses_a")
    await change(store, "run_2", 2, "b.py", None, "b" * 1000, "ses_b")
    a, b = await store.session_size("ses_a"), await store.session_size("ses_b")
    assert a > 0 and b > 0
    assert await store.size(WORKSPACE) == a + b == await store.size()
    assert await store.session_size("ses_none") == 0


async def test_sqlite_stores_a_text_once_compressed(tmp_path: Path) -> None:
    store = SqliteCheckpointStore.open(tmp_path)
    text = "def f():\n    return 1\n" * 500
    assert await store.put_text(text) == await store.put_text(text) == text_hash(text)
    rows = store._db.execute("SELECT hash, size FROM blobs").fetchall()
    assert len(rows) == 1
    assert rows[0][1] < len(text) // 10  # zlib on repetitive source
    store.close()
    reopened = SqliteCheckpointStore.open(tmp_path)
    assert await reopened.get_text(text_hash(text)) == text
    reopened.close()


async def test_a_write_error_is_a_store_error_naming_the_file(tmp_path: Path) -> None:
    store = SqliteCheckpointStore.open(tmp_path)
    store._db.execute("DROP TABLE blobs")
    with pytest.raises(StoreError, match=r"checkpoints\.db"):
        await store.put_text("x")
    store.close()


def _on_disk(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("checkpoints.db*"))


async def test_the_file_stays_bounded_on_disk_over_many_runs(tmp_path: Path) -> None:
    """200 runs of ~64 KB of incompressible-ish text each (13 MB written)
    under a 1 MB limit: the file (with its WAL) stays a small multiple of
    the limit, because pruning deletes the blobs and gives the pages back."""
    import random

    store = SqliteCheckpointStore.open(tmp_path)
    rng = random.Random(18)
    # Random bytes mapped onto 28 characters (a random choice per character
    # was most of the test's time).
    alphabet = b"abcdefghijklmnopqrstuvwxyz \n"
    table = bytes(alphabet[b % len(alphabet)] for b in range(256))
    limit = 1024 * 1024
    peak = 0
    for i in range(200):
        await store.begin_run(run(f"run_{i}", float(i)))
        content = rng.randbytes(64 * 1024).translate(table).decode()
        await change(store, f"run_{i}", i + 1, f"f{i % 7}.txt", None, content)
        await store.prune(WORKSPACE, max_bytes=limit, max_age_s=0, now=float(i))
        assert await store.size(WORKSPACE) <= limit
        peak = max(peak, _on_disk(tmp_path))
    assert peak < 8 * limit, f"checkpoints.db grew to {peak} bytes under a {limit}-byte limit"
    runs = await store.runs("ses_a")
    assert sum(r.pruned_at is None for r in runs) < 30
    store.close()


async def test_a_version_1_file_is_migrated_and_keeps_its_checkpoints(tmp_path: Path) -> None:
    """checkpoints.db of schema 1 (no modes, no links), written with sqlite3
    as that Rein wrote it: opened, it reads as before (modes unknown) and
    takes versions with a mode and a link."""
    import sqlite3

    from rein.store._checkpoint_schema import _MIGRATIONS

    db = sqlite3.connect(tmp_path / "checkpoints.db")
    db.executescript(_MIGRATIONS[1])
    blob = text_hash("echo\n")
    db.execute("INSERT INTO blobs VALUES (?, ?, ?)", (blob, compress("echo\n"), 5))
    db.execute(
        "INSERT INTO runs (id, session_id, run_id, workspace, kind, started_at) "
        "VALUES (1, 'ses_a', 'run_old', ?, 'run', 1.0)",
        (WORKSPACE,),
    )
    db.execute("INSERT INTO changes VALUES (1, 1, 1, 1, 'tool', 1.0)")
    db.execute(
        "INSERT INTO file_versions (change, idx, path, before_state, before_blob, after_state) "
        "VALUES (1, 0, 'run.sh', 'text', ?, 'absent')",
        (blob,),
    )
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()

    store = SqliteCheckpointStore.open(tmp_path)
    try:
        [old] = await store.changes("ses_a", "run_old")
        [file] = old.files
        assert file.before == FileVersion("text", blob) and file.before.mode is None
        assert file.after == FileVersion.absent() and file.after.link is None
        assert await store.get_text(blob) == "echo\n"
        await store.begin_run(run("run_new", 2.0))
        versions = (
            FileVersion("text", blob).with_meta(0o755, None),
            FileVersion.absent().with_meta(None, "../target.txt"),
        )
        await store.record(
            CheckpointChange(
                "ses_a", "run_new", 1, 2, "tool", (FileChange("x", *versions),), at=2.0
            )
        )
        [new] = await store.changes("ses_a", "run_new")
        assert (new.files[0].before.mode, new.files[0].before.link) == (0o755, None)
        assert (new.files[0].after.mode, new.files[0].after.link) == (None, "../target.txt")
        assert new.files[0].kind == "modified"  # a dangling link is still something there
        version = store._db.execute("PRAGMA user_version").fetchone()[0]
        assert version == CHECKPOINT_SCHEMA_VERSION == 2
    finally:
        store.close()


async def test_a_secret_text_lives_beside_the_database_and_goes_when_its_run_is_pruned(
    tmp_path: Path,
) -> None:
    store = SqliteCheckpointStore.open(tmp_path)
    try:
        old_blob = await store.put_secret("TOKEN=old\n")
        kept_blob = await store.put_secret("TOKEN=kept\n")
        assert old_blob == await store.put_secret("TOKEN=old\n")  # the same name for the same text
        for i, (started, blob) in enumerate(((100.0, old_blob), (300.0, kept_blob))):
            await store.begin_run(run(f"run_{i}", started))
            await store.record(
                CheckpointChange(
                    "ses_a",
                    f"run_{i}",
                    1,
                    i + 1,
                    "tool",
                    (FileChange(".env", FileVersion("text", blob), FileVersion.absent()),),
                    float(i),
                )
            )
        assert await store.get_text(old_blob) == "TOKEN=old\n"
        folder = store.secrets.folder
        files = {p.name: p for p in folder.iterdir()}
        assert {oct(p.stat().st_mode & 0o777) for p in files.values()} == {"0o600"}
        past = time.time() - 2 * 3600  # older than the grace a just-kept text has
        for path in files.values():
            os.utime(path, (past, past))
        await store.prune(WORKSPACE, max_bytes=10**9, max_age_s=150.0, now=360.0)
        assert await store.get_text(old_blob) is None
        assert await store.get_text(kept_blob) == "TOKEN=kept\n"
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["key", kept_blob.removeprefix("secret:")]
        )
    finally:
        store.close()
