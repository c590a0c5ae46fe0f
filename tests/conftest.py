"""Shared pytest setup. Unit tests are offline: a guard refuses network
connections to anything but loopback."""

from __future__ import annotations

import socket

import pytest

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: object) -> object:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and not (
        host.startswith("127.") or host in ("localhost", "::1") or host.startswith("/")
    ):
        raise RuntimeError(f"tests must not reach the network (tried {address!r})")
    return _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
