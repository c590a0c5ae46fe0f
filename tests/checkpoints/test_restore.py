"""The restore engine over the in-memory checkpoint store and workspace."""

from __future__ import annotations

import pytest

from rein.checkpoints.model import (
    CheckpointChange,
    CheckpointRun,
    FileChange,
    FileVersion,
)
from rein.checkpoints.restore import (
    RestoreRequest,
    in_scope,
    restore_note,
    workspace_path,
)
from rein.harness.errors import RestoreError, ToolError
from rein.harness.ports import Mutation
from tests.fakes.checkpoints import CheckpointJournal as Journal

SID = Journal.SID


ORIGINAL = {"keep.py": "x = 1\n", "mod.py": "a = 1\nb = 2\n", "gone.py": "old\n"}


async def three_files() -> Journal:
    j = Journal(ORIGINAL)
    await j.run("run-1", {1: {"mod.py": "a = 10\nb = 2\n", "new.py": "n = 1\n", "gone.py": None}})
    return j


async def test_a_run_that_created_modified_and_deleted_is_undone_exactly() -> None:
    j = await three_files()
    result = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    assert j.ws.files == ORIGINAL
    assert {(f.path, f.change) for f in result.restored} == {
        ("mod.py", "modified"),
        ("new.py", "deleted"),
        ("gone.py", "created"),
    }
    assert result.conflicts == () and result.skipped == () and result.already_restored == ()


async def test_the_restore_is_a_checkpoint_run_journaled_before_its_writes() -> None:
    j = await three_files()
    seen: list[list[str]] = []
    real_write = j.ws.write_text

    async def spy(path: str, text: str, *, expected_version: int | None = None) -> Mutation:
        seen.append([r.run_id for r in await j.store.runs(SID)])
        seen.append([c.run_id for c in await j.store.changes(SID)])
        return await real_write(path, text, expected_version=expected_version)

    j.ws.write_text = spy  # type: ignore[method-assign]
    result = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    assert seen and "restore-1" in seen[0] and "restore-1" in seen[1]
    run = (await j.store.runs(SID))[-1]
    assert (run.run_id, run.kind, run.restored_run, run.restored_turn) == (
        result.restore_id,
        "restore",
        "run-1",
        None,
    )
    (change,) = await j.store.changes(SID, result.restore_id)
    assert (change.turn, change.origin) == (0, "restore")
    by_path = {f.path: f for f in change.files}
    assert by_path["gone.py"].before == FileVersion.absent()
    assert by_path["gone.py"].after == FileVersion.of_text("old\n")
    assert by_path["new.py"].after == FileVersion.absent()


async def test_undo_of_the_restore_puts_the_run_back() -> None:
    j = await three_files()
    after_run = dict(j.ws.files)
    first = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    undo = await j.restorer().restore(RestoreRequest(SID, first.restore_id))
    assert j.ws.files == after_run
    assert {(f.path, f.change) for f in undo.restored} == {
        ("mod.py", "modified"),
        ("new.py", "created"),
        ("gone.py", "deleted"),
    }
    # and restoring the run again after the undo works from the new state
    await j.restorer().restore(RestoreRequest(SID, "run-1"))
    assert j.ws.files == ORIGINAL


async def test_a_restore_run_twice_finds_everything_already_restored() -> None:
    j = await three_files()
    await j.restorer().restore(RestoreRequest(SID, "run-1"))
    again = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    assert again.restored == () and again.conflicts == ()
    assert sorted(again.already_restored) == ["gone.py", "mod.py", "new.py"]
    assert j.ws.files == ORIGINAL
    assert await j.store.changes(SID, again.restore_id) == []


async def test_restore_to_a_turn_keeps_the_earlier_turns() -> None:
    j = Journal({"a.py": "a0\n", "b.py": "b0\n"})
    await j.run("run-1", {1: {"a.py": "a1\n"}, 2: {"a.py": "a2\n", "b.py": "b2\n"}, 3: {}})
    result = await j.restorer().restore(RestoreRequest(SID, "run-1", turn=2))
    assert j.ws.files == {"a.py": "a1\n", "b.py": "b0\n"}
    assert sorted(f.path for f in result.restored) == ["a.py", "b.py"]
    assert (await j.store.runs(SID))[-1].restored_turn == 2


async def test_a_restore_covers_the_later_runs_of_the_session() -> None:
    j = Journal({"a.py": "a0\n", "b.py": "b0\n"})
    await j.run("run-1", {1: {"a.py": "a1\n"}})
    await j.run("run-2", {1: {"a.py": "a2\n", "b.py": "b2\n"}})
    await j.restorer().restore(RestoreRequest(SID, "run-2"))
    assert j.ws.files == {"a.py": "a1\n", "b.py": "b0\n"}
    await j.restorer().restore(RestoreRequest(SID, "run-1"))
    assert j.ws.files == {"a.py": "a0\n", "b.py": "b0\n"}


