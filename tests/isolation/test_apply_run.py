"""An isolated run brought back as a run of the person's session
(:func:`rein.isolation.apply_run.bring_back_as_run`), over fakes: the clean
files are one change (one generation), recorded as one checkpoint run of
the session with every file; without gates the verdict says so; with
nothing applied there is no verdict."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from rein.checkpoints.capture import CheckpointCapture
from rein.checkpoints.model import MemoryCheckpointStore
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.file_updates import PartlyAppliedError
from rein.harness.gating.dependencies import DependencyCoordinator
from rein.harness.gating.gates import DependencyGate, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import FileUpdate, Mutation
from rein.isolation.apply_run import ApplyVerdict, bring_back_as_run
from rein.isolation.bring_back import (
    RunChange,
    apply_changes,
    hunk_ids,
    hunks_json,
    review_changes,
    unknown_hunks,
)
from tests.fakes.commands import FakeCommandRunner
from tests.fakes.workspace import FakeWorkspace


async def test_the_clean_files_are_one_checkpointed_change_of_a_run() -> None:
    fake = FakeWorkspace({"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "mine\n"})
    log = MutationLog()
    workspace = TrackedWorkspace(fake, log)
    store = MemoryCheckpointStore()
    capture = CheckpointCapture(store, workspace, "ses_person", mutations=log)
    capture.attach()
    changes = [
        RunChange("a.py", b"a = 1\n", b"a = 2\n"),
        RunChange("b.py", b"b = 1\n", None),
        RunChange("c.py", b"theirs base\n", b"theirs\n"),  # the folder changed it: a conflict
        RunChange("new.py", None, b"n = 1\n"),
    ]
    brought = await bring_back_as_run(
        changes, workspace, gates=None, capture=capture, title="apply ses_iso"
    )
    assert brought.result.applied == ["a.py", "b.py", "new.py"]
    assert [c.path for c in brought.result.conflicts] == ["c.py"]
    assert fake.files == {"a.py": "a = 2\n", "c.py": "mine\n", "new.py": "n = 1\n"}
    assert [m.paths for m in log.since(0)] == [("a.py", "b.py", "new.py")]
    [run] = await store.runs("ses_person")
    assert (run.run_id, run.title, run.kind) == (brought.run_id, "apply ses_iso", "run")
    [change] = await store.changes("ses_person", brought.run_id)
    assert [(f.path, f.kind) for f in change.files] == [
        ("a.py", "modified"),
        ("b.py", "deleted"),
        ("new.py", "created"),
    ]
    assert brought.verdict == ApplyVerdict(
        "unverified", reason="no gate is configured for the folder"
    )
    assert brought.verdict.line() == (
        "the folder's gates: unverified (no gate is configured for the folder)"
    )
    # Again: nothing left to apply, nothing judged, nothing recorded.
    again = await bring_back_as_run(
        changes[:2], workspace, gates=None, capture=capture, title="again"
    )
    assert again.result.applied == [] and again.verdict is None
    assert again.to_json()["runId"] is None and len(await store.runs("ses_person")) == 1


async def test_a_pipeline_whose_gates_all_skipped_is_unverified_not_passed() -> None:
    # Defect: with the analyzers and the tests gate off, only the
    # dependencies gate was left, which skips itself with no manifest
    # changed: nothing looked, and `rein apply` printed "passed".
    workspace = TrackedWorkspace(FakeWorkspace({"a.py": "a = 1\n"}), MutationLog())
    deps = DependencyCoordinator(FakeCommandRunner(), {})
    gates = GatePipeline([DependencyGate(deps, only_when_owed=True)], dependencies=deps)
    brought = await bring_back_as_run(
        [RunChange("a.py", b"a = 1\n", b"a = 2\n")],
        workspace,
        gates=gates,
        capture=None,
        title="apply ses_iso",
    )
    assert brought.result.applied == ["a.py"]
    assert brought.verdict == ApplyVerdict("unverified", reason="no gate of the folder ran")


def test_a_blocked_verdict_lists_its_blockers() -> None:
    verdict = ApplyVerdict("blocked", ("analyzer: use.py:3: missing argument",))
    assert verdict.line() == (
        "the folder's gates: blocked (1)\n  analyzer: use.py:3: missing argument"
    )
    assert verdict.to_json() == {
        "status": "blocked",
        "blockers": ["analyzer: use.py:3: missing argument"],
        "reason": "",
    }


async def test_files_a_failed_apply_left_changed_are_reported_not_retried() -> None:
    """The apply failed and left a.py written (it changed again, so it was
    not put back): a.py is reported as left changed by the apply, b.py as
    not applied, and nothing is tried again as if a file had moved."""
    fake = FakeWorkspace({"a.py": "a = 1\n", "b.py": "b = 1\n"})
    calls: list[tuple[str, ...]] = []

    async def failing(changes: Sequence[FileUpdate], *, label: str = "") -> Mutation:
        calls.append(tuple(c.path for c in changes))
        fake.files["a.py"] = "a = 2\n"
        raise PartlyAppliedError("Could not write b.py (disk full). Still changed: a.py.", ["a.py"])

    fake.apply_changes = failing  # type: ignore[method-assign]
    changes = [RunChange("a.py", b"a = 1\n", b"a = 2\n"), RunChange("b.py", b"b = 1\n", b"b = 2\n")]
    out = await apply_changes(changes, fake)
    assert calls == [("a.py", "b.py")]
    assert out.applied == []
    assert [(c.path, c.reason) for c in out.conflicts] == [
        (
            "a.py",
            "left changed by the failed apply: Could not write b.py (disk full). Still changed: a.py.",
        ),
        ("b.py", "Could not write b.py (disk full). Still changed: a.py."),
    ]


async def test_the_hunks_are_listed_against_the_folder_and_only_the_kept_ones_applied() -> None:
    """Each hunk has an id of the run's (a whole file is hunk 0); listed
    against the folder now, clean or a conflict with both sides; applied
    with ``keep``, the others are left aside and nothing of them written."""
    base = "a\nl2\nb\nl4\nc\nl6\n"
    run = base.replace("a\n", "A\n").replace("b\n", "B\n").replace("c\n", "C\n")
    folder = base.replace("c\n", "mine\n")
    changes = [
        RunChange("f.py", base.encode(), run.encode()),
        RunChange("img.bin", b"\x00\xff", b"\x01\xff"),
        RunChange("new.py", None, b"n = 1\n"),
    ]
    ids = hunk_ids(changes)
    assert [i.split("~")[0] for i in ids] == ["f.py#0", "f.py#1", "f.py#2", "img.bin#0", "new.py#0"]
    assert all(re.fullmatch(r"[0-9a-f]{6}", i.split("~")[1]) for i in ids)
    f0, f1, f2, img, new = ids
    fake = FakeWorkspace({"f.py": folder, "img.bin": "x"})
    listed = await review_changes(changes, fake)
    assert [(h.id, h.status, h.lines) for h in listed.hunks] == [
        (f0, "clean", ("-a", "+A")),
        (f1, "clean", ("-b", "+B")),
        (f2, "conflict", ("-c", "+C")),
        (img, "conflict", ()),
        (new, "clean", ("+n = 1",)),
    ]
    conflict = listed.hunks[2].conflict
    assert conflict is not None and (conflict.ours, conflict.theirs) == ("mine\n", "C\n")
    assert [f["path"] for f in hunks_json(changes, listed)] == ["f.py", "img.bin", "new.py"]
    assert fake.files["f.py"] == folder  # listing writes nothing

    out = await apply_changes(changes, fake, keep={f1, f2})
    assert fake.files == {"f.py": folder.replace("b\n", "B\n"), "img.bin": "x"}
    assert (out.applied, out.hunks_applied) == (["f.py"], 1)
    assert out.left_aside == [f0, f2, img, new]
    assert [c.hunk for c in out.conflicts] == [f2, img]


def test_an_id_listed_before_the_run_changed_again_names_no_hunk() -> None:
    """The run changed again after the listing (a new prompt, a hand edit):
    the hunk now at a kept id's place is another one, so the id is refused
    as changed since it was listed instead of applying that other hunk."""
    base = "a\nx\nb\nx\nc\n"
    before = [RunChange("f", base.encode(), b"A\nx\nb\nx\nC\n")]
    after = [RunChange("f", base.encode(), b"A\nx\nB\nx\nC\n")]
    kept = hunk_ids(before)[1]  # c -> C, listed as f#1
    assert kept.startswith("f#1~") and hunk_ids(after)[1].startswith("f#1~")
    assert kept not in hunk_ids(after) and kept == hunk_ids(after)[2].replace("#2~", "#1~")
    assert (
        unknown_hunks([kept], after)
        == f"{kept!r}: changed since it was listed (list the hunks again)"
    )
    assert unknown_hunks(["f#7~000000"], after) == "no such hunk of the session: 'f#7~000000'"
    assert unknown_hunks(hunk_ids(after), after) == ""


async def test_a_file_with_a_byte_order_mark_merges_and_keeps_its_mark(tmp_path: Path) -> None:
    """The run's sides are read as the folder's workspace reads a file
    (without the mark): no false conflict; the written files keep the mark
    (a changed one its own, a created one the run's)."""
    bom = b"\xef\xbb\xbf"
    base = bom + b"a = 1\nb = 2\n"
    (tmp_path / "m.py").write_bytes(base)
    (tmp_path / "gone.py").write_bytes(base)
    changes = [
        RunChange("gone.py", base, None),
        RunChange("m.py", base, bom + b"a = 10\nb = 2\n"),
        RunChange("new.py", None, bom + b"n = 1\n"),
    ]
    out = await apply_changes(changes, DiskWorkspace(tmp_path))
    assert out.conflicts == []
    assert out.applied == ["gone.py", "m.py", "new.py"]
    assert not (tmp_path / "gone.py").exists()
    assert (tmp_path / "m.py").read_bytes() == bom + b"a = 10\nb = 2\n"
    assert (tmp_path / "new.py").read_bytes() == bom + b"n = 1\n"


async def test_every_hunk_not_applied_is_left_aside_or_in_the_folder_already() -> None:
    """A file the folder deleted is one conflict, and its kept hunks are
    left aside with it; a hunk the folder has already is said so, not
    lost from both lists."""
    base = "a\nl2\nb\nl4\nc\nl6\n"
    run = base.replace("a\n", "A\n").replace("c\n", "C\n")
    changes = [RunChange("f.py", base.encode(), run.encode())]
    first, second = hunk_ids(changes)
    out = await apply_changes(changes, FakeWorkspace({}), keep={second})
    assert [c.hunk for c in out.conflicts] == [first]
    assert (out.applied, out.left_aside) == ([], [first, second])

    fake = FakeWorkspace({"f.py": base.replace("a\n", "A\n")})  # the person applied one
    out = await apply_changes(changes, fake)
    assert (out.applied, out.hunks_applied) == (["f.py"], 1)
    assert (out.left_aside, out.already_there) == ([], [first])
    assert fake.files["f.py"] == run
