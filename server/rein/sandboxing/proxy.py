"""The allowlist proxy: the sandbox's only way out to the network.

The sandbox has no network of its own. With hosts in ``sandbox.network``
Rein runs this proxy on a unix socket in the session's temporary folder
(the one path both sides see); inside, :mod:`rein.sandboxing.forwarder`
listens on the sandbox's own loopback and passes each connection to that
socket, and ``HTTP_PROXY``/``HTTPS_PROXY`` name it, so every program that
honours them goes through here. A program that does not, or a raw socket,
finds no network at all.

It understands ``CONNECT host:port`` (HTTPS, any TLS) and plain HTTP
requests in absolute form (``GET http://host/path``). A listed host is
reached on ports 80 and 443 only, unless the entry names its port
(``example.com:8443``); a trailing dot (``pypi.org.``) is the same host.
Anything else gets ``403`` naming it and the setting, and is kept
(:meth:`AllowlistProxy.take_refused`, at most :data:`MAX_REFUSED`): the
command's result names it, and the person may allow it for the session
(:meth:`AllowlistProxy.allow`). Only a host *name* is kept: a name that is
not one, an IP address in any spelling (``2130706433``, ``127.1``,
``0x7f.1``, ``::1``) or a name that resolves to an address of this
machine or its local network (loopback, link-local, unspecified,
private, multicast, reserved) gets a plain ``403`` and is never offered;
a host allowed for the session is refused the same way when it resolves
to such an address at connection time (it is reached at the address
checked). The hosts of ``sandbox.network`` and of the session's start are
the person's own choice and reached as they are.
Each session has a proxy of its own (its sandbox's), so what one session
allows no other sees. One thread per
connection, at most :data:`MAX_CONNECTIONS` at once (more are refused);
the proxy stops with its sandbox.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import socketserver
import threading
from collections.abc import Iterable
from typing import Any

from rein.sandboxing.forwarder import pipe

__all__ = [
    "HOST_NAME",
    "MAX_CONNECTIONS",
    "MAX_REFUSED",
    "PRESETS",
    "REGISTRY_PRESETS",
    "AllowlistProxy",
    "allowed_hosts",
    "host_allowed",
    "host_name",
    "local_address",
]

#: Connections the proxy serves at once; more get ``503``.
MAX_CONNECTIONS = 64
#: Refused hosts kept for the next :meth:`AllowlistProxy.take_refused`.
MAX_REFUSED = 64
#: The ports of a host listed without one.
DEFAULT_PORTS = (80, 443)

#: ``sandbox.network`` presets: a package registry (or forge) by name.
PRESETS: dict[str, tuple[str, ...]] = {
    "pypi": ("pypi.org", "files.pythonhosted.org"),
    "npm": ("registry.npmjs.org", "registry.yarnpkg.com"),
    "github": (
        "github.com",
        "api.github.com",
        "codeload.github.com",
        "objects.githubusercontent.com",
        "raw.githubusercontent.com",
    ),
    "crates": ("crates.io", "index.crates.io", "static.crates.io"),
    "go": ("proxy.golang.org", "sum.golang.org"),
}

#: The presets of the package registries: the dependency installs reach
#: them when they run sandboxed (``sandbox.also: ["install"]``).
REGISTRY_PRESETS: tuple[str, ...] = ("pypi", "npm", "crates", "go")

_HEAD_LIMIT = 64 * 1024
_CONNECT_TIMEOUT_S = 10.0
_REQUEST = re.compile(rb"^([A-Z]+) (\S+) (HTTP/1\.[01])\r\n")
_ABSOLUTE = re.compile(rb"^http://([^/:?#]+)(?::(\d+))?([^?#]*)?", re.IGNORECASE)


#: A host name (letters, digits, hyphens; dotted labels).
HOST_NAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$"
)


def host_name(name: str) -> bool:
    """Whether ``name`` is a host name, not an IP address in any spelling
    (``2130706433``, ``127.1``, ``0x7f.1``, ``::1``) nor anything else."""
    name = name.rstrip(".")
    if not HOST_NAME.match(name):
        return False
    try:
        socket.inet_aton(name)  # every spelling the C library takes for IPv4
    except OSError:
        return not name.rsplit(".", 1)[-1].isdigit()
    return False


def local_address(address: str) -> bool:
    """Whether ``address`` (an IP address) is this machine's or its local
    network's: loopback, link-local, unspecified, private, multicast,
    reserved (an IPv4 address mapped in IPv6 is judged as itself)."""
    ip = ipaddress.ip_address(address.partition("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_loopback
        or ip.is_link_local
        or ip.is_unspecified
        or ip.is_private
        or ip.is_multicast
        or ip.is_reserved
    )


def _resolve(name: str, port: int) -> list[str]:
    """The addresses of ``name`` (none when it does not resolve)."""
    try:
        found = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in found))


_LOCAL = "it resolves to an address of this machine or its local network"


def _not_a_public_name(name: str, port: int) -> str | None:
    """Why ``name`` is never offered to the person (None: it may be)."""
    if not host_name(name):
        return "not a host name (an IP address, in any spelling, is never offered)"
    if any(local_address(a) for a in _resolve(name, port)):
        return _LOCAL
    return None


def allowed_hosts(entries: Iterable[str]) -> frozenset[str]:
    """The host names ``sandbox.network`` allows (presets expanded)."""
    hosts: set[str] = set()
    for entry in entries:
        hosts.update(PRESETS.get(entry, (entry,)))
    return frozenset(_normal(h) for h in hosts)


def _normal(entry: str) -> str:
    host, colon, port = entry.partition(":")
    return host.lower().rstrip(".") + colon + port


def host_allowed(hosts: frozenset[str], name: str, port: int) -> bool:
    """Whether ``hosts`` (:func:`allowed_hosts`) let a connection to
    ``name:port`` through."""
    name = name.lower().rstrip(".")
    return (name in hosts and port in DEFAULT_PORTS) or f"{name}:{port}" in hosts


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        client: socket.socket = self.request
        client.settimeout(_CONNECT_TIMEOUT_S)
        head = b""
        try:
            while b"\r\n\r\n" not in head and len(head) < _HEAD_LIMIT:
                chunk = client.recv(4096)
                if not chunk:
                    return
                head += chunk
        except OSError:
            return
        match = _REQUEST.match(head)
        if match is None:
            self._refuse(client, 400, "not an HTTP proxy request")
            return
        method, target = match.group(1), match.group(2)
        if method == b"CONNECT":
            host, _, port_text = target.rpartition(b":")
            port = int(port_text) if port_text.isdigit() else 443
        else:
            absolute = _ABSOLUTE.match(target)
            if absolute is None:
                self._refuse(client, 400, "a proxy request names http://host/...")
                return
            host = absolute.group(1)
            port = int(absolute.group(2) or 80)
        name = host.decode("ascii", "replace").strip("[]").lower().rstrip(".")
        address = name
        if not host_allowed(self.server.hosts, name, port):
            if not host_allowed(self.server.session_hosts, name, port):
                self._refuse_host(client, name, port)
                return
            # Allowed for the session only: reached at an address checked now.
            addresses = _resolve(name, port)
            if not addresses:
                why = "the name does not resolve"
                self._refuse(
                    client, 502, f"Rein's sandbox proxy could not reach {name}:{port}: {why}"
                )
                return
            if any(local_address(a) for a in addresses):
                self._refuse(client, 403, f"Rein's sandbox: {name}:{port} is refused: {_LOCAL}")
                return
            address = addresses[0]
        try:
            upstream = socket.create_connection((address, port), timeout=_CONNECT_TIMEOUT_S)
        except OSError as exc:
            self._refuse(client, 502, f"Rein's sandbox proxy could not reach {name}:{port}: {exc}")
            return
        upstream.settimeout(None)
        client.settimeout(None)
        if method == b"CONNECT":
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            rest = head[head.index(b"\r\n\r\n") + 4 :]
        else:
            rest = head
        if rest:
            upstream.sendall(rest)
        back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
        back.start()
        pipe(client, upstream)
        back.join()
        upstream.close()

    def _refuse_host(self, client: socket.socket, name: str, port: int) -> None:
        """``403`` for a host not allowed; kept to be offered when it is a
        public host name (:func:`_not_a_public_name`)."""
        why = _not_a_public_name(name, port)
        if why is not None:
            self._refuse(client, 403, f"Rein's sandbox: {name}:{port} is refused: {why}")
            return
        refused = self.server.refused
        if len(refused) < MAX_REFUSED:
            refused[name if port in DEFAULT_PORTS else f"{name}:{port}"] = None
        self._refuse(
            client,
            403,
            f"Rein's sandbox: {name}:{port} is not in sandbox.network (a host is "
            "reached on ports 80 and 443 unless its entry names the port; the person may "
            "allow it for this session, or add it to the setting)",
        )

    @staticmethod
    def _refuse(client: socket.socket, status: int, why: str) -> None:
        reason = {
            400: "Bad Request",
            403: "Forbidden",
            502: "Bad Gateway",
            503: "Service Unavailable",
        }[status]
        body = (why + "\n").encode()
        try:
            client.sendall(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
        except OSError:
            pass


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, hosts: frozenset[str]) -> None:
        self.hosts = hosts
        #: The hosts allowed for the session only (checked at each connection).
        self.session_hosts: frozenset[str] = frozenset()
        #: The hosts refused since :meth:`AllowlistProxy.take_refused` (in order).
        self.refused: dict[str, None] = {}
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(path, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            _Handler._refuse(
                request, 503, f"Rein's sandbox proxy: over {MAX_CONNECTIONS} connections"
            )
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class AllowlistProxy:
    """The proxy on ``path`` for ``hosts``, in a thread of its own."""

    def __init__(self, path: str, hosts: frozenset[str]) -> None:
        self.path = path
        self._server = _Server(path, hosts)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="rein-sandbox-proxy", daemon=True
        )
        self._thread.start()

    @property
    def hosts(self) -> frozenset[str]:
        return self._server.hosts

    def allow(self, entry: str) -> None:
        """Let ``entry`` (a host name, with a port or not) through from now
        on, for this session: refused when it resolves to an address of this
        machine or its local network (:func:`local_address`)."""
        self._server.session_hosts = self._server.session_hosts | allowed_hosts([entry])

    def take_refused(self) -> list[str]:
        """The host names refused since the last call (``host`` or
        ``host:port``; at most :data:`MAX_REFUSED`)."""
        refused = list(self._server.refused)
        for entry in refused:
            self._server.refused.pop(entry, None)
        return refused

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
