"""A process that reports how it was started, for the fork server's own test
(``python -m tests.forkserver.probe ACTION``, or the same through the
stand-in): what a program run as ``__main__`` can see of its start, then
ACTION."""

from __future__ import annotations

import atexit
import json
import os
import signal
import sys
import threading
import time


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _state() -> dict[str, object]:
    streams = {}
    for name in ("stdin", "stdout", "stderr"):
        stream = getattr(sys, name)
        streams[name] = {
            "encoding": stream.encoding,
            "errors": stream.errors,
            "line_buffering": stream.line_buffering,
            "write_through": stream.write_through,
            "mode": stream.mode,
            "buffer": type(stream.buffer).__name__,
            "name": getattr(stream.buffer, "raw", stream.buffer).name,
            "fileno": stream.fileno(),
            "same_as_dunder": stream is getattr(sys, f"__{name}__"),
        }
    return {
        "main": __name__,
        "argv": sys.argv,
        "cwd": os.getcwd(),
        "path0": sys.path[0],
        "env": dict(os.environ),
        "umask": _umask(),
        "group": os.getpgrp(),
        "session": os.getsid(0),
        "signals": {
            str(int(sig)): repr(signal.getsignal(sig))
            for sig in sorted(signal.valid_signals())
            if sig not in (signal.SIGKILL, signal.SIGSTOP)
        },
        "blocked": sorted(int(sig) for sig in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        "threads": threading.active_count(),
        "streams": streams,
        "open_fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    }


_LEFT_OPEN: list[object] = []


def main(action: str) -> None:
    parent_file = os.environ.get("FORKSERVER_PROBE_PARENT")
    if parent_file:  # who started it: the test (a real start) or a fork server
        with open(parent_file, "w", encoding="ascii") as out:
            out.write(str(os.getppid()))
    if action == "state":
        print(json.dumps(_state()))
    elif action == "exit-3":
        sys.stdout.write("unflushed")  # flushed as the interpreter ends
        raise SystemExit(3)
    elif action == "exit-text":
        raise SystemExit("said on stderr")
    elif action == "crash":
        raise ValueError("the probe's own error")
    elif action == "killed":
        os.kill(os.getpid(), signal.SIGTERM)
    elif action == "interrupted":
        sys.stdout.write("partial")  # flushed as the interpreter ends
        raise KeyboardInterrupt
    elif action == "left-open":
        file = open("left-open.txt", "w", encoding="utf-8")  # never closed: the point
        file.write("written, never closed")  # written out as the interpreter ends
        _LEFT_OPEN.append(file)
    elif action == "echo":
        sys.stdout.write(sys.stdin.read().upper())
    elif action == "at-exit":
        atexit.register(lambda: print("atexit ran"))
        threading.Thread(target=lambda: (time.sleep(0.2), print("thread joined"))).start()
    elif action == "wait-for-signal":
        signal.signal(signal.SIGTERM, lambda *_: (os.write(1, b"got SIGTERM\n"), os._exit(5)))
        print(os.getpid(), flush=True)
        signal.pause()
    elif action == "wait":
        print(os.getpid(), flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main(sys.argv[1])
