"""A change of several files as ONE mutation generation
(:class:`~rein.harness.ports.MultiFileWorkspace`): the disk writes, creates
and deletes every file and records one generation; a stale file refuses the
whole change before anything is written; a failure half-way puts back what
was written; the announcing wrapper calls its hooks once with every path,
and the checkpoints keep it as one change of every file."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from rein.checkpoints.capture import CheckpointCapture
from rein.checkpoints.model import FileChange, FileVersion, MemoryCheckpointStore
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import FileChangedError, ToolError
from rein.harness.events import RunStart
from rein.harness.file_updates import PartlyAppliedError, apply_in_turn
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import AppliedChange, FileUpdate, Mutation
from rein.harness.run.run_record import RunRecord, recording
from tests.fakes.workspace import FakeWorkspace


class Plain:
    """A Workspace without apply_changes of its own."""

    def __init__(self) -> None:
        self.fake = FakeWorkspace({"a.py": "1", "b.py": "2"})
        self.root = self.fake.root

    @property
    def generation(self) -> int:
        return self.fake.generation

    async def read_text(self, path: str):  # type: ignore[no-untyped-def]
        return await self.fake.read_text(path)

    async def exists(self, path: str) -> bool:
        return await self.fake.exists(path)

    async def write_text(self, path: str, text: str, **kw):  # type: ignore[no-untyped-def]
        return await self.fake.write_text(path, text, **kw)

    async def delete(self, path: str) -> Mutation:
        return await self.fake.delete(path)

    async def rename(self, old: str, new: str) -> Mutation:
        return await self.fake.rename(old, new)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "b.py").write_text("b = 1\n")
    (tmp_path / "gone.py").write_text("g = 1\n")
    return tmp_path


async def test_the_disk_applies_writes_creates_and_deletes_as_one_generation(
    folder: Path,
) -> None:
    disk = DiskWorkspace(folder)
    mutation = await disk.apply_changes(
        [
            FileUpdate("a.py", "a = 2\n", "a = 1\n"),
            FileUpdate("new/c.py", "c = 1\n"),
            FileUpdate("gone.py", None, "g = 1\n"),
        ]
    )
    assert mutation == Mutation(1, ("a.py", "new/c.py", "gone.py"))
    assert disk.mutations == [mutation]
    assert (folder / "a.py").read_text() == "a = 2\n"
    assert (folder / "new/c.py").read_text() == "c = 1\n"
    assert not (folder / "gone.py").exists()


async def test_a_stale_file_refuses_the_whole_change_and_a_failure_puts_back(
    folder: Path,
) -> None:
    disk = DiskWorkspace(folder)
    with pytest.raises(FileChangedError, match=r"b\.py changed since it was read"):
        await disk.apply_changes(
            [FileUpdate("a.py", "a = 2\n", "a = 1\n"), FileUpdate("b.py", "b = 2\n", "stale\n")]
        )
    assert (folder / "a.py").read_text() == "a = 1\n"
    # b.py/x.py cannot be made (b.py is a file): a.py, written first, is put back.
    with pytest.raises(ToolError) as failed:
        await disk.apply_changes(
            [FileUpdate("a.py", "a = 2\n", "a = 1\n"), FileUpdate("b.py/x.py", "x\n")]
        )
    assert str(failed.value).startswith("Could not write b.py/x.py (Cannot write b.py/x.py: ")
    assert str(failed.value).endswith("Put back as they were: a.py. Nothing stays changed.")
    assert (folder / "a.py").read_text() == "a = 1\n"
    assert disk.mutations == []
    with pytest.raises(ToolError, match=r"names a\.py twice"):
        await disk.apply_changes([FileUpdate("a.py", "1"), FileUpdate("a.py", "2")])


async def test_the_wrapper_announces_one_change_and_checkpoints_keep_it_as_one(
    folder: Path,
) -> None:
    log = MutationLog()
    workspace = TrackedWorkspace(DiskWorkspace(folder), log)
    before: list[tuple[str, ...]] = []
    after: list[AppliedChange] = []

    async def on_before(paths: tuple[str, ...]) -> None:
        before.append(paths)

    async def on_after(change: AppliedChange) -> None:
        after.append(change)

    workspace.before_change(on_before)
    workspace.after_change(on_after)
    store = MemoryCheckpointStore()
    capture = CheckpointCapture(store, workspace, "ses", mutations=log)
    capture.attach()
    capture.on_event(RunStart(run_id="run_1", prompt="rename"))
    record = RunRecord(run_id="run_1")
    record.turn = 1
    with recording(record):
        mutation = await workspace.apply_changes(
            [FileUpdate("a.py", "a = 2\n", "a = 1\n"), FileUpdate("gone.py", None, "g = 1\n")]
        )
    assert before == [("a.py", "gone.py")]
    assert after == [AppliedChange(mutation, "files", texts=("a = 2\n", None))]
    assert log.since(0) == [mutation]
    [change] = await store.changes("ses")
    assert change.generation == mutation.generation
    assert list(change.files) == [
        FileChange("a.py", FileVersion.of_text("a = 1\n"), FileVersion.of_text("a = 2\n")),
        FileChange("gone.py", FileVersion.of_text("g = 1\n"), FileVersion.absent()),
    ]


async def test_a_plain_workspace_is_written_in_turn_and_recorded_once() -> None:
    plain = Plain()
    log = MutationLog()
    workspace = TrackedWorkspace(plain, log)
    mutation = await workspace.apply_changes(
        [FileUpdate("a.py", "10", "1"), FileUpdate("b.py", None, "2")]
    )
    assert plain.fake.files == {"a.py": "10"}
    assert [m.paths for m in log.since(0)] == [("a.py", "b.py")]
    assert mutation.generation == 2  # the last of the plain workspace's own


async def test_a_cancellation_part_way_puts_back_what_was_written() -> None:
    """The run is aborted while the second file is written (it landed):
    both written files are put back before the cancellation goes on."""
    files: dict[str, str | None] = {"a.py": "1", "b.py": "2", "c.py": "3"}
    scope = anyio.CancelScope()

    async def read(path: str) -> str | None:
        return files[path]

    async def write(path: str, text: str | None, expected: str | None) -> None:
        if expected is not None and files[path] != expected:
            raise FileChangedError(path)
        files[path] = text
        if path == "b.py" and text == "20":
            scope.cancel()
            await anyio.lowlevel.checkpoint()

    changes = [FileUpdate(p, f"{n}0", n) for p, n in (("a.py", "1"), ("b.py", "2"), ("c.py", "3"))]
    with scope:
        await apply_in_turn(changes, read, write)
    assert scope.cancelled_caught
    assert files == {"a.py": "1", "b.py": "2", "c.py": "3"}


async def test_files_a_failed_change_leaves_changed_are_recorded_and_announced() -> None:
    """b.py cannot be written and a.py, written first, was changed again by
    the person meanwhile (so it is not put back): a.py is a recorded,
    announced change."""
    plain = Plain()
    log = MutationLog()
    workspace = TrackedWorkspace(plain, log)
    after: list[AppliedChange] = []

    async def on_after(change: AppliedChange) -> None:
        after.append(change)

    workspace.after_change(on_after)
    write = plain.write_text

    async def failing(path: str, text: str, **kw):  # type: ignore[no-untyped-def]
        if path == "b.py":
            plain.fake.files["a.py"] = "person"
            raise ToolError("disk full")
        return await write(path, text, **kw)

    plain.write_text = failing  # type: ignore[method-assign]
    with pytest.raises(PartlyAppliedError) as failed:
        await workspace.apply_changes(
            [FileUpdate("a.py", "10", "1"), FileUpdate("b.py", "20", "2")]
        )
    assert failed.value.changed == ("a.py",)
    assert "Still changed (they changed again, so they were left alone): a.py." in str(failed.value)
    [mutation] = log.since(0)
    assert mutation.paths == ("a.py",)
    assert after == [AppliedChange(mutation, "files", texts=("person",))]
