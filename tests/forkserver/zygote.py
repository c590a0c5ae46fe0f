"""The fork server: a process that has imported rein once and forks a
``rein ARGS...`` for each stand-in (tests/forkserver/shim.py) that asks.

Run as a script, ``python tests/forkserver/zygote.py SOCKET``; it prints
``ready`` when it listens and ends when its standard input does (the test
worker that started it has gone). It never starts a thread, so a fork of it
is a fork of a single-threaded process.

The forked child is made into the process ``python -m rein ARGS...`` started
by the stand-in would be (:func:`_become`): the stand-in's standard streams,
arguments, environment, working folder (first on ``sys.path``, as ``-m``
puts it), umask, blocked and ignored signals, Python's own signal handlers,
the stand-in's process group; then rein's ``__main__`` module runs as ``-m``
runs it and the interpreter ends the child as it ends any start (:func:`main`).
A start that could differ is refused (:func:`refusal`, the facts compared
are ``shim.process_facts``) and the stand-in execs ``python -m rein``
itself."""

from __future__ import annotations

import array
import gc
import importlib
import io
import json
import os
import runpy
import selectors
import signal
import socket
import sys
import threading
import time
import types

from shim import interpreter_settings, process_facts  # beside it (run as a script)

#: What ``rein serve``, ``rein run``, ``rein acp`` and the other commands
#: import, at start or later (providers, the SDKs, the renderer); a child
#: imports anything else itself, as a real start does.
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
    "rein.acp.agent",
    "rein.providers.mock_server",
    "rein.providers.replay",
    "rein.providers.openai",
    "rein.providers.anthropic",
    "rein.session.ending",
    "rein.mcp.manager",
    "rein.mcp.client",
    "rein.render",
    "httpx",
    "rich.console",
    "anyio",
    "platformdirs",
)


def refusal(request: dict[str, object], own_env: dict[str, str]) -> str | None:
    """Why a forked start could differ from ``python -m rein`` for this
    request, or None."""
    env = request["env"]
    assert isinstance(env, dict)
    if interpreter_settings(env) != interpreter_settings(own_env):
        return "interpreter settings differ"
    if request["fds"]:
        return "file descriptors past 2 are open"
    if any(request["ttys"]):  # type: ignore[attr-defined]
        return "a standard stream is a terminal"
    if request["sid"] != os.getsid(0):
        return "another session"
    if request["process"] != process_facts():
        return "another user, namespace, root folder, resource limit, CPU set or priority"
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
        size = os.fstat(fd).st_blksize
        size = size if size > 1 else io.DEFAULT_BUFFER_SIZE  # as open() picks it
        buffer: io.RawIOBase | io.BufferedIOBase
        if mode == "r":
            buffer = io.BufferedReader(raw, size)
        elif unbuffered:
            buffer = raw
        else:
            buffer = io.BufferedWriter(raw, size)
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


#: The server's own standard streams (descriptors 0-2, closed when they
#: are finalized): kept, so that a child's end closes them only after its
#: own streams (over the same descriptors by then) are flushed.
_KEPT: list[object] = []
_PR_SET_PDEATHSIG = 1


def _die_with(server: int) -> None:
    """The child is killed when the server dies (a real start has no server
    to outlive)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != server:
        os._exit(70)


def _become(request: dict[str, object], fds: list[int], closing: list[object]) -> str:
    """This fork made into the process ``python -m MODULE ARGS`` would be;
    the module's name."""
    for item in closing:  # the server's sockets and pipe: not the child's
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
    time.tzset()  # TZ as the new environment says
    _signals(request["ignored"], request["blocked"])  # type: ignore[arg-type]
    _KEPT.extend((sys.stdin, sys.stdout, sys.stderr))
    _stdio()
    sys.path[0] = os.getcwd()
    sys.argv = ["-m", *request["argv"]]  # type: ignore[misc]
    return str(request["module"])


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


def serve(path: str) -> tuple[dict[str, object], list[int], list[object]] | None:
    """Serve the stand-ins until standard input ends (None); in a forked
    child, what it is to become."""
    own_env = dict(os.environ)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception as error:  # the child imports it itself and says why
            print(f"not preloaded: {name}: {error!r}", file=sys.stderr, flush=True)
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
                    os.unlink(path)
                    return None
            elif key.data == "accept":
                conn, _ = listener.accept()
                received = _receive(conn)
                if received is None:
                    conn.close()
                    continue
                request, fds = received
                why = refusal(request, own_env)
                if why is not None:
                    argv = request["argv"]
                    print(f"started for real ({why}): {argv[:1]}", file=sys.stderr, flush=True)
                    for fd in fds:
                        os.close(fd)
                    conn.send(json.dumps({"exec": why}).encode())
                    conn.close()
                    continue
                server = os.getpid()
                pid = os.fork()
                if pid == 0:
                    _die_with(server)
                    return (
                        request,
                        fds,
                        [selector, listener, wake_r, wake_w, conn, *children.values()],
                    )
                for fd in fds:
                    os.close(fd)
                try:
                    conn.send(json.dumps({"pid": pid}).encode())
                except OSError:  # the stand-in is gone already: so is its rein
                    os.kill(pid, signal.SIGKILL)
                    conn.close()
                    continue
                children[pid] = conn
                selector.register(conn, selectors.EVENT_READ, pid)
            elif key.data == "child":
                os.read(wake_r, 4096)
                while True:
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


def main(path: str) -> None:
    """The server; in a forked child, the program it became, ended by the
    interpreter as a ``python -m`` start is (threads joined, ``atexit``,
    modules and open files finalized, the streams flushed or 120, an
    uncaught KeyboardInterrupt a death by SIGINT)."""
    _KEPT.extend((sys.stdin, sys.stdout, sys.stderr))
    _stdio()  # its own streams leave descriptors 0-2 open when finalized
    started = serve(path)
    if started is None:
        return
    module = _become(*started)
    # As ``-m`` runs it: in a new ``__main__`` module that stays in
    # sys.modules (finalized at the end: what it holds is closed then).
    sys.modules["__main__"] = types.ModuleType("__main__")
    runpy._run_module_as_main(module, alter_argv=True)  # type: ignore[attr-defined]


if __name__ == "__main__":
    main(sys.argv[1])
