"""``rein apply`` and SIGTERM (a CI job's cancel, ``timeout``, ``docker
stop``), real processes over a real git repository: stopped before the
write, the folder is as it was and the copy stays; stopped in the middle of
the write, it finishes the write (never half applied), stores the apply's
session as aborted (undoable: a script the apply deleted comes back
executable) and exits 143; ``rein apply`` again finishes."""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from tests.e2e.test_isolated_cli import call, git
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
A, B, RUN = "a = 1\n", "b = 1\n", "#!/bin/sh\necho run\n"
TURNS = [
    {
        "tool_calls": [
            call("edit_file", path="a.py", old_string="a = 1", new_string="a = 2"),
            call("edit_file", path="b.py", old_string="b = 1", new_string="b = 2"),
            call("delete_file", path="run.sh"),
        ]
    },
    {"text": "done"},
]


def rein(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*REIN, *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def stalled_apply(where: list[str], args: list[str]) -> subprocess.CompletedProcess[str]:
    """``rein apply`` stopped at ``where`` (tests/e2e/stalled_apply.py): SIGTERM
    once it says it is there, and once it says it heard the signal, let it
    go on. Its stderr is read by a thread, line by line."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.stalled_apply", *where, "apply", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "server"), str(REPO)])},
    )
    assert proc.stderr is not None and proc.stdin is not None
    lines: queue.Queue[str | None] = queue.Queue()  # None: its stderr ended

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    said: list[str] = []

    def wait_for(start: str) -> None:
        while not any(line.startswith(start) for line in said):
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                raise AssertionError(f"rein apply did not say {start!r} in 60 s: {said}") from None
            if line is None:
                raise AssertionError(f"rein apply ended ({proc.wait(10)}) before {start!r}: {said}")
            said.append(line)

    try:
        wait_for("stalled")
        proc.send_signal(signal.SIGTERM)
        wait_for("rein apply: SIGTERM")  # the loop took it
        proc.stdin.write("go\n")
        proc.stdin.close()
        proc.wait(60)
        reader.join(60)
        out = proc.stdout.read() if proc.stdout is not None else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        reader.join(10)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    while not lines.empty():
        line = lines.get()
        if line is not None:
            said.append(line)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "".join(said))


def test_sigterm_leaves_the_folder_as_before_or_fully_applied(tmp_path: Path) -> None:
    repo, storage = tmp_path / "repo", tmp_path / "store"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.py").write_text(A)
    (repo / "b.py").write_text(B)
    (repo / "run.sh").write_text(RUN)
    (repo / "run.sh").chmod(0o755)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    config = tmp_path / "rein.yaml"
    config.write_text(yaml.safe_dump({"rein": {"gates": {"analyzer": {"enabled": False}}}}))
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": TURNS}))
    common = ["--config", str(config), "--storage", str(storage)]
    ran = rein(
        "run", "t", "-w", str(repo), "--provider", "replay", "--script", str(script),
        "--yes", "--json", "--isolated", *common,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    session = json.loads(ran.stdout.strip().splitlines()[-1])["isolated"]["sessionId"]
    apply_args = [session, *common]

    # Stopped before the write: nothing applied, the copy kept, exit 143.
    before = stalled_apply(["before"], apply_args)
    assert before.returncode == 143, before.stderr[-3000:]
    assert "before anything was applied: the folder is as it was" in before.stderr
    assert (repo / "a.py").read_text() == A and (repo / "b.py").read_text() == B
    assert list((storage / "isolated").glob("*.json")), "the copy's record was removed"

    # Stopped after one of the two files was written: both are, exit 143.
    during = stalled_apply(["write", "1"], apply_args)
    assert during.returncode == 143, during.stderr[-3000:]
    assert (repo / "a.py").read_text() == "a = 2\n" and (repo / "b.py").read_text() == "b = 2\n"
    assert not (repo / "run.sh").exists()
    assert "after the files were applied (a.py, b.py, run.sh)" in during.stderr
    db = sqlite3.connect(storage / "sessions.db")
    try:
        [(applied_session, status)] = db.execute(
            "SELECT id, status FROM sessions WHERE title=?", (f"rein apply {session}",)
        ).fetchall()
    finally:
        db.close()
    assert status == "aborted"

    # Again: it finds the files applied, and removes the copy.
    again = rein("apply", *apply_args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "in the folder already" in again.stdout
    assert not list((storage / "isolated").glob("*.json"))

    # The interrupted apply is undone as a whole: the script it deleted
    # comes back executable.
    undo = rein("undo", str(repo), "--session", applied_session, "--storage", str(storage))
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert (repo / "a.py").read_text() == A and (repo / "b.py").read_text() == B
    assert (repo / "run.sh").read_text() == RUN
    assert stat.S_IMODE((repo / "run.sh").stat().st_mode) == 0o755, undo.stdout
