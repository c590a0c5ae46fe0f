"""Isolated runs, the real way: ``rein run --isolated`` processes with
scripted models and the real analyzers over a real git repository, then
``rein apply``. One module fixture runs them all: a run killed mid-command
(crash), then two runs on one file in parallel (one with a seeded error it
repairs) and one in a folder that is not a git repository. ``rein apply``
brings a run back as one change the folder's gates judge (the second run's
new signature breaks a caller the person wrote meanwhile: blocked) and
``rein undo`` reverts as a whole."""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import sqlite3
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from rein.headless.isolated import ApplyArgs, apply_command, apply_isolated
from rein.headless.undo import UndoArgs, undo_command
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

MOD = "".join(f"v{i} = {i}\n" for i in range(1, 9))
APP = 'def greet(name: str) -> str:\n    return f"hello {name}"\n'
STAGED = "s = 1\n"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return call("edit_file", path=path, old_string=old, new_string=new)


#: Run 1: mod.py's first line, and a typo in app.py the gate blocks and
#: the run repairs.
FIRST = [
    {"tool_calls": [edit("mod.py", "v1 = 1", "v1 = 100"), edit("app.py", "{name}", "{nmae}")]},
    {"text": "done"},
    {
        "expect": {"last_message_contains": "nmae"},
        "tool_calls": [edit("app.py", "{nmae}", "{name}")],
    },
    {"text": "repaired"},
]
#: Run 2: mod.py's first line too (the conflict) and its last (applies),
#: and greet's signature (which breaks a caller the folder gets meanwhile).
SECOND = [
    {
        "tool_calls": [
            edit("mod.py", "v1 = 1", "v1 = 200"),
            edit("mod.py", "v8 = 8", "v8 = 800"),
            edit("app.py", "(name: str)", "(name: str, punct: str)"),
        ]
    },
    {"text": "done"},
]
#: What the person writes in the folder while the runs run.
CALLER = 'from app import greet\n\nprint(greet("you"))\n'
#: A run killed while its command runs.
KILLED = [{"tool_calls": [call("run_command", command="sleep 120")]}, {"text": "never"}]
#: A folder that is not a git repository.
PLAIN = [{"tool_calls": [edit("notes.txt", "old", "new")]}, {"text": "done"}]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout


@dataclass
class World:
    tmp: Path
    repo: Path
    plain: Path
    storage: Path
    results: dict[str, dict[str, Any]]
    index_before: str
    worktrees_after_runs: list[str]
    killed_session: str

    def rein(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*REIN, *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )

    def apply(self, session: str, *more: str) -> subprocess.CompletedProcess[str]:
        return self.rein("apply", session, "--storage", str(self.storage), *more)


