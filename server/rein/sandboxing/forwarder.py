"""Run inside the sandbox (``python -S forwarder.py SOCKET PORT -- COMMAND``):
listen on the sandbox's own loopback at ``PORT`` and pass each connection
to the allowlist proxy's unix ``SOCKET`` (:mod:`rein.sandboxing.proxy`),
while ``COMMAND`` runs; exit with its exit code. Standard library only,
no Rein import: it starts in a few milliseconds."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading


def pipe(source: socket.socket, target: socket.socket) -> None:
    """Copy ``source`` to ``target`` until either ends, then shut both
    (also the allowlist proxy's, which imports it from here)."""
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            continue
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()


def main(argv: list[str]) -> int:
    path, port, dashes, *command = argv
    if dashes != "--" or not command:
        print("usage: forwarder.py SOCKET PORT -- COMMAND...", file=sys.stderr)
        return 2
    listener = socket.create_server(("127.0.0.1", int(port)))
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    child = subprocess.Popen(command)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda s, _f: child.send_signal(s))
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
