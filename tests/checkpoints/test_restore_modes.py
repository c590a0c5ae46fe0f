"""Modes and links in checkpoints, over real files: captured with each
version, brought back by a restore (also one interrupted between the text
and the mode), and a link that cannot be made is said, never written as a
regular file. The whole command-line path: tests/e2e/test_undo_modes_cli.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rein.checkpoints.capture import CheckpointCapture
from rein.checkpoints.file_meta import DiskFileMeta, NoFileMeta
from rein.checkpoints.model import MemoryCheckpointStore
from rein.checkpoints.restore import Restorer, RestoreRequest
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.events import RunStart
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.run.run_record import RunRecord, recording

SESSION = "ses_modes"


class Killed(BaseException):
    """The process ends here (as SIGKILL would: nothing after it runs)."""


class KilledAtTheMode(DiskFileMeta):
    async def set_mode(self, path: str, mode: int) -> None:
        raise Killed


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


async def captured_run(
    root: Path, store: MemoryCheckpointStore, *deleted: str, written: dict[str, str] | None = None
) -> None:
    """A run of the session that deletes ``deleted`` and writes ``written``
    through the workspace."""
    log = MutationLog()
    workspace = TrackedWorkspace(DiskWorkspace(root), log)
    capture = CheckpointCapture(store, workspace, SESSION, mutations=log)
    capture.attach()
    capture.on_event(RunStart(run_id="run_1", prompt="delete"))
    record = RunRecord(run_id="run_1")
    record.turn = 1
    with recording(record):
        for path in deleted:
            await workspace.delete(path)
        for path, text in (written or {}).items():
            await workspace.write_text(path, text)
    capture.detach()


async def test_versions_keep_the_mode_and_the_link(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo\n")
    os.chmod(tmp_path / "run.sh", 0o750)
    os.symlink("run.sh", tmp_path / "link")
    store = MemoryCheckpointStore()
    await captured_run(tmp_path, store, "run.sh", "link")
    [script], [link] = [c.files for c in await store.changes(SESSION)]
    assert (script.before.mode, script.before.link, script.kind) == (0o750, None, "deleted")
    # The link's own: its target, no mode (its content was the script's).
    assert (link.before.mode, link.before.link, link.kind) == (None, "run.sh", "deleted")


async def test_a_link_that_cannot_be_made_is_a_conflict_never_a_regular_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "target.txt").write_text("t\n")
    os.symlink("target.txt", tmp_path / "link.txt")
    store = MemoryCheckpointStore()
    await captured_run(tmp_path, store, "link.txt")
    restorer = Restorer(store, DiskWorkspace(tmp_path), meta=NoFileMeta())
    result = await restorer.restore(RestoreRequest(SESSION, "run_1"))
    assert result.restored == ()
    [conflict] = result.conflicts
    assert conflict.path == "link.txt"
    assert "symbolic link to target.txt" in conflict.reason
    assert "nothing was written in its place" in conflict.reason
    assert not (tmp_path / "link.txt").is_symlink()
    assert not (tmp_path / "link.txt").exists()


async def test_a_restore_stopped_before_the_mode_sets_it_when_run_again(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo\n")
    os.chmod(tmp_path / "run.sh", 0o755)
    store = MemoryCheckpointStore()
    await captured_run(tmp_path, store, "run.sh")
    with pytest.raises(Killed):  # a restore killed between its write and its chmod
        await Restorer(store, DiskWorkspace(tmp_path), meta=KilledAtTheMode(tmp_path)).restore(
            RestoreRequest(SESSION, "run_1")
        )
    assert (tmp_path / "run.sh").read_text() == "echo\n" and mode(tmp_path / "run.sh") != 0o755
    result = await Restorer(store, DiskWorkspace(tmp_path)).restore(
        RestoreRequest(SESSION, "run_1")
    )
    assert [(f.path, f.change, f.detail) for f in result.restored] == [
        ("run.sh", "modified", "mode 755")
    ]
    assert mode(tmp_path / "run.sh") == 0o755 and result.conflicts == ()
    again = await Restorer(store, DiskWorkspace(tmp_path)).restore(RestoreRequest(SESSION, "run_1"))
    assert again.already_restored == ("run.sh",) and again.restored == ()


async def test_a_link_made_again_leaves_what_it_leads_to_alone(tmp_path: Path) -> None:
    (tmp_path / "Y.txt").write_text("orig\n")
    os.symlink("Y.txt", tmp_path / "L")
    store = MemoryCheckpointStore()
    await captured_run(tmp_path, store, "L")
    # The run never touched Y.txt: the person's edit of it is theirs.
    (tmp_path / "Y.txt").write_text("the person's edit\n")
    result = await Restorer(store, DiskWorkspace(tmp_path)).restore(
        RestoreRequest(SESSION, "run_1")
    )
    assert [(f.path, f.detail) for f in result.restored] == [("L", "a symbolic link to Y.txt")]
    assert os.readlink(tmp_path / "L") == "Y.txt" and result.conflicts == ()
    assert (tmp_path / "Y.txt").read_text() == "the person's edit\n"
    again = await Restorer(store, DiskWorkspace(tmp_path)).restore(RestoreRequest(SESSION, "run_1"))
    assert again.already_restored == ("L",) and again.restored == () and again.conflicts == ()


async def test_a_mode_the_person_set_since_the_run_is_a_conflict(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo\n")
    os.chmod(script, 0o755)
    store = MemoryCheckpointStore()
    await captured_run(tmp_path, store, "run.sh")
    # The person makes it again, the same text, their own mode.
    script.write_text("echo\n")
    os.chmod(script, 0o700)
    result = await Restorer(store, DiskWorkspace(tmp_path)).restore(
        RestoreRequest(SESSION, "run_1")
    )
    assert result.restored == () and [c.path for c in result.conflicts] == ["run.sh"]
    assert mode(script) == 0o700


async def test_a_conflict_about_a_mode_says_the_modes(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo\n")
    os.chmod(script, 0o755)
    store = MemoryCheckpointStore()
    await captured_run(tmp_path, store, written={"run.sh": "echo hi\n"})
    os.chmod(script, 0o600)  # the person's, after the run
    result = await Restorer(store, DiskWorkspace(tmp_path)).restore(
        RestoreRequest(SESSION, "run_1")
    )
    [conflict] = result.conflicts
    assert conflict.reason == "its mode changed after the run (mode 600 now, 755 after the run)"
    script.write_text("echo again\n")
    result = await Restorer(store, DiskWorkspace(tmp_path)).restore(
        RestoreRequest(SESSION, "run_1")
    )
    [conflict] = result.conflicts
    assert (
        conflict.reason == "changed after the run, its mode too (mode 600 now, 755 after the run)"
    )
    assert "+echo again" in conflict.diff and mode(script) == 0o600
