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


@pytest.fixture(autouse=True, scope="session")
def _private_user_data(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Sessions that tests (and the servers and ``rein run`` they start) keep
    in the default store go to a temporary folder, not the user's."""
    import os

    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg-data"))
