"""rein/checkpoints and rein/checkpointContent over the in-memory store."""

from __future__ import annotations

import pytest

from rein.checkpoints.model import CheckpointChange, FileChange, FileVersion
from rein.checkpoints.restore import RestoreRequest
from rein.checkpoints.views import checkpoint_content, list_checkpoints, net_changes
from rein.harness.errors import RestoreError
from tests.fakes.checkpoints import CheckpointJournal

SID = CheckpointJournal.SID


async def journal() -> CheckpointJournal:
    j = CheckpointJournal({"a.py": "a0\n", "gone.py": "g0\n", "tmp.py": "t0\n"})
    await j.run(
        "run-1",
        {
            1: {"a.py": "a1\n", "new.py": "n1\n"},
            2: {"a.py": "a2\n", "gone.py": None, "scratch.py": "s\n"},
            3: {"scratch.py": None},
        },
    )
    return j


async def test_runs_list_their_net_changes_and_their_turns() -> None:
    j = await journal()
    listing = await list_checkpoints(j.store, SID)
    assert listing["sessionId"] == SID and listing["bytes"] > 0
    (run,) = listing["runs"]
    assert (run["runId"], run["kind"], run["pruned"]) == ("run-1", "run", False)
    files = {f["path"]: f["change"] for f in run["files"]}
    # scratch.py was created and deleted again: no net change
    assert files == {"a.py": "modified", "new.py": "created", "gone.py": "deleted"}
    assert all(f["restorable"] for f in run["files"])
    turns = {t["turn"]: {f["path"]: f["change"] for f in t["files"]} for t in run["turns"]}
    assert turns == {
        1: {"a.py": "modified", "new.py": "created"},
        2: {"a.py": "modified", "gone.py": "deleted", "scratch.py": "created"},
        3: {"scratch.py": "deleted"},
    }


async def test_a_restore_is_listed_with_what_it_restored() -> None:
    j = await journal()
    result = await j.restorer().restore(RestoreRequest(SID, "run-1", turn=2))
    runs = (await list_checkpoints(j.store, SID))["runs"]
    restore = runs[-1]
    assert (restore["runId"], restore["kind"], restore["restoredRun"], restore["restoredTurn"]) == (
        result.restore_id,
        "restore",
        "run-1",
        2,
    )
    assert {f["path"]: f["change"] for f in restore["files"]} == {
        "a.py": "modified",
        "gone.py": "created",
    }


async def test_pruned_runs_and_unstored_files_are_not_restorable() -> None:
    j = await journal()
    await j.store.record(
        CheckpointChange(
            SID,
            "run-1",
            3,
            99,
            "command",
            (FileChange("out.bin", FileVersion.unstored("binary"), FileVersion.absent()),),
            5000.0,
        )
    )
    run = (await list_checkpoints(j.store, SID))["runs"][0]
    out = next(f for f in run["files"] if f["path"] == "out.bin")
    assert (out["restorable"], out["reason"]) == (False, "binary")
    await j.store.prune(j.ws.root, max_bytes=0, max_age_s=0, now=9000.0)
    run = (await list_checkpoints(j.store, SID))["runs"][0]
    assert run["pruned"] and run["prunedReason"].startswith("over the size limit")
    assert not any(f["restorable"] for f in run["files"])


async def test_review_states_are_shown_per_file() -> None:
    j = await journal()
    await j.store.set_review(SID, "run-1", "a.py", "pending")
    run = (await list_checkpoints(j.store, SID))["runs"][0]
    reviews = {f["path"]: f.get("review") for f in run["files"]}
    assert reviews == {"a.py": "pending", "new.py": None, "gone.py": None}


async def test_content_before_and_after_a_run_and_a_turn() -> None:
    j = await journal()

    async def content(side: str, path: str = "a.py", turn: int | None = None) -> dict[str, object]:
        return await checkpoint_content(j.store, SID, j.ws.root, "run-1", path, side, turn)  # type: ignore[arg-type]

    assert await content("before") == {"path": "a.py", "state": "text", "text": "a0\n"}
    assert await content("after") == {"path": "a.py", "state": "text", "text": "a2\n"}
    assert (await content("before", turn=2))["text"] == "a1\n"
    assert await content("after", "gone.py") == {"path": "gone.py", "state": "absent"}
    assert await content("before", "new.py") == {"path": "new.py", "state": "absent"}


@pytest.mark.parametrize(
    ("run_id", "path", "turn", "match"),
    [
        pytest.param("run-9", "a.py", None, "no checkpoint of run 'run-9'", id="unknown-run"),
        pytest.param("run-1", "../x.py", None, "outside the workspace", id="outside"),
        pytest.param("run-1", "tmp.py", None, "did not change tmp.py", id="unchanged"),
        pytest.param("run-1", "new.py", 2, "did not change new.py in turn 2", id="turn"),
    ],
)
async def test_content_refuses_bad_requests(
    run_id: str, path: str, turn: int | None, match: str
) -> None:
    j = await journal()
    with pytest.raises(RestoreError, match=match):
        await checkpoint_content(j.store, SID, j.ws.root, run_id, path, "before", turn)


async def test_content_of_a_pruned_run_is_refused() -> None:
    j = await journal()
    await j.store.prune(j.ws.root, max_bytes=0, max_age_s=0, now=9000.0)
    with pytest.raises(RestoreError, match="was dropped"):
        await checkpoint_content(j.store, SID, j.ws.root, "run-1", "a.py", "before")


def test_a_rename_is_one_renamed_entry_and_one_deleted() -> None:
    change = CheckpointChange(
        SID,
        "r",
        1,
        1,
        "tool",
        (
            FileChange("old.py", FileVersion.of_text("x"), FileVersion.absent()),
            FileChange("new.py", FileVersion.absent(), FileVersion.of_text("x"), "old.py"),
        ),
        1.0,
    )
    net = net_changes([change])
    assert (net["new.py"].kind, net["new.py"].renamed_from) == ("renamed", "old.py")
    assert net["old.py"].kind == "deleted"


async def test_a_restore_that_wrote_nothing_is_not_listed() -> None:
    j = await journal()
    await j.restorer().restore(RestoreRequest(SID, "run-1"))
    await j.restorer().restore(RestoreRequest(SID, "run-1"))  # everything already restored
    assert len(await j.store.runs(SID)) == 3
    assert [r["kind"] for r in (await list_checkpoints(j.store, SID))["runs"]] == ["run", "restore"]
