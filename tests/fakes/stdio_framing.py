"""The JSON-RPC framing of the tiny language servers some tests write out
as scripts and start as real processes: :data:`FRAMING` is the head of
such a script, defining ``messages()`` (each message read from stdin, until
it ends) and ``send(message)``; the test adds what its server does with
them."""

from __future__ import annotations

__all__ = ["FRAMING"]

FRAMING = """\
import json
import sys

stdin, stdout = sys.stdin.buffer, sys.stdout.buffer


def send(message):
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    stdout.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    stdout.flush()


def messages():
    while True:
        length = 0
        while (line := stdin.readline().strip()):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        if not length:
            return
        yield json.loads(stdin.read(length))

"""
