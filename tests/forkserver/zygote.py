"""The fork server: a process that has imported rein once and forks a
``rein ARGS...`` for each stand-in (tests/forkserver/shim.py) that asks.

Run as a script, ``python tests/forkserver/zygote.py SOCKET``; it prints
``ready`` when it listens and ends when its standard input does (the test
worker that started it has gone). It never starts a thread, so a fork of it
is a fork of a single-threaded process.

The forked child is made into the process ``python -m rein ARGS...`` started
by the stand-in would be: the stand-in's standard streams, arguments,
environment, working folder (first on ``sys.path``, as ``-m`` puts it), umask,
blocked and ignored signals, Python's own signal handlers, the stand-in's
process group; then ``rein.__main__`` runs as ``__main__`` and the child ends as the
interpreter ends (threads joined, ``atexit`` run, streams flushed). A start
that could differ (another interpreter setting or locale in the environment,
a terminal, a file descriptor past 2 passed on, another session) is refused
and the stand-in execs ``python -m rein`` itself."""

from __future__ import annotations

import array
import atexit
import gc
import importlib
import io
import json
import os
import selectors
import signal
import socket
import sys
import threading
import traceback

from shim import process_facts  # the stand-in beside it (run as a script)

#: What ``rein serve``, ``rein run``, ``rein acp`` and the other commands
#: import; each child imports anything else itself, as a real start does.
PRELOAD = (
    "rein.cli",
    "rein.harness.redaction",
    "rein.lsp",
    "rein.headless.run",
    "rein.headless.undo",
    "rein.headless.session_list",
    "rein.headless.mcp_list",
    "rein.headless.doctor",
    "rein.acp.main",
    "rein.providers.mock_server",
)

#: Environment variables that change how an interpreter starts or decodes:
#: a request whose values differ from the server's own is refused.
_INTERPRETER_PREFIXES = ("PYTHON", "LC_")
_INTERPRETER_NAMES = ("LANG", "LANGUAGE")


def _interpreter_settings(env: dict[str, str]) -> dict[str, str]:
    return {
        key: value
        for key, value in env.items()
        if key.startswith(_INTERPRETER_PREFIXES) or key in _INTERPRETER_NAMES
    }


def refusal(request: dict[str, object], own_env: dict[str, str]) -> str | None:
    """Why a forked start could differ from ``python -m rein`` for this
    request, or None."""
    env = request["env"]
    assert isinstance(env, dict)
    if _interpreter_settings(env) != _interpreter_settings(own_env):
        return "interpreter settings differ"
    if request["fds"]:
        return "file descriptors past 2 are open"
    if any(request["ttys"]):  # type: ignore[attr-defined]
        return "a standard stream is a terminal"
    if request["sid"] != os.getsid(0):
        return "another session"
    if request["process"] != process_facts():
        return "another user, namespace, root folder or resource limit"
    return None


def _stdio() -> None:
    """Standard streams over descriptors 0-2 as the interpreter makes them at
    start (``create_stdio``): "\\n" newlines; stdin buffered; stdout and
    stderr buffered (line-buffered on a terminal, stderr always), or written
    through unbuffered under ``-u`` / ``PYTHONUNBUFFERED``; stderr with
    backslash escapes."""
    encoding = sys.__stdout__.encoding  # type: ignore[union-attr]
    errors = sys.__stdout__.errors  # type: ignore[union-attr]
    unbuffered = sys.__stdout__.write_through  # type: ignore[union-attr]
    made = []
    for fd, mode, name in ((0, "r", "<stdin>"), (1, "w", "<stdout>"), (2, "w", "<stderr>")):
        raw = io.FileIO(fd, mode + "b", closefd=False)
        raw.name = name  # type: ignore[misc]
        buffer: io.RawIOBase | io.BufferedIOBase
        if mode == "r":
            buffer = io.BufferedReader(raw)
        elif unbuffered:
            buffer = raw
        else:
            buffer = io.BufferedWriter(raw)
        stream = io.TextIOWrapper(
            buffer,  # type: ignore[arg-type]
            encoding=encoding,
            errors="backslashreplace" if fd == 2 else errors,
            newline="\n",
            line_buffering=not unbuffered and (fd == 2 or (fd == 1 and raw.isatty())),
            write_through=unbuffered,
        )
        stream.mode = mode  # type: ignore[misc]
        made.append(stream)
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made  # type: ignore[misc]