async def test_runs_order_the_changes_not_generations() -> None:
    """``rein run`` processes count generations from 1 again: a later run
    may have lower generations than an earlier one."""
    runs = [
        CheckpointRun(SID, "r1", "/w", "run", "", 1.0),
        CheckpointRun(SID, "r2", "/w", "run", "", 2.0),
    ]
    late = CheckpointChange(SID, "r2", 1, 1, "tool", (), 5.0)
    early = CheckpointChange(SID, "r1", 1, 7, "tool", (), 3.0)
    assert in_scope(runs, [late, early], "r1", None) == [early, late]
    assert in_scope(runs, [late, early], "r2", None) == [late]


async def test_a_file_the_person_changed_is_a_conflict_and_the_others_are_restored() -> None:
    j = await three_files()
    j.ws.person_edits("mod.py", "a = 10\nb = 2\nmine = 3\n")
    result = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    assert j.ws.buffers["mod.py"][0] == "a = 10\nb = 2\nmine = 3\n"
    assert "new.py" not in j.ws.files and j.ws.files["gone.py"] == "old\n"
    (conflict,) = result.conflicts
    assert conflict.path == "mod.py" and conflict.reason == "changed after the run"
    assert conflict.checkpoint_text == "a = 10\nb = 2\n"
    assert conflict.current_text == "a = 10\nb = 2\nmine = 3\n"
    assert "+mine = 3" in conflict.diff and "(checkpoint)" in conflict.diff
    (change,) = await j.store.changes(SID, result.restore_id)
    assert "mod.py" not in {f.path for f in change.files}


async def test_a_file_deleted_or_recreated_by_the_person_is_a_conflict() -> None:
    j = await three_files()
    del j.ws.files["mod.py"]
    j.ws.files["gone.py"] = "person's\n"
    result = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    reasons = {c.path: c.reason for c in result.conflicts}
    assert reasons == {"mod.py": "deleted after the run", "gone.py": "created again after the run"}
    assert j.ws.files == {"keep.py": "x = 1\n", "gone.py": "person's\n"}


async def test_an_edit_the_editor_refuses_becomes_a_conflict() -> None:
    j = await three_files()
    j.ws.refuse_next = "mod.py is at version 3, not 2"
    result = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    (conflict,) = result.conflicts
    assert conflict.path == "mod.py" and "refused" in conflict.reason
    assert j.ws.files["mod.py"] == "a = 10\nb = 2\n"


async def test_an_unstored_target_is_skipped_and_the_rest_restored() -> None:
    j = Journal({"a.py": "a0\n"})
    await j.run("run-1", {1: {"a.py": "a1\n"}})
    j.ws.files["big.txt"] = "B" * 10
    await j.store.record(
        CheckpointChange(
            SID,
            "run-1",
            1,
            9,
            "tool",
            (
                FileChange(
                    "big.txt", FileVersion.unstored("too large: 3000 KB"), FileVersion.absent()
                ),
            ),
            2000.0,
        )
    )
    del j.ws.files["big.txt"]
    result = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    assert [(s.path, s.reason) for s in result.skipped] == [("big.txt", "too large: 3000 KB")]
    assert j.ws.files == {"a.py": "a0\n"}


async def test_an_interrupted_restore_is_completed_by_running_it_again() -> None:
    j = Journal({f"f{i}.py": f"old {i}\n" for i in range(5)})
    await j.run("run-1", {1: {f"f{i}.py": f"new {i}\n" for i in range(5)}})

    class Killed(BaseException):
        pass

    real_write = j.ws.write_text
    writes = 0

    async def dies_after_two(
        path: str, text: str, *, expected_version: int | None = None
    ) -> Mutation:
        nonlocal writes
        if writes == 2:
            raise Killed
        writes += 1
        return await real_write(path, text, expected_version=expected_version)

    j.ws.write_text = dies_after_two  # type: ignore[method-assign]
    with pytest.raises(Killed):
        await j.restorer().restore(RestoreRequest(SID, "run-1"))
    assert sorted(j.ws.files.values()) == ["new 2\n", "new 3\n", "new 4\n", "old 0\n", "old 1\n"]
    j.ws.write_text = real_write  # type: ignore[method-assign]
    again = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    assert again.conflicts == ()
    assert sorted(again.already_restored) == ["f0.py", "f1.py"]
    assert sorted(f.path for f in again.restored) == ["f2.py", "f3.py", "f4.py"]
    assert j.ws.files == {f"f{i}.py": f"old {i}\n" for i in range(5)}


async def test_the_person_typing_after_an_interrupted_restore_still_conflicts() -> None:
    j = Journal({"a.py": "a0\n"})
    await j.run("run-1", {1: {"a.py": "a1\n"}})

    async def refuse(path: str, text: str, *, expected_version: int | None = None) -> Mutation:
        raise KeyboardInterrupt

    real_write = j.ws.write_text
    j.ws.write_text = refuse  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        await j.restorer().restore(RestoreRequest(SID, "run-1"))
    j.ws.write_text = real_write  # type: ignore[method-assign]
    j.ws.files["a.py"] = "typed\n"
    result = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    assert [c.path for c in result.conflicts] == ["a.py"]
    assert j.ws.files["a.py"] == "typed\n"


