"""The real allowlist proxy never offers, nor lets through, a way to the
host's own machine: an IP address in any spelling and a name that
resolves to a local address get a plain 403 and are not kept to be
offered; a name allowed for the session is refused when it resolves to
one; what it keeps is capped."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from rein.sandboxing import proxy
from rein.sandboxing.proxy import AllowlistProxy, host_name, local_address
from tests.sandboxing.hello_host import hello_host


@pytest.fixture
def allowlist(tmp_path: Path) -> Iterator[AllowlistProxy]:
    server = AllowlistProxy(str(tmp_path / "p.sock"), frozenset({"pypi.org"}))
    try:
        yield server
    finally:
        server.close()


def _connect(server: AllowlistProxy, target: str) -> bytes:
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(server.path)
        client.sendall(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
        return client.recv(4096)


def test_an_ip_address_or_a_local_name_is_refused_and_never_offered(
    allowlist: AllowlistProxy,
) -> None:
    with hello_host() as port:
        for name in ("2130706433", "127.1", "0x7f.1", "127.0.0.1", "[::1]", "localhost", "a_b"):
            answer = _connect(allowlist, f"{name}:{port}")
            assert answer.startswith(b"HTTP/1.1 403 Forbidden"), (name, answer)
        assert allowlist.take_refused() == []

        # Allowed for the session, a name that resolves to the loopback is
        # still refused when it is reached.
        allowlist.allow(f"localhost:{port}")
        answer = _connect(allowlist, f"localhost:{port}")
        assert answer.startswith(b"HTTP/1.1 403 Forbidden"), answer
        assert b"resolves to an address of this machine" in answer

    assert _connect(allowlist, "a.example:443").startswith(b"HTTP/1.1 403 Forbidden")
    assert allowlist.take_refused() == ["a.example"]


def test_the_refused_hosts_kept_are_capped(
    allowlist: AllowlistProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxy, "_resolve", lambda name, port: [])
    for n in range(proxy.MAX_REFUSED + 6):
        _connect(allowlist, f"h{n}.example:443")
    assert allowlist.take_refused() == [f"h{n}.example" for n in range(proxy.MAX_REFUSED)]


def test_host_names_and_local_addresses() -> None:
    assert host_name("pypi.org") and host_name("pypi.org.") and host_name("a-1.example")
    for name in ("2130706433", "127.1", "0x7f.1", "10.0.0.1", "::1", "a.b.1", "", "a b"):
        assert not host_name(name), name
    for address in ("127.0.0.1", "::1", "0.0.0.0", "169.254.1.1", "10.1.2.3", "::ffff:127.0.0.1"):
        assert local_address(address), address
    assert not local_address("151.101.0.223") and not local_address("2a04:4e42::223")
