"""Workspace reads and writes that lose nothing and never hang (issue 30,
items 1, 3 and 7), against real ``rein run`` processes on real files: the
replay model plays the tool calls a misbehaving model would make."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.faithful_bytes import cases_by_id
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

NO_ANALYZER = {"gates": {"analyzer": {"enabled": False}}}


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"name": "edit_file", "arguments": {"path": path, "old_string": old, "new_string": new}}


def _start(
    tmp_path: Path, root: Path, turns: list[dict[str, Any]], name: str
) -> subprocess.Popen[str]:
    script = tmp_path / f"{name}.yaml"
    script.write_text(yaml.safe_dump({"name": name, "turns": [*turns, {"text": "done"}]}))
    config = tmp_path / "rein.json"
    config.write_text(json.dumps(NO_ANALYZER))
    return subprocess.Popen(
        [*REIN, "run", "task", "-w", str(root), "--provider", "replay",
         "--script", str(script), "--yes", "--json", "--config", str(config),
         "--storage", str(tmp_path / f"storage-{name}")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _finish(proc: subprocess.Popen[str], timeout_s: float = 90) -> list[dict[str, Any]]:
    """The tool results of a finished run (it must end by itself, well
    inside ``timeout_s``, with status 0)."""
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"rein run did not end within {timeout_s} s\n{err[-3000:]}")
    assert proc.returncode == 0, err[-3000:]
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [e for e in events if e.get("type") == "tool_call_end"]


def _run(tmp_path: Path, root: Path, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return _finish(_start(tmp_path, root, turns, "run"))


# ------------------------------------------------------------ no lost edits


def test_two_edits_of_one_file_in_one_turn_both_land(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f.py").write_text("".join(f"v{i} = {i}\n" for i in range(8)))
    # Tools run in parallel by default: eight edits of one file at once.
    turn = {"tool_calls": [_edit("f.py", f"v{i} = {i}\n", f"v{i} = {i + 100}\n") for i in range(8)]}
    results = _run(tmp_path, root, [turn])
    assert [r["is_error"] for r in results] == [False] * 8, results
    assert (root / "f.py").read_text() == "".join(f"v{i} = {i + 100}\n" for i in range(8))


def test_two_rein_run_processes_editing_one_file_lose_no_edit(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    per_process, turns = 12, 3
    names = ("a", "b")
    lines = [f"{n}{i} = 0\n" for n in names for i in range(per_process * turns)]
    (root / "f.py").write_text("".join(lines))

    def script(name: str) -> list[dict[str, Any]]:
        return [
            {
                "tool_calls": [
                    _edit("f.py", f"{name}{i} = 0\n", f"{name}{i} = 1\n")
                    for i in range(t * per_process, (t + 1) * per_process)
                ]
            }
            for t in range(turns)
        ]

    procs = [_start(tmp_path, root, script(n), n) for n in names]
    results = [r for proc in procs for r in _finish(proc)]
    assert len(results) == 2 * per_process * turns
    assert [r for r in results if r["is_error"]] == []
    # Every one of the 72 edits is in the file.
    assert (root / "f.py").read_text() == "".join(line.replace(" = 0", " = 1") for line in lines)


# ------------------------------------------------ special and large files


def _special_files(root: Path) -> None:
    os.mkfifo(root / "pipe")
    if os.geteuid() == 0:
        os.mknod(root / "zero", 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero
    with (root / "big.txt").open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # 200 MB (sparse)
    (root / "ok.py").write_text("x = 1\n")


@pytest.mark.parametrize(
    ("path", "says"),
    [
        pytest.param("pipe", "pipe is a named pipe (FIFO), not a regular file", id="fifo"),
        pytest.param("zero", "zero is a device, not a regular file", id="device"),
        pytest.param("big.txt", "big.txt is 200.0 MB, too large to read or edit", id="200MB"),
    ],
)
def test_a_special_or_huge_file_costs_a_clear_error_and_no_hang(
    tmp_path: Path, path: str, says: str
) -> None:
    if path == "zero" and os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    root = tmp_path / "ws"
    root.mkdir()
    _special_files(root)
    turns = [
        {"tool_calls": [_edit(path, "a", "b")]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]},
        # The run goes on: a normal edit after them lands.
        {"tool_calls": [_edit("ok.py", "x = 1", "x = 2")]},
    ]
    started = time.monotonic()
    results = _run(tmp_path, root, turns)
    elapsed = time.monotonic() - started
    edit, read, after = results
    assert edit["is_error"] and says in edit["content"], edit
    assert read["is_error"], read
    assert not after["is_error"] and (root / "ok.py").read_text() == "x = 2\n"
    assert elapsed < 30, elapsed


def test_a_fifo_made_by_an_approved_command_does_not_hang_the_reads(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    command = {"name": "run_command", "arguments": {"command": "mkfifo made"}}
    turns = [
        {"tool_calls": [command]},
        {"tool_calls": [_edit("made", "a", "b")]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "made"}}]},
    ]
    made, edit, read = _run(tmp_path, root, turns)
    assert not made["is_error"], made
    assert stat.S_ISFIFO((root / "made").stat().st_mode)
    assert edit["is_error"] and "named pipe (FIFO)" in edit["content"], edit
    assert read["is_error"] and "not a regular file" in read["content"], read


# ------------------------------------------------------------ faithful bytes


def test_rein_run_edits_keep_every_byte_they_do_not_change(tmp_path: Path) -> None:
    """Every case of the table in one run (a file each, a turn each): one
    ``rein run`` process rather than one per case."""
    root = tmp_path / "ws"
    root.mkdir()
    cases = {f"{case}.py": values for case, values in cases_by_id().items()}
    for name, (before, _old, _new, _after) in cases.items():
        (root / name).write_bytes(before)
    turns = [{"tool_calls": [_edit(name, old, new)]} for name, (_b, old, new, _a) in cases.items()]
    edits = _run(tmp_path, root, turns)
    assert [e["is_error"] for e in edits] == [False] * len(cases), edits
    assert {name: (root / name).read_bytes() for name in cases} == {
        name: after for name, (_b, _o, _n, after) in cases.items()
    }