# ------------------------------------------------------------- bad input


async def refused(j: Journal, request: RestoreRequest, match: str) -> None:
    files, runs = dict(j.ws.files), await j.run_ids()
    with pytest.raises(RestoreError, match=match):
        await j.restorer().restore(request)
    assert j.ws.files == files and await j.run_ids() == runs


@pytest.mark.parametrize(
    ("request_", "match"),
    [
        pytest.param(
            RestoreRequest(SID, "run-9"), "no checkpoint of run 'run-9'", id="unknown-run"
        ),
        pytest.param(RestoreRequest("ses_other", "run-1"), "no checkpoint", id="other-session"),
        pytest.param(
            RestoreRequest(SID, "run-1", paths=("../etc/passwd",)),
            "outside the workspace",
            id="dotdot",
        ),
        pytest.param(
            RestoreRequest(SID, "run-1", paths=("/elsewhere/x.py",)),
            "outside the workspace",
            id="abs",
        ),
        pytest.param(
            RestoreRequest(SID, "run-1", paths=("keep.py",)),
            "was not changed by run",
            id="unchanged",
        ),
        pytest.param(RestoreRequest(SID, "run-1", turn=4), "changed no files in turn 4", id="turn"),
        pytest.param(RestoreRequest(SID, "run-1", turn=0), "turn must be 1 or more", id="turn-0"),
    ],
)
async def test_bad_requests_are_refused_and_change_nothing(
    request_: RestoreRequest, match: str
) -> None:
    await refused(await three_files(), request_, match)


async def test_a_pruned_run_is_refused_and_nothing_changes() -> None:
    j = await three_files()
    await j.store.prune(j.ws.root, max_bytes=0, max_age_s=0, now=5000.0)
    await refused(j, RestoreRequest(SID, "run-1"), "was dropped .*over the size limit")


async def test_content_gone_from_the_store_is_refused_before_any_write() -> None:
    j = Journal({"a.py": "a0\n", "b.py": "b0\n"})
    await j.run("run-1", {1: {"a.py": "a1\n", "b.py": "b1\n"}})
    del j.store._blobs[FileVersion.of_text("b0\n").blob]  # type: ignore[index]
    await refused(j, RestoreRequest(SID, "run-1"), "stored content of b.py is gone")


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param("binary", id="binary"),
        pytest.param("too large: 3000 KB, over checkpoints.maxFileKb 2048", id="too-large"),
    ],
)
async def test_an_unstored_file_asked_for_by_path_is_refused(reason: str) -> None:
    j = Journal({"a.py": "a0\n"})
    await j.run("run-1", {1: {"a.py": "a1\n"}})
    j.ws.files["blob.bin"] = "new"
    await j.store.record(
        CheckpointChange(
            SID,
            "run-1",
            1,
            5,
            "tool",
            (FileChange("blob.bin", FileVersion.unstored(reason), FileVersion.of_text("new")),),
            3000.0,
        )
    )
    await refused(j, RestoreRequest(SID, "run-1", paths=("blob.bin", "a.py")), reason)


async def test_the_paths_limit_the_restore() -> None:
    j = await three_files()
    result = await j.restorer().restore(
        RestoreRequest(SID, "run-1", paths=(f"{j.ws.root}/new.py", "./gone.py"))
    )
    assert sorted(f.path for f in result.restored) == ["gone.py", "new.py"]
    assert j.ws.files["mod.py"] == "a = 10\nb = 2\n"


def test_workspace_paths() -> None:
    assert workspace_path("/w", "a/../b.py") == "b.py"
    assert workspace_path("/w", "/w/src/x.py") == "src/x.py"
    for bad in ("/w", "/wx/a.py", "..", "a/../../b", ""):
        with pytest.raises(RestoreError):
            workspace_path("/w", bad)


async def test_an_unreadable_current_file_is_a_conflict() -> None:
    j = await three_files()

    real_read = j.ws.read_text

    async def binary(path: str):  # type: ignore[no-untyped-def]
        if path == "mod.py":
            raise ToolError("mod.py is a binary file; it cannot be read as text")
        return await real_read(path)

    j.ws.read_text = binary  # type: ignore[method-assign]
    result = await j.restorer().restore(RestoreRequest(SID, "run-1"))
    (conflict,) = result.conflicts
    assert "not text now" in conflict.reason and conflict.current_text is None


def test_the_note_says_what_was_restored_and_what_conflicted() -> None:
    from rein.checkpoints.restore import Conflict, RestoredFile, RestoreResult

    note = restore_note(
        RestoreResult(
            "restore-1",
            SID,
            "run-1",
            2,
            restored=(RestoredFile("a.py", "modified"),),
            conflicts=(Conflict("b.py", "changed after the run", "", "x", "y"),),
        )
    )
    assert "before turn 2 of run run-1" in note
    assert "a.py (modified again)" in note
    assert "changed them after the run: b.py" in note
