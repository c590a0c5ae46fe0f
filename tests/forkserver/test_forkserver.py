"""The fork server's contract: a program started through the stand-in sees
what it would see started by ``python -m`` (tests/forkserver/probe.py
reports it, each time saying who started it), ends the same way, gets the
same signals, dies with its stand-in; and a start that could differ is a
real ``python -m``."""

from __future__ import annotations

import json
import os
import pty
import resource
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.forkserver import SHIM, VARIABLE, fork_server

PROBE = Path(__file__).resolve().with_name("probe.py")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder of its own (not the server's), the probe importable from it
    as ``probe`` (``-m`` puts the folder first on ``sys.path``)."""
    shutil.copy(PROBE, tmp_path / "probe.py")
    return tmp_path


def _start(
    forked: bool, action: str, folder: Path, env: dict[str, str] | None = None, **kwargs: Any
) -> subprocess.Popen[str]:
    env = dict(os.environ if env is None else env)
    if not forked:
        env.pop(VARIABLE, None)
    env["FORKSERVER_PROBE_PARENT"] = str(folder / "parent")
    command = [sys.executable, str(SHIM), "--module"] if forked else [sys.executable, "-m"]
    kwargs.setdefault("stdin", subprocess.PIPE)
    return subprocess.Popen(
        [*command, "probe", action],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def _forked(folder: Path) -> bool:
    """Whether the probe's last start was a fork (its parent is not this
    test's process)."""
    return int((folder / "parent").read_text()) != os.getpid()


def _run(
    forked: bool, action: str, folder: Path, stdin: str = "", **kwargs: Any
) -> tuple[int, str, str]:
    process = _start(forked, action, folder, **kwargs)
    out, err = process.communicate(stdin, timeout=60)
    assert _forked(folder) == forked
    return process.returncode, out, err


def _state(forked: bool, folder: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    # Its own process group and an umask of its own, handed on as they are.
    process = _start(
        forked, "state", folder, env, process_group=0, preexec_fn=lambda: os.umask(0o027)
    )
    out, err = process.communicate("", timeout=60)
    assert process.returncode == 0, err
    assert _forked(folder) == forked
    state = json.loads(out)
    assert state.pop("group") == process.pid  # the stand-in's group is the started one's
    return state  # type: ignore[no-any-return]


@pytest.fixture
def running_beside(folder: Path) -> Iterator[None]:
    """Another forked program running meanwhile (nothing of it may reach the
    next one)."""
    other = folder / "other"
    other.mkdir()
    shutil.copy(PROBE, other / "probe.py")
    process = _start(True, "wait", other)
    assert process.stdout is not None
    assert int(process.stdout.readline()) > 0 and _forked(other)
    yield
    process.communicate("", timeout=60)


@pytest.fixture
def toggled_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of a fork server started with the other
    ``PYTHONUNBUFFERED`` (its streams' buffering is made by the server)."""
    env = dict(os.environ)
    if env.pop("PYTHONUNBUFFERED", None) is None:
        env["PYTHONUNBUFFERED"] = "1"
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        with fork_server(tmp_path_factory.mktemp("toggled")) as path:
            os.environ.clear()
            os.environ.update(saved)
            yield {**env, VARIABLE: path}
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.mark.usefixtures("running_beside")
def test_a_forked_start_sees_what_a_real_start_sees(folder: Path) -> None:
    assert os.environ.get(VARIABLE), "the suite's fork server is not running"
    real, forked = _state(False, folder), _state(True, folder)
    assert real == forked
    assert real["cwd"] == real["path0"] == str(folder) and real["umask"] == 0o027


def test_the_streams_are_made_as_under_the_other_buffering(
    folder: Path, toggled_server: dict[str, str]
) -> None:
    real = _state(False, folder, toggled_server)
    assert real == _state(True, folder, toggled_server)
    assert real["streams"]["stdout"]["write_through"] == ("PYTHONUNBUFFERED" in toggled_server)


@pytest.mark.parametrize(
    ("action", "code", "out", "err"),
    [
        ("exit-3", 3, "unflushed", ""),
        ("exit-text", 1, "", "said on stderr\n"),
        ("killed", -signal.SIGTERM, "", ""),
        ("at-exit", 0, "thread joined\natexit ran\n", ""),
        ("echo", 0, "THROUGH THE PIPES", ""),
    ],
)
def test_a_forked_start_ends_as_a_real_one(
    folder: Path, action: str, code: int, out: str, err: str
) -> None:
    for forked in (False, True):
        assert _run(forked, action, folder, "through the pipes") == (code, out, err), forked


@pytest.mark.parametrize(
    ("action", "code", "out", "last_line"),
    [
        ("crash", 1, "", "ValueError: the probe's own error"),
        ("interrupted", -signal.SIGINT, "partial", "KeyboardInterrupt"),
    ],
)
def test_a_forked_start_fails_as_a_real_one(
    folder: Path, action: str, code: int, out: str, last_line: str
) -> None:
    for forked in (False, True):
        returncode, stdout, stderr = _run(forked, action, folder)
        assert (returncode, stdout) == (code, out), forked
        assert stderr.startswith("Traceback (most recent call last):"), stderr
        assert stderr.splitlines()[-1] == last_line, forked


def test_a_file_left_open_is_written_out_at_the_end(folder: Path) -> None:
    for forked in (False, True):
        (folder / "left-open.txt").unlink(missing_ok=True)
        assert _run(forked, "left-open", folder) == (0, "", "")
        assert (folder / "left-open.txt").read_text() == "written, never closed", forked


def test_a_signal_to_the_stand_in_reaches_the_program(folder: Path) -> None:
    process = _start(True, "wait-for-signal", folder)
    assert process.stdout is not None
    assert int(process.stdout.readline()) > 0 and _forked(folder)
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=60)
    assert (process.returncode, out) == (5, "got SIGTERM\n")


def test_killing_the_stand_in_kills_the_program(folder: Path) -> None:
    process = _start(True, "wait", folder)
    assert process.stdout is not None and process.stdin is not None
    assert int(process.stdout.readline()) > 0 and _forked(folder)
    process.kill()
    process.wait(timeout=60)
    # The program held the other end of stdout: the end comes when it dies.
    ready, _, _ = select.select([process.stdout], [], [], 60)
    assert ready and process.stdout.read() == ""
    process.stdin.close()


@pytest.mark.parametrize(
    "how",
    [
        "another interpreter setting",
        "a loader variable",
        "a new session",
        "a descriptor past 2",
        "another resource limit",
        "another mount namespace",
        "a terminal",
        "a closed stdin",
    ],
)
def test_a_start_that_could_differ_is_a_real_one(folder: Path, how: str) -> None:
    env = dict(os.environ)
    kwargs: dict[str, Any] = {}
    read, write = os.pipe()
    leader, follower = pty.openpty()
    if how == "another interpreter setting":
        env["PYTHONHASHSEED"] = "7"
    elif how == "a loader variable":
        env["MALLOC_ARENA_MAX"] = "2"
    elif how == "a new session":
        kwargs["start_new_session"] = True
    elif how == "a descriptor past 2":
        kwargs["pass_fds"] = (read,)
    elif how == "another resource limit":
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        kwargs["preexec_fn"] = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    elif how == "a terminal":
        kwargs["stdin"] = follower
    elif how == "a closed stdin":
        kwargs["stdin"] = subprocess.DEVNULL
        kwargs["preexec_fn"] = lambda: os.close(0)
    try:
        if how == "another mount namespace":
            env["FORKSERVER_PROBE_PARENT"] = str(folder / "parent")
            done = subprocess.run(
                ["unshare", "-rm", sys.executable, str(SHIM), "--module", "probe", "exit-3"],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert (done.returncode, done.stdout) == (3, "unflushed")
            assert not _forked(folder)
            return
        process = _start(True, "exit-3", folder, env, **kwargs)
        process.communicate(timeout=60)
    finally:
        for fd in (read, write, leader, follower):
            os.close(fd)
    assert not _forked(folder) and process.returncode == 3
