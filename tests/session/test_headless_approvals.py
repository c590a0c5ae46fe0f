"""Headless approvals follow the editor's policy (writes inside the
workspace allowed; commands asked here with ``approval.command: "ask"``,
the default "sandboxed" runs them in the sandbox: tests/e2e/test_sandbox.py).
``rein run`` without ``--yes`` and without a terminal refuses an asked
command with a result the model reads; ``--yes`` approves; on a terminal
the person is asked (a real pty)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from rein.config import ReinConfig, load_config
from rein.headless.run import NO_TERMINAL
from rein.hosting.headless import ApproveAll, HeadlessSession
from rein.providers.replay import ReplayModel
from tests.forkserver import REIN

NO_ANALYZERS = {"gates": {"analyzer": {"enabled": False}}}
ASKED = {**NO_ANALYZERS, "approval": {"command": "ask"}}


def _script(expect: str, command: str = "touch ran.txt") -> list[dict[str, object]]:
    """Run a command that leaves a marker, then answer; the second turn's
    contract checks what the model read about the command."""
    return [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
        {"expect": {"last_message_contains": expect}, "text": "done"},
    ]


def _files(
    tmp_path: Path,
    expect: str,
    approval: dict[str, object] | None = None,
    command: str = "touch ran.txt",
) -> tuple[Path, list[str]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": _script(expect, command)}))
    config = tmp_path / "rein.json"
    config.write_text(
        json.dumps({**NO_ANALYZERS, "approval": {"command": "ask", **(approval or {})}})
    )
    args = [
        *REIN,
        "run",
        "run the command",
        "-w",
        str(ws),
        "--provider",
        "replay",
        "--script",
        str(script),
        "--config",
        str(config),
        "--storage",
        str(tmp_path / "store"),
        "--json",
    ]
    return ws, args


def _tool_end(stdout: str) -> dict[str, object]:
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    ends = [e for e in events if e.get("type") == "tool_call_end"]
    assert len(ends) == 1, events
    return ends[0]


async def test_a_headless_session_without_an_approver_refuses_commands(tmp_path: Path) -> None:
    model = ReplayModel(_script("no one can approve in this session"))
    config = load_config(ASKED)
    events: list[Any] = []
    async with HeadlessSession(tmp_path, model, config, analyzers=(), watch=False) as host:
        host.subscribe(events.append)
        result = await host.prompt("run the command")
    assert result.status == "completed", result.error
    assert not (tmp_path / "ran.txt").exists()
    (end,) = [e for e in events if e.type == "tool_call_end"]
    assert end.is_error and end.details == {"denied": True, "reason": "no_approver"}


async def test_writes_stay_allowed_without_an_approver(tmp_path: Path) -> None:
    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}
                ]
            },
            {"text": "done"},
        ]
    )
    async with HeadlessSession(tmp_path, model, ReinConfig(), analyzers=(), watch=False) as host:
        result = await host.prompt("write")
    assert result.status == "completed", result.error
    assert (tmp_path / "a.txt").read_text() == "x"


async def test_approve_all_is_an_explicit_choice(tmp_path: Path) -> None:
    model = ReplayModel(_script("exit code 0"))
    async with HeadlessSession(
        tmp_path, model, ReinConfig(), analyzers=(), watch=False, approver=ApproveAll()
    ) as host:
        result = await host.prompt("run the command")
    assert result.status == "completed", result.error
    assert (tmp_path / "ran.txt").exists()


@pytest.mark.e2e
def test_rein_run_without_a_terminal_refuses_the_command_readably(tmp_path: Path) -> None:
    ws, args = _files(tmp_path, "no terminal to ask on")
    out = subprocess.run(
        args, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    end = _tool_end(out.stdout)
    assert end["is_error"] is True
    assert NO_TERMINAL in str(end["content"])
    assert end["details"] == {"denied": True, "reason": "approver_unavailable"}
    assert not (ws / "ran.txt").exists()


@pytest.mark.e2e
def test_rein_run_with_yes_runs_the_command(tmp_path: Path) -> None:
    ws, args = _files(tmp_path, "exit code 0")
    out = subprocess.run(
        [*args, "--yes"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert _tool_end(out.stdout)["is_error"] is False
    assert (ws / "ran.txt").exists()


def _read_until(fd: int, marker: bytes, limit_s: float) -> bytes:
    """Read ``fd`` until ``marker`` appears (select-bounded, no sleeps)."""
    seen = b""
    deadline = time.monotonic() + limit_s
    while marker not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {marker!r} within {limit_s} s; got {seen[-2000:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 4096)
            assert chunk, f"the stream ended before {marker!r}; got {seen[-2000:]!r}"
            seen += chunk
    return seen


@contextmanager
def _on_a_terminal(args: list[str]) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``rein run`` (``args``) with a pseudo-terminal as its stdin, as a
    person at a terminal starts it: the process (stdout and stderr piped) and
    the terminal's side the person types on. Killed if still running after."""
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(args, stdin=secondary, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(secondary)
    try:
        assert proc.stderr is not None and proc.stdout is not None
        yield proc, primary
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(primary)


def _finished(proc: subprocess.Popen[bytes]) -> str:
    """The run's whole stdout, once it exited with status 0."""
    assert proc.stdout is not None
    stdout = proc.stdout.read().decode()
    assert proc.wait(timeout=60) == 0, stdout[-2000:]
    return stdout


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("answer", "expect", "ran"),
    [
        pytest.param(b"y\n", "exit code 0", True, id="approved"),
        pytest.param(b"n\n", "the person declined", False, id="declined"),
    ],
)
def test_rein_run_on_a_terminal_asks_the_person(
    tmp_path: Path, answer: bytes, expect: str, ran: bool
) -> None:
    ws, args = _files(tmp_path, expect)
    with _on_a_terminal(args) as (proc, primary):
        asked = _read_until(proc.stderr.fileno(), b"Allow? [y/N]", 60)
        assert b"touch ran.txt" in asked
        os.write(primary, answer)
        stdout = _finished(proc)
    assert _tool_end(stdout)["is_error"] is (not ran)
    assert (ws / "ran.txt").exists() is ran


