"""``rein run`` then ``rein undo``, both real processes over a folder on disk
and the real store: a run undone exactly, a restore to a turn, a conflict
with a file edited on disk, kill -9 mid-restore, bad input."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from rein.store import SqliteStore
from rein.store.checkpoints import SqliteCheckpointStore
from tests.checkpoint_scenario import BEFORE, NOTE, THREE_FILES, THREE_TURNS
from tests.checkpoint_scenario import script_call as call
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]

#: The runs start no analyzer: what is undone is the subject, not their
#: verdicts (each start and baseline cost seconds per run; the analyzer
#: gate of rein run: tests/e2e/test_headless_gates.py, test_gates_truth.py).
NO_ANALYZER = {"gates": {"analyzer": {"enabled": False}}}


class Project:
    def __init__(self, tmp_path: Path, files: dict[str, str | bytes] | None = None) -> None:
        self.tmp = tmp_path
        self.root = tmp_path / "ws"
        self.root.mkdir()
        self.storage = tmp_path / "store"
        for name, content in (files if files is not None else BEFORE).items():
            path = self.root / name
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(self.root.iterdir()) if p.is_file()}

    def rein(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*REIN, *args],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    def run(
        self, turns: list[dict[str, Any]], *more: str, config: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        script = self.tmp / "script.yaml"
        script.write_text(yaml.safe_dump({"turns": turns}))
        (self.tmp / "rein.yaml").write_text(
            yaml.safe_dump({"rein": {**NO_ANALYZER, **(config or {})}})
        )
        extra = ["--config", str(self.tmp / "rein.yaml")]
        out = self.rein(
            "run",
            "change files",
            "-w",
            str(self.root),
            "--provider",
            "replay",
            "--script",
            str(script),
            "--storage",
            str(self.storage),
            "--yes",
            "--json",
            *extra,
            *more,
        )
        assert out.returncode == 0, (out.stdout[-3000:], out.stderr[-3000:])
        result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])["result"]
        return result

    def undo(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.rein("undo", str(self.root), "--storage", str(self.storage), *args)

    def undo_json(self, *args: str, code: int = 0) -> dict[str, Any]:
        out = self.undo("--json", *args)
        assert out.returncode == code, out.stdout + out.stderr
        result: dict[str, Any] = json.loads(out.stdout)
        return result


def test_a_run_of_three_files_is_undone_exactly_the_undo_undone_and_the_session_told(
    tmp_path: Path,
) -> None:
    p = Project(tmp_path)
    before = p.files()
    run = p.run(THREE_FILES)
    after = p.files()
    assert after != before

    out = p.undo()
    assert out.returncode == 0, out.stdout + out.stderr
    assert p.files() == before
    assert "restored  gone.py (created)" in out.stdout
    assert "restored  new.py (deleted)" in out.stdout

    again = p.undo_json()
    assert again["restored"] == [] and sorted(again["alreadyRestored"]) == [
        "gone.py",
        "mod.py",
        "new.py",
    ]
    # Undone already: said so; no restore of nothing registered or offered.
    assert again["restoreId"] is None
    told = p.undo()
    assert told.returncode == 0, told.stdout + told.stderr
    assert f"run {run['runId']} is undone already" in told.stdout
    assert "nothing was changed" in told.stdout and "undo this restore" not in told.stdout
    assert p.files() == before

    async def restores() -> int:
        store = SqliteCheckpointStore.open(p.storage)
        try:
            return sum(r.kind == "restore" for r in await store.runs(run["sessionId"]))
        finally:
            store.close()

    assert anyio.run(restores) == 1

    first_restore = out.stdout.split(": ", 1)[1].split(" ", 1)[0]
    assert first_restore.startswith("restore-")
    undo = p.undo_json("--session", run["sessionId"], "--run", first_restore)
    assert p.files() == after
    assert {(f["path"], f["change"]) for f in undo["restored"]} == {
        ("mod.py", "modified"),
        ("new.py", "created"),
        ("gone.py", "deleted"),
    }

    # The resumed session is told what was restored.
    resumed = p.run(
        [{"expect": {"messages_contain": [NOTE, "mod.py (modified again)"]}, "text": "noted"}],
        "--resume",
        run["sessionId"],
    )
    assert resumed["status"] == "completed"


def test_a_restore_to_a_turn_undoes_only_the_later_turns(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.run(THREE_TURNS)
    result = p.undo_json("--turn", "2")
    assert sorted(f["path"] for f in result["restored"]) == ["mod.py", "new.py"]
    assert (p.root / "mod.py").read_text() == "a = 2\nb = 2\n"
    assert not (p.root / "new.py").exists()


def test_a_file_edited_on_disk_after_the_run_is_kept_and_shown(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.run(THREE_FILES)
    (p.root / "mod.py").write_text("a = 10\nb = 2\nmine = 3\n")
    out = p.undo()
    assert out.returncode == 3, out.stdout + out.stderr
    assert (p.root / "mod.py").read_text() == "a = 10\nb = 2\nmine = 3\n"
    assert "conflict  mod.py: changed after the run; left as it is" in out.stdout
    assert "+mine = 3" in out.stdout
    assert (p.root / "gone.py").read_text() == "old\n" and not (p.root / "new.py").exists()


def test_kill_9_mid_restore_leaves_whole_files_and_undo_again_completes_it(
    tmp_path: Path,
) -> None:
    count, stall_at = 40, 15
    old = {f"f{i:02}.txt": f"old {i}\n" * 50 for i in range(count)}
    p = Project(tmp_path, dict(old))
    new = {name: text.replace("old", "new") for name, text in old.items()}
    p.run(
        [
            {"tool_calls": [call("write_file", path=n, content=t) for n, t in new.items()]},
            {"text": "done"},
        ]
    )
    assert p.files() == {n: t.encode() for n, t in new.items()}

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.e2e.stalled_undo",
            str(stall_at),
            "undo",
            str(p.root),
            "--storage",
            str(p.storage),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        # The sources under test first (not an installed Rein of another checkout).
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "server"), str(REPO)])},
    )
    assert proc.stderr is not None
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        assert ready, "rein undo did not reach the stalled write within 60 s"
        assert proc.stderr.readline().decode().strip() == f"stalled after {stall_at} writes"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stderr.close()

    now = {n: b for n, b in p.files().items() if n.endswith(".txt")}
    assert set(now) == set(old)
    restored = [n for n, b in now.items() if b == old[n].encode()]
    untouched = [n for n, b in now.items() if b == new[n].encode()]
    assert len(restored) == stall_at and len(untouched) == count - stall_at  # whole files only

    result = p.undo_json()
    assert sorted(result["alreadyRestored"]) == sorted(restored)
    assert sorted(f["path"] for f in result["restored"]) == sorted(untouched)
    assert {n: b for n, b in p.files().items() if n.endswith(".txt")} == {
        n: t.encode() for n, t in old.items()
    }


def test_bad_input_is_refused_with_nothing_changed(tmp_path: Path) -> None:
    p = Project(tmp_path, {**BEFORE, "data.bin": b"\xff\xfe\x00binary", "big.txt": "B" * 3000})
    run = p.run(
        [
            {
                "tool_calls": [
                    call("write_file", path="data.bin", content="now text\n"),
                    call("write_file", path="big.txt", content="small\n"),
                    call("edit_file", path="mod.py", old_string="a = 1", new_string="a = 5"),
                ]
            },
            {"text": "done"},
        ],
        config={"checkpoints": {"maxFileKb": 1}},
    )
    after = p.files()
    cases = [
        (["--session", "ses_nope"], "no session 'ses_nope'"),
        (["--run", "run_nope"], "no checkpoint of run 'run_nope'"),
        (["--path", "../outside.py"], "outside the workspace"),
        (["--path", "data.bin"], "data.bin cannot be restored: binary"),
        (["--path", "big.txt"], "big.txt cannot be restored: too large"),
    ]
    for args, expected in cases:
        out = p.undo(*args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert expected in out.stderr and "nothing was changed" in out.stderr, out.stderr
        assert p.files() == after

    async def mark(status: str) -> None:
        sessions = SqliteStore.open(p.storage)
        try:
            await sessions.set_status(run["sessionId"], status)
        finally:
            sessions.close()

    anyio.run(mark, "running")  # as while a rein run or the editor runs it
    busy = p.undo()
    assert busy.returncode == 2 and "abort or wait for the run" in busy.stderr, busy.stderr
    assert p.files() == after
    anyio.run(mark, "completed")

    # A session of another folder: said, that folder untouched.
    other = tmp_path / "other"
    other.mkdir()
    (other / "mod.py").write_text("other\n")
    elsewhere = p.rein(
        "undo", str(other), "--storage", str(p.storage), "--session", run["sessionId"]
    )
    assert elsewhere.returncode == 2, elsewhere.stdout + elsewhere.stderr
    assert f"has no run that changed files in {other}" in elsewhere.stderr
    assert f"its runs changed {p.root}: name that folder" in elsewhere.stderr
    assert "nothing was changed" in elsewhere.stderr
    assert (other / "mod.py").read_text() == "other\n" and p.files() == after

    not_a_folder = p.rein("undo", str(p.root / "mod.py"), "--storage", str(p.storage))
    assert not_a_folder.returncode == 2 and "is not a folder" in not_a_folder.stderr
    bad_storage = p.rein("undo", str(p.root), "--storage", str(p.root / "keep.py"))
    assert bad_storage.returncode == 2 and "rein undo:" in bad_storage.stderr
    assert p.files() == after

    # The whole run: the unstored files are skipped (exit 3), mod.py restored.
    whole = p.undo_json(code=3)
    assert {s["path"] for s in whole["skipped"]} == {"data.bin", "big.txt"}
    assert (p.root / "mod.py").read_text() == BEFORE["mod.py"]
    p.undo_json("--run", whole["restoreId"])
    after = p.files()

    async def prune() -> None:
        store = SqliteCheckpointStore.open(p.storage)
        try:
            await store.prune(str(p.root), max_bytes=0, max_age_s=0, now=time.time())
        finally:
            store.close()

    anyio.run(prune)
    out = p.undo("--run", run["runId"])
    assert out.returncode == 2 and "was dropped" in out.stderr, out.stderr
    assert p.files() == after
