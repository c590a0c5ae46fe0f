"""The TCP ports a process group listens on, from ``/proc`` (Linux;
elsewhere none): the sockets in LISTEN state of the group's network
namespace whose inodes a process of the group holds open."""

from __future__ import annotations

import os

from rein.process.groups import group_members

__all__ = ["listening_ports"]

#: The state column of /proc/net/tcp for a listening socket.
_LISTEN = "0A"


def _socket_inodes(pid: str) -> set[str]:
    inodes: set[str] = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def _listening(pid: str, inodes: set[str]) -> set[int]:
    ports: set[int] = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) < 10 or fields[3] != _LISTEN or fields[9] not in inodes:
                continue
            try:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
            except (IndexError, ValueError):
                continue
    return ports


def listening_ports(pgid: int) -> set[int]:
    """The TCP ports (IPv4 and IPv6) a live process of group ``pgid``
    listens on; empty without ``/proc`` or once the group is gone."""
    if not os.path.isdir("/proc/self/fd"):
        return set()
    ports: set[int] = set()
    for pid in group_members(pgid, live_only=True):
        inodes = _socket_inodes(pid)
        if inodes:
            ports |= _listening(pid, inodes)
    return ports