@pytest.mark.e2e
def test_rein_run_on_a_terminal_refuses_when_nobody_answers_in_time(tmp_path: Path) -> None:
    """Nobody types: past approval.timeoutMs the call is refused with a
    reason the model reads, and the run goes on."""
    expect = "nobody answered the approval request within 0.5 s (approval.timeoutMs)"
    ws, args = _files(tmp_path, expect, {"timeoutMs": 500})
    with _on_a_terminal(args) as (proc, _):
        stdout = _finished(proc)
    end = _tool_end(stdout)
    assert end["is_error"] is True and expect in str(end["content"])
    assert not (ws / "ran.txt").exists()


@pytest.mark.e2e
def test_rein_run_shows_control_characters_escaped(tmp_path: Path) -> None:
    """Issue 30: a command with ``\\e[2K\\r\\e[1A`` redrew the question so it
    showed ``$ ls -la``; the question shows every control character."""
    hidden = "touch ran.txt; \x1b[2K\r\x1b[1A\u202els -la"
    ws, args = _files(tmp_path, "the person declined", command=hidden)
    with _on_a_terminal(args) as (proc, primary):
        asked = _read_until(proc.stderr.fileno(), b"Allow? [y/N]", 60)
        os.write(primary, b"n\n")
        _finished(proc)
    question = asked[asked.index(b"Rein wants to") :].decode()
    assert "$ touch ran.txt; \\x1b[2K\\r\\x1b[1A\\u202els -la" in question
    assert not any(ord(c) < 0x20 and c != "\n" for c in question), repr(question)
    assert not (ws / "ran.txt").exists()
