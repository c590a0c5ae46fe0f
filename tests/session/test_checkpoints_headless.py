"""A real ``rein run`` records its checkpoint in ``checkpoints.db``: the
content before and after each file it created, changed, deleted or renamed,
and what a command it ran changed; ``rein sessions`` shows the bytes."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from rein.checkpoints.capture import COMMAND_BEFORE
from rein.checkpoints.model import FileChange, FileVersion
from rein.store import SqliteStore
from rein.store.checkpoints import SqliteCheckpointStore
from tests.forkserver import REIN

#: Real ``rein run`` and ``rein sessions`` processes.
pytestmark = pytest.mark.e2e

GEN = "open('gen.txt', 'w').write('made by a command\\n')"


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*REIN, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def _replay(
    tmp_path: Path, task: str, script: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    """``rein run`` on ``tmp_path/ws`` following ``script`` (replay provider,
    the analyzer gate off), storing into ``tmp_path/store``."""
    script_file = tmp_path / "s.yaml"
    script_file.write_text(script)
    config = tmp_path / "rein.yaml"
    config.write_text("gates: {analyzer: {enabled: false}}\n")
    return _run(
        "run",
        task,
        "-w",
        str(tmp_path / "ws"),
        "--provider",
        "replay",
        "--script",
        str(script_file),
        "--config",
        str(config),
        "--storage",
        str(tmp_path / "store"),
        *flags,
    )


# One call a turn: the order of the changes is the script's (a turn's calls
# run in parallel).
SCRIPT = f"""
turns:
  - tool_calls:
      - name: write_file
        arguments: {{path: new.py, content: "n = 1\\n"}}
  - tool_calls:
      - name: edit_file
        arguments: {{path: a.py, old_string: "a = 1", new_string: "a = 2"}}
  - tool_calls:
      - name: delete_file
        arguments: {{path: gone.py}}
  - tool_calls:
      - name: move_file
        arguments: {{path: old.py, new_path: pkg/moved.py}}
  - tool_calls:
      - name: run_command
        arguments: {{command: {json.dumps(f"{shlex.quote(sys.executable)} -c {shlex.quote(GEN)}")}}}
  - text: done
"""


def text(value: str) -> FileVersion:
    return FileVersion.of_text(value)


def test_a_headless_run_records_every_changed_file_with_its_content(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("a = 1\n")
    (ws / "gone.py").write_text("g = 1\n")
    (ws / "old.py").write_text("o = 1\n")
    storage = tmp_path / "store"
    out = _replay(tmp_path, "change four files", SCRIPT, "--yes", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(out.stdout.splitlines()[-1])["result"]
    assert (ws / "gen.txt").read_text() == "made by a command\n"
    assert result["changes"] == [
        {"path": "new.py", "change": "created"},
        {"path": "a.py", "change": "modified"},
        {"path": "gone.py", "change": "deleted"},
        {"path": "old.py", "change": "deleted"},
        {"path": "pkg/moved.py", "change": "renamed", "renamedFrom": "old.py"},
        {"path": "gen.txt", "change": "modified"},
    ]

    async def read() -> tuple[list[object], list[object], dict[str, str | None], str]:
        store = SqliteCheckpointStore.open(storage)
        sessions = SqliteStore.open(storage)
        try:
            runs = await store.runs(result["sessionId"])
            changes = await store.changes(result["sessionId"])
            blobs = {
                v: await store.get_text(FileVersion.of_text(v).blob or "")
                for v in (
                    "a = 1\n",
                    "a = 2\n",
                    "n = 1\n",
                    "g = 1\n",
                    "o = 1\n",
                    "made by a command\n",
                )
            }
            [record] = await sessions.list_sessions()
            return runs, changes, blobs, record.workspace
        finally:
            store.close()
            sessions.close()

    runs, changes, blobs, workspace = anyio.run(read)
    assert [(r.run_id, r.kind, r.title, r.workspace) for r in runs] == [  # type: ignore[attr-defined]
        (result["runId"], "run", "change four files", str(ws))
    ]
    assert workspace == str(ws)
    assert [(c.turn, c.origin, list(c.files)) for c in changes] == [  # type: ignore[attr-defined]
        (1, "tool", [FileChange("new.py", FileVersion.absent(), text("n = 1\n"))]),
        (2, "tool", [FileChange("a.py", text("a = 1\n"), text("a = 2\n"))]),
        (3, "tool", [FileChange("gone.py", text("g = 1\n"), FileVersion.absent())]),
        (
            4,
            "tool",
            [
                FileChange("old.py", text("o = 1\n"), FileVersion.absent()),
                FileChange("pkg/moved.py", FileVersion.absent(), text("o = 1\n"), "old.py"),
            ],
        ),
        (
            5,
            "command",
            [
                FileChange(
                    "gen.txt", FileVersion.unstored(COMMAND_BEFORE), text("made by a command\n")
                )
            ],
        ),
    ]
    # Every version is readable back from the file.
    assert blobs == {k: k for k in blobs}

    listed = _run("sessions", "--storage", str(storage), "--json")
    assert listed.returncode == 0, listed.stderr
    [session] = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    assert session["checkpointBytes"] > 0
    assert session["workspace"] == str(ws)
    text_out = _run("sessions", "--storage", str(storage))
    assert "checkpoints" in text_out.stdout


def test_a_subagents_edit_lands_in_the_parents_run(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "lib.py").write_text("x = 1\n")
    storage = tmp_path / "store"
    # One replay model plays both: the parent's task call, the child's two
    # turns, then the parent's answer.
    out = _replay(
        tmp_path,
        "delegate the fix",
        """
turns:
  - tool_calls:
      - name: task
        arguments: {description: fix lib, prompt: "set x to 2 in lib.py", tools: [edit_file]}
  - tool_calls:
      - name: edit_file
        arguments: {path: lib.py, old_string: "x = 1", new_string: "x = 2"}
  - text: child done
  - text: parent done
""",
        "--json",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(out.stdout.splitlines()[-1])["result"]
    assert (ws / "lib.py").read_text() == "x = 2\n"
    assert result["changes"] == [{"path": "lib.py", "change": "modified"}]

    async def read() -> tuple[list[object], list[object]]:
        store = SqliteCheckpointStore.open(storage)
        try:
            return await store.runs(result["sessionId"]), await store.changes(result["sessionId"])
        finally:
            store.close()

    runs, changes = anyio.run(read)
    # One checkpoint run, the parent's; the change at the parent's turn 1.
    assert [r.run_id for r in runs] == [result["runId"]]  # type: ignore[attr-defined]
    assert [(c.run_id, c.turn, c.origin, list(c.files)) for c in changes] == [  # type: ignore[attr-defined]
        (result["runId"], 1, "subagent", [FileChange("lib.py", text("x = 1\n"), text("x = 2\n"))])
    ]


def test_rein_run_says_which_files_it_changed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "draft.py").write_text("d = 1\n")
    out = _replay(
        tmp_path,
        "create and move",
        """
turns:
  - tool_calls:
      - name: write_file
        arguments: {path: new.py, content: "n = 1\\n"}
  - tool_calls:
      - name: move_file
        arguments: {path: draft.py, new_path: final.py}
  - text: done
""",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert (
        "Changed: new.py (created), draft.py (deleted), final.py (renamed from draft.py)"
        in out.stderr.splitlines()
    )