def _start(
    tmp: Path, name: str, folder: Path, storage: Path, turns: list, *, analyzers: bool = True
) -> subprocess.Popen[str]:
    script = tmp / f"{name}.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}))
    args = ["run", name, "-w", str(folder), "--provider", "replay", "--script", str(script)]
    if not analyzers:  # a run whose gate is not what is tested starts none (cheaper)
        config = tmp / "no-analyzers.yaml"
        config.write_text(yaml.safe_dump({"rein": {"gates": {"analyzer": {"enabled": False}}}}))
        args += ["--config", str(config)]
    return subprocess.Popen(
        [*REIN, *args, "--storage", str(storage), "--yes", "--json", "--isolated"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )


def _worktrees(repo: Path) -> list[str]:
    listed = git(repo, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in listed.splitlines() if line.startswith("worktree ")]


def test_parallel_isolated_runs_gated_apart_then_brought_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One test, so the runs (the costly part) are made once whatever the
    # workers: each check below reads what they left, in order.
    world = _world(tmp_path)
    _each_run_has_its_own_verdict_and_the_folder_is_untouched(world)
    _the_next_start_removed_what_the_killed_run_left(world)
    _apply_first_clean_then_second_with_a_conflict_shown_not_applied(world, capsys)
    _a_folder_that_is_not_a_git_repository_works_by_copy(world)


def _line_within(proc: subprocess.Popen[str], needle: str, *, timeout: float) -> bool:
    """True once ``proc`` printed a line holding ``needle``; False when it
    did not within ``timeout`` seconds (or ended first). The pipe is read
    by a thread, so a run that prints nothing never blocks the test."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            return False
        if line is None:
            return False
        if needle in line:
            return True
    return False


def _world(tmp: Path) -> World:
    repo, plain, storage = tmp / "repo", tmp / "plain", tmp / "store"
    repo.mkdir()
    plain.mkdir()
    (plain / "notes.txt").write_text("old\n")
    git(repo, "init", "-q")
    (repo / "mod.py").write_text(MOD)
    (repo / "app.py").write_text(APP)
    (repo / "staged.py").write_text("s = 0\n")
    (repo / ".gitignore").write_text("ignored.txt\n")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    # The person's own work in progress: staged, untracked, ignored.
    (repo / "staged.py").write_text(STAGED)
    git(repo, "add", "staged.py")
    (repo / "untracked.py").write_text("u = 1\n")
    (repo / "ignored.txt").write_text("secret\n")
    index_before = git(repo, "diff", "--cached")

    killed = _start(tmp, "killed", repo, storage, KILLED, analyzers=False)
    assert killed.stdout is not None
    if not _line_within(killed, '"run_command"', timeout=60):
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
        pytest.fail("the killed run never started its command within 60 s")
    killed_session = next(p.stem for p in (storage / "isolated").glob("*.json"))
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)

    runs = {
        "first": _start(tmp, "first", repo, storage, FIRST),
        "second": _start(tmp, "second", repo, storage, SECOND),
        "plain": _start(tmp, "plain", plain, storage, PLAIN, analyzers=False),
    }
    results: dict[str, dict[str, Any]] = {}
    for name, proc in runs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, (name, out[-2000:], err[-2000:])
        results[name] = json.loads(out.strip().splitlines()[-1])
    return World(tmp, repo, plain, storage, results, index_before, _worktrees(repo), killed_session)


def _each_run_has_its_own_verdict_and_the_folder_is_untouched(world: World) -> None:
    first, second = world.results["first"], world.results["second"]
    assert first["result"]["status"] == "completed" and first["result"]["repairAttempts"] == 1
    # The seeded error was blocked and repaired inside the run's worktree;
    # the other run's gate never saw it.
    assert second["result"]["status"] == "completed" and second["result"]["repairAttempts"] == 0
    assert {c["path"] for c in first["isolated"]["changed"]} == {"mod.py"}
    assert second["isolated"]["changed"] == [
        {"path": "app.py", "change": "modified"},
        {"path": "mod.py", "change": "modified"},
    ]
    assert (world.repo / "mod.py").read_text() == MOD
    assert (world.repo / "app.py").read_text() == APP
    tree = Path(first["isolated"]["worktree"])
    assert tree.is_relative_to(world.storage) and (tree / "untracked.py").read_text() == "u = 1\n"
    assert (tree / "staged.py").read_text() == STAGED and not (tree / "ignored.txt").exists()


def _the_next_start_removed_what_the_killed_run_left(world: World) -> None:
    kept = {world.results[n]["isolated"]["worktree"] for n in ("first", "second")}
    assert sorted(world.worktrees_after_runs) == sorted([str(world.repo), *kept])
    assert not (world.storage / "isolated" / world.killed_session).exists()
    assert not (world.storage / "isolated" / f"{world.killed_session}.json").exists()


def _apply_first_clean_then_second_with_a_conflict_shown_not_applied(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    first = world.results["first"]["isolated"]["sessionId"]
    second = world.results["second"]["isolated"]["sessionId"]
    out = world.apply(first)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"isolated session {first}: the run's verdict: completed\n" in out.stderr
    assert (world.repo / "mod.py").read_text() == MOD.replace("v1 = 1\n", "v1 = 100\n")
    # The folder's gates judged the applied file: nothing broke.
    assert "applied   mod.py\nthe folder's gates: passed\n" in out.stdout, out.stdout
    # Its copy is gone: resuming it says so (it said "resume it with -w" the
    # removed copy, a folder that does not exist).
    resumed = world.rein(
        "run", "more", "-w", str(world.repo), "--resume", first, "--provider", "replay",
        "--script", str(world.tmp / "plain.yaml"), "--storage", str(world.storage),
    )  # fmt: skip
    assert resumed.returncode == 2 and "which is gone" in resumed.stderr, resumed.stderr
    # Undoing it in the folder names the apply's session (it said "name
    # that folder", the removed copy). In process: cheaper than a process.
    applied_as = out.stderr.split("undo this apply with: ", 1)[1].split("--session ")[1].split()[0]
    assert undo_command(UndoArgs(world.repo, str(world.storage), session_id=first)) == 2
    said = capsys.readouterr().err
    assert "ran in an isolated copy that is gone (applied, discarded or kept as a" in said
    assert f"is the apply's session {applied_as}: undo it with rein undo --session " in said

    (world.repo / "caller.py").write_text(CALLER)  # the person, meanwhile
    # Its hunks against the folder now: mod.py's first line is a conflict.
    listed = world.apply(second, "--list")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    rows = [line.split()[:2] for line in listed.stdout.splitlines() if "#" in line]
    assert [(i.split("~")[0], status) for i, status in rows] == [
        ("app.py#0", "clean"),
        ("mod.py#0", "conflict"),
        ("mod.py#1", "clean"),
    ]
    ids = [i for i, _ in rows]
    # The hint names the storage folder (it did not, and failed as printed).
    assert f"--hunks ID,... --storage {world.storage}  (conflicts never apply)" in listed.stderr
    assert "ours (the folder):\n    | v1 = 100\n" in listed.stdout
    # (In process: the command line's refusal, cheaper than one more process.)
    bad = ApplyArgs(second, str(world.storage), hunks=("mod.py#9~000000",))
    assert apply_isolated(bad) == 2
    assert "--hunks: no such hunk of the session: 'mod.py#9~000000'" in capsys.readouterr().err
    # An empty choice is refused (it would apply nothing and remove the copy).
    for empty in ("", ","):
        assert (
            apply_command(
                second, str(world.storage), None, None, False, False, empty, as_json=False
            )
            == 2
        )
        assert "--hunks: no hunk id given" in capsys.readouterr().err
    assert world.storage.joinpath("isolated", f"{second}.json").exists()
    out = world.apply(second, "--json", "--hunks", ",".join(ids))
    assert out.returncode == 3, out.stdout + out.stderr
    result = json.loads(out.stdout)
    assert result["leftAside"] == ids[1:2]  # kept, but a conflict: never applied
    # Both files as one change; the folder's analyzers block the new
    # signature's caller (the apply stays: the verdict informs).
    assert result["applied"] == ["app.py", "mod.py"] and result["hunksApplied"] == 2
    assert result["gates"]["status"] == "blocked", result["gates"]
    assert any(b.startswith("analyzer: caller.py:3: ") for b in result["gates"]["blockers"])
    assert result["verdict"] == "completed"
    assert result["conflicts"] == [
        {
            "id": ids[1],
            "path": "mod.py",
            "base": "v1 = 1\n",
            "ours": "v1 = 100\n",
            "theirs": "v1 = 200\n",
            "reason": "the folder changed these lines since the run started",
        }
    ]
    merged = MOD.replace("v1 = 1\n", "v1 = 100\n").replace("v8 = 8\n", "v8 = 800\n")
    assert (world.repo / "mod.py").read_text() == merged
    assert "<<<<<<<" not in merged and not list(world.repo.rglob("*.rej"))
    text = world.apply(second)  # again: the applied hunk is not a conflict twice
    assert text.returncode == 3 and "theirs (the run):\n    | v1 = 200" in text.stdout
    assert text.stdout.count("conflict  mod.py") == 1
    assert "the folder's gates" not in text.stdout  # nothing applied, nothing judged
    assert "undo this apply" not in text.stderr  # nor recorded as a run
    # rein undo reverts the whole apply (both files), one checkpoint run.
    undo = world.rein(
        "undo", str(world.repo), "--session", result["sessionId"], "--run", result["runId"],
        "--storage", str(world.storage),
    )  # fmt: skip
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert (world.repo / "mod.py").read_text() == MOD.replace("v1 = 1\n", "v1 = 100\n")
    assert (world.repo / "app.py").read_text() == APP

    # The printed discard command works as printed, from another folder
    # (it lacked --storage and said "no isolated session").
    discard = text.stderr.rsplit("(discard it with rein ", 1)[1].rstrip().removesuffix(")")
    gone = subprocess.run(
        [*REIN, *shlex.split(discard)], capture_output=True, text=True, timeout=120, cwd=world.tmp
    )
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert _worktrees(world.repo) == [str(world.repo)]
    assert git(world.repo, "diff", "--cached") == world.index_before
    assert not (world.storage / "isolated" / f"{second}.json").exists()


def _a_folder_that_is_not_a_git_repository_works_by_copy(world: World) -> None:
    plain = world.results["plain"]["isolated"]
    assert (world.plain / "notes.txt").read_text() == "old\n"
    assert not Path(plain["worktree"]).is_relative_to(world.plain)
    out = world.apply(plain["sessionId"])
    assert out.returncode == 0, out.stdout + out.stderr
    assert (world.plain / "notes.txt").read_text() == "new\n"
    assert not (world.storage / "isolated" / plain["sessionId"]).exists()
    again = world.apply(plain["sessionId"])
    assert again.returncode == 2 and "no isolated session" in again.stderr


#: A run stopped by SIGTERM while its command runs, after an edit and a
#: command that shows the sandbox started.
TERMINATED = [
    {
        "tool_calls": [
            edit("mod.py", "v1 = 1", "v1 = 300"),
            call("run_command", command="echo sandboxed-ok"),
            call("run_command", command="sleep 120"),
        ]
    },
    {"text": "never"},
]


def test_sigterm_aborts_an_isolated_run_with_a_relative_storage_folder(tmp_path: Path) -> None:
    # `rein run --isolated --storage store` from the folder above the
    # repository, then SIGTERM (a CI job's cancel, `timeout`): the copy
    # was made inside the person's repository and every command was
    # refused (the sandbox could not hide "store"); SIGTERM killed the
    # process where it stood (the worktree left, the session "running").
    repo, storage = tmp_path / "repo", tmp_path / "store"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "mod.py").write_text(MOD)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    script = tmp_path / "terminated.yaml"
    script.write_text(yaml.safe_dump({"turns": TERMINATED}))
    config = tmp_path / "no-analyzers.yaml"
    config.write_text(yaml.safe_dump({"rein": {"gates": {"analyzer": {"enabled": False}}}}))
    proc = subprocess.Popen(
        [*REIN, "run", "t", "-w", "repo", "--provider", "replay", "--script", script.name,
         "--config", config.name, "--storage", "store", "--yes", "--json", "--isolated"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        cwd=tmp_path, start_new_session=True,
    )  # fmt: skip
    try:
        # The echo's end (its output: the sandbox started), then the sleep.
        started = _line_within(proc, "sandboxed-ok\\n[exit code 0]", timeout=60)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert started, err[-2000:]
    assert proc.returncode == 143, err[-2000:]
    assert "terminated (SIGTERM); the run was aborted" in err
    assert _worktrees(repo) == [str(repo)]
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert (repo / "mod.py").read_text() == MOD
    assert list((storage / "isolated").iterdir()) == []
    assert not list(storage.glob("**/tree"))
    db = sqlite3.connect(storage / "sessions.db")
    try:
        assert db.execute("SELECT status FROM sessions").fetchall() == [("aborted",)]
    finally:
        db.close()
