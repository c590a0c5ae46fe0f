"""Process groups: whether one is alive, read from ``/proc`` (Linux)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from typing import Any

import pytest

from rein.process import groups
from rein.process.groups import group_alive, group_members

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_our_own_group_is_alive_and_has_us_as_a_member() -> None:
    pgid = os.getpgid(0)
    assert group_alive(pgid)
    assert str(os.getpid()) in group_members(pgid)


def test_a_group_nobody_is_in_is_not_alive() -> None:
    """A group whose only member ended and was reaped. Old: the number was
    the highest pid not in use, which a process started meanwhile could
    take (CI, pid_max 32768: ``group_alive(32766)`` was True); the kernel
    hands out a just-freed pid again only once its counter wraps around."""
    leader = subprocess.Popen(["true"], start_new_session=True)
    leader.wait()
    assert not group_alive(leader.pid)
    assert group_members(leader.pid) == []


def test_alive_stops_reading_proc_at_the_first_live_member(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Polled every 20 ms while a group ends: one live member is enough."""
    me = str(os.getpid())
    others = [e for e in os.listdir("/proc") if e.isdigit() and e != me]
    real_listdir = os.listdir
    monkeypatch.setattr(
        groups.os, "listdir", lambda path: [me, *others] if path == "/proc" else real_listdir(path)
    )
    read: list[str] = []
    real_open = open

    def counting_open(path: str, *args: Any, **kwargs: Any) -> Any:
        read.append(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(groups, "open", counting_open, raising=False)
    assert group_alive(os.getpgid(0))
    assert read == [f"/proc/{me}/stat"]
    read.clear()
    assert me in group_members(os.getpgid(0))
    assert len(read) == 1 + len(others)


def test_a_member_that_left_for_a_session_of_its_own_is_still_counted() -> None:
    """As bubblewrap's sandbox does (``--new-session``): the program inside,
    whose ports and files the preview reads and which its reload signals,
    is a descendant of the group but not in it."""
    outer = subprocess.Popen(
        ["bash", "-c", "setsid bash -c 'echo $$; exec sleep 30' & wait"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert outer.stdout is not None
        inner = outer.stdout.readline().strip()
        assert inner.isdigit() and os.getpgid(int(inner)) != outer.pid
        assert set(group_members(outer.pid)) >= {str(outer.pid), inner}
    finally:
        os.killpg(outer.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(inner), signal.SIGKILL)
        outer.wait()
