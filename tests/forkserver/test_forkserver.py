"""The fork server's contract: a program started through the stand-in sees
what it would see started by ``python -m`` (tests/forkserver/probe.py
reports it), ends the same way, gets the same signals, dies with its
stand-in; and a start that could differ is a real ``python -m``."""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.forkserver import SHIM, VARIABLE

ROOT = Path(__file__).resolve().parents[2]
PROBE = "tests.forkserver.probe"


def _command(forked: bool, action: str) -> list[str]:
    if forked:
        return [sys.executable, str(SHIM), "--module", PROBE, action]
    return [sys.executable, "-m", PROBE, action]


def _env(forked: bool) -> dict[str, str]:
    env = dict(os.environ)
    if not forked:
        env.pop(VARIABLE, None)
    return env


def _run(forked: bool, action: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("env", _env(forked))
    return subprocess.run(
        _command(forked, action),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        **kwargs,
    )


def _state(forked: bool, **kwargs: Any) -> dict[str, Any]:
    done = _run(forked, "state", **kwargs)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _was_forked(done_pid: int, reported_pid: int) -> bool:
    return done_pid != reported_pid


def _pid_line(process: subprocess.Popen[str]) -> int:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 60)
    assert ready, "the probe never said its pid"
    return int(process.stdout.readline())


def test_a_forked_start_sees_what_a_real_start_sees() -> None:
    assert os.environ.get(VARIABLE), "the suite's fork server is not running"
    real, forked = _state(False), _state(True)
    assert real == forked


@pytest.mark.parametrize(
    ("action", "code", "out", "err"),
    [
        ("exit-3", 3, "unflushed", ""),
        ("exit-text", 1, "", "said on stderr\n"),
        ("killed", -signal.SIGTERM, "", ""),
        ("at-exit", 0, "thread joined\natexit ran\n", ""),
    ],
)
def test_a_forked_start_ends_as_a_real_one(action: str, code: int, out: str, err: str) -> None:
    for forked in (False, True):
        done = _run(forked, action)
        assert (done.returncode, done.stdout, done.stderr) == (code, out, err), forked


@pytest.mark.parametrize(
    ("action", "code", "last_line"),
    [
        ("crash", 1, "ValueError: the probe's own error"),
        ("interrupted", -signal.SIGINT, "KeyboardInterrupt"),
    ],
)
def test_a_forked_start_fails_as_a_real_one(action: str, code: int, last_line: str) -> None:
    for forked in (False, True):
        done = _run(forked, action)
        assert done.returncode == code, forked
        assert done.stderr.startswith("Traceback (most recent call last):"), done.stderr
        assert done.stderr.splitlines()[-1] == last_line, forked


def test_a_forked_start_reads_and_writes_the_callers_pipes() -> None:
    for forked in (False, True):
        assert _run(forked, "echo", input="through the pipes").stdout == "THROUGH THE PIPES"


def test_a_signal_to_the_stand_in_reaches_the_program() -> None:
    process = subprocess.Popen(
        _command(True, "wait-for-signal"), cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    pid = _pid_line(process)
    assert _was_forked(process.pid, pid)
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=60)
    assert (process.returncode, out) == (5, "got SIGTERM\n")


def test_killing_the_stand_in_kills_the_program() -> None:
    process = subprocess.Popen(
        _command(True, "wait"),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    pid = _pid_line(process)
    assert _was_forked(process.pid, pid)
    process.kill()
    process.wait(timeout=60)
    assert process.stdout is not None
    # The program held the other end of stdout: the end comes when it dies.
    ready, _, _ = select.select([process.stdout], [], [], 60)
    assert ready and process.stdout.read() == ""
    assert process.stdin is not None
    process.stdin.close()


@pytest.mark.parametrize(
    "how",
    [
        "another interpreter setting",
        "a new session",
        "a descriptor past 2",
        "another resource limit",
        "another mount namespace",
    ],
)
def test_a_start_that_could_differ_is_a_real_one(how: str) -> None:
    env = _env(True)
    kwargs: dict[str, Any] = {}
    if how == "another interpreter setting":
        env["PYTHONHASHSEED"] = "7"
    elif how == "a new session":
        kwargs["start_new_session"] = True
    elif how == "another resource limit":
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        kwargs["preexec_fn"] = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    read, write = os.pipe()
    try:
        if how == "a descriptor past 2":
            kwargs["pass_fds"] = (read,)
        wrapper = ["unshare", "-rm"] if how == "another mount namespace" else []
        process = subprocess.Popen(
            [*wrapper, *_command(True, "wait")],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            **kwargs,
        )
        pid = _pid_line(process)
        out, _ = process.communicate("", timeout=60)
    finally:
        os.close(read)
        os.close(write)
    assert not _was_forked(process.pid, pid) and process.returncode == 0
