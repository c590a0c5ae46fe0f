"""A symbolic link a run wrote through, over real files: the restore brings
the link back as the link and what it leads to as it was before the run,
also when the run deleted the link and made it again before writing
through it (``rm L; ln -s Y L; echo new > L``); never a write through a
link leading out of the workspace. Links made again and not written
through: tests/checkpoints/test_restore_modes.py."""

from __future__ import annotations

import os
from pathlib import Path

from rein.checkpoints.capture import CheckpointCapture
from rein.checkpoints.model import (
    CheckpointChange,
    CheckpointRun,
    FileChange,
    FileVersion,
    MemoryCheckpointStore,
)
from rein.checkpoints.restore import Restorer, RestoreRequest, RestoreResult
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.events import RunStart
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.run.run_record import RunRecord, recording

SESSION = "ses_links"


async def run_through_link(root: Path, store: MemoryCheckpointStore, *, remove: bool) -> None:
    """A run of the session that writes "new" through the link L to Y.txt;
    first (``remove``) it deletes L and makes it again, as ``ln -s`` would."""
    log = MutationLog()
    workspace = TrackedWorkspace(DiskWorkspace(root), log)
    capture = CheckpointCapture(store, workspace, SESSION, mutations=log)
    capture.attach()
    capture.on_event(RunStart(run_id="run_1", prompt="links"))
    record = RunRecord(run_id="run_1")
    record.turn = 1
    with recording(record):
        if remove:
            await workspace.delete("L")
            os.symlink("Y.txt", root / "L")
        await workspace.write_text("L", "new\n")
    capture.detach()


async def command_removes_the_link(root: Path, store: MemoryCheckpointStore) -> None:
    """Then the run's command removed L (as the capture records it)."""
    os.unlink(root / "L")
    await store.record(
        CheckpointChange(
            session_id=SESSION,
            run_id="run_1",
            turn=2,
            generation=2,
            origin="command",
            files=(
                FileChange(
                    "L",
                    FileVersion.of_text("new\n").with_meta(None, "Y.txt"),
                    FileVersion.absent(),
                ),
            ),
            at=1e10,
        )
    )


def linked(root: Path) -> Path:
    (root / "Y.txt").write_text("orig\n")
    os.symlink("Y.txt", root / "L")
    return root


async def restore(root: Path, store: MemoryCheckpointStore) -> RestoreResult:
    return await Restorer(store, DiskWorkspace(root)).restore(RestoreRequest(SESSION, "run_1"))


async def test_a_link_made_again_and_written_through_gets_back_what_it_led_to(
    tmp_path: Path,
) -> None:
    store = MemoryCheckpointStore()
    await run_through_link(linked(tmp_path), store, remove=True)
    assert (tmp_path / "Y.txt").read_text() == "new\n"
    result = await restore(tmp_path, store)
    assert [(f.path, f.detail) for f in result.restored] == [("L", "a symbolic link to Y.txt")]
    assert result.conflicts == () and result.already_restored == ()
    assert os.readlink(tmp_path / "L") == "Y.txt"
    assert (tmp_path / "Y.txt").read_text() == "orig\n"
    again = await restore(tmp_path, store)
    assert again.already_restored == ("L",) and again.restored == () and again.conflicts == ()


async def test_a_link_written_through_and_then_removed_comes_back_with_what_it_led_to(
    tmp_path: Path,
) -> None:
    store = MemoryCheckpointStore()
    await run_through_link(linked(tmp_path), store, remove=False)
    await command_removes_the_link(tmp_path, store)
    result = await restore(tmp_path, store)
    assert [(f.path, f.detail) for f in result.restored] == [("L", "a symbolic link to Y.txt")]
    assert os.readlink(tmp_path / "L") == "Y.txt"
    assert (tmp_path / "Y.txt").read_text() == "orig\n"


async def test_what_a_link_made_again_leads_to_is_left_when_the_person_changed_it(
    tmp_path: Path,
) -> None:
    store = MemoryCheckpointStore()
    await run_through_link(linked(tmp_path), store, remove=False)
    await command_removes_the_link(tmp_path, store)
    (tmp_path / "Y.txt").write_text("the person's\n")
    result = await restore(tmp_path, store)
    [restored] = result.restored
    assert restored.path == "L" and "changed since the run" in restored.detail
    assert os.readlink(tmp_path / "L") == "Y.txt"
    assert (tmp_path / "Y.txt").read_text() == "the person's\n"


async def test_a_link_leading_out_of_the_workspace_is_never_written_through(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("new\n")
    os.symlink("../outside.txt", root / "L")
    store = MemoryCheckpointStore()
    old = await store.put_text("orig\n")
    new = await store.put_text("new\n")
    # A checkpoint saying a run wrote through it (no Rein tool can).
    await store.begin_run(
        CheckpointRun(
            session_id=SESSION,
            run_id="run_1",
            workspace=str(root),
            kind="run",
            title="links",
            started_at=1.0,
        )
    )
    await store.record(
        CheckpointChange(
            session_id=SESSION,
            run_id="run_1",
            turn=1,
            generation=1,
            origin="tool",
            files=(
                FileChange(
                    "L",
                    FileVersion("text", old).with_meta(None, "../outside.txt"),
                    FileVersion("text", new).with_meta(None, "../outside.txt"),
                ),
            ),
            at=2.0,
        )
    )
    result = await restore(root, store)
    assert result.restored == ()
    [conflict] = result.conflicts
    assert conflict.path == "L"
    assert outside.read_text() == "new\n"
    assert os.readlink(root / "L") == "../outside.txt"