def _signals(ignored: list[int], blocked: list[int]) -> None:
    signal.set_wakeup_fd(-1)
    for sig in signal.valid_signals():
        if sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(sig, signal.SIG_IGN if sig in ignored else signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    # What the interpreter installs at start.
    if signal.SIGINT not in ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish(code: int) -> None:
    """End as the interpreter ends: non-daemon threads joined, ``atexit``
    functions run, the standard streams that are still open flushed (120
    when one cannot be, as ``Py_FinalizeEx`` fails)."""
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None or stream.closed:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            code = 120
    os._exit(code)


#: The server's own standard streams, kept from finalization in a child
#: (which would close descriptors 0-2, the stand-in's streams by then).
_KEPT: list[object] = []


def _child(request: dict[str, object], fds: list[int], closing: list[object]) -> None:
    for item in closing:  # the server's sockets and pipe: not rein's
        if isinstance(item, int):
            os.close(item)
        else:
            item.close()  # type: ignore[attr-defined]
    try:  # the stand-in's group, as its exec would have been in
        os.setpgid(0, int(request["pgid"]))  # type: ignore[arg-type]
    except OSError:
        os.setpgid(0, 0)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(str(request["cwd"]))
    os.umask(int(request["umask"]))  # type: ignore[arg-type]
    os.environ.clear()
    os.environ.update(request["env"])  # type: ignore[arg-type]
    _signals(request["ignored"], request["blocked"])  # type: ignore[arg-type]
    _KEPT.extend((sys.stdin, sys.stdout, sys.stderr))
    _stdio()
    sys.path[0] = os.getcwd()
    sys.argv = ["-m", *request["argv"]]  # type: ignore[misc]
    import runpy

    try:
        runpy.run_module(str(request["module"]), run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit_:
        code = _exit_code(exit_.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:
        sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]
        code = 1
    _finish(code)


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]] | None:
    fds = array.array("i")
    data, ancillary, _flags, _addr = conn.recvmsg(1 << 20, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if not data or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    return json.loads(data), list(fds)


def serve(path: str) -> None:
    own_env = dict(os.environ)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    assert threading.active_count() == 1, "an import started a thread"
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_r, selectors.EVENT_READ, "child")
    selector.register(sys.stdin, selectors.EVENT_READ, "parent")
    children: dict[int, socket.socket] = {}
    print("ready", flush=True)
    while True:
        for key, _events in selector.select():
            if key.data == "parent":
                if not os.read(sys.stdin.fileno(), 4096):
                    for pid in children:
                        os.kill(pid, signal.SIGKILL)
                    return
            elif key.data == "accept":
                conn, _ = listener.accept()
                received = _receive(conn)
                if received is None:
                    conn.close()
                    continue
                request, fds = received
                why = refusal(request, own_env)
                if why is not None:
                    for fd in fds:
                        os.close(fd)
                    conn.send(json.dumps({"exec": why}).encode())
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    try:
                        closing = [selector, listener, wake_r, wake_w, conn, *children.values()]
                        _child(request, fds, closing)
                    except BaseException:  # said on the stand-in's stderr
                        traceback.print_exc()
                    finally:
                        os._exit(70)
                for fd in fds:
                    os.close(fd)
                children[pid] = conn
                conn.send(json.dumps({"pid": pid}).encode())
                selector.register(conn, selectors.EVENT_READ, pid)
            elif key.data == "child":
                os.read(wake_r, 4096)
                while children:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    conn = children.pop(pid, None)
                    if conn is not None:
                        if conn.fileno() in selector.get_map():
                            selector.unregister(conn)
                        try:
                            conn.send(json.dumps({"status": status}).encode())
                        except OSError:
                            pass
                        conn.close()
            else:  # the stand-in closed its end: it was killed
                pid = key.data
                conn = key.fileobj  # type: ignore[assignment]
                if not conn.recv(16):
                    selector.unregister(conn)
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass


if __name__ == "__main__":
    serve(sys.argv[1])
