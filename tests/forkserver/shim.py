"""``rein ARGS...`` started from the test worker's fork server: run as a
script (``python tests/forkserver/shim.py ARGS...``), standard library only.

It hands its standard streams, arguments, environment and working folder to
the fork server named by ``REIN_TEST_FORKSERVER`` and becomes a stand-in for
the rein process the server forks: the signals it receives are passed on,
its exit is the rein process's exit (the same code, or killed by the same
signal), and when it is killed the server kills the rein process. Where the
start could differ from ``python -m rein`` (see ``zygote.refusal``), or no
server runs, it becomes ``python -m rein`` itself (``os.execv``)."""

from __future__ import annotations

import array
import json
import os
import resource
import signal
import socket
import sys

_VARIABLE = "REIN_TEST_FORKSERVER"
#: Signals passed on to the rein process (SIGKILL and SIGSTOP cannot be
#: caught: a killed stand-in closes its socket and the server kills rein).
_PASSED_ON = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGWINCH,
    signal.SIGCONT,
)


def _exec_rein(args: list[str], module: str) -> None:
    env = dict(os.environ)
    env.pop(_VARIABLE, None)
    os.execve(sys.executable, [sys.executable, "-m", module, *args], env)


#: Environment variables that change how an interpreter starts or decodes:
#: a request whose values differ from the server's own is refused.
_INTERPRETER_PREFIXES = ("PYTHON", "LC_", "LD_", "MALLOC_", "GLIBC_")
_INTERPRETER_NAMES = ("LANG", "LANGUAGE")


def server_environment(env: dict[str, str]) -> dict[str, str]:
    """The server's own environment: only what shapes an interpreter (and
    ``PATH``). A forked child's environment is replaced, but the kernel's
    copy (``/proc/<pid>/environ``) stays the server's: nothing else of the
    worker's (no key) is in it."""
    kept = interpreter_settings(env)
    if "PATH" in env:
        kept["PATH"] = env["PATH"]
    return kept


def interpreter_settings(env: dict[str, str]) -> dict[str, str]:
    return {
        key: value
        for key, value in env.items()
        if key.startswith(_INTERPRETER_PREFIXES) or key in _INTERPRETER_NAMES
    }


def process_facts() -> dict[str, object]:
    """What a process inherits besides its environment and descriptors that
    a fork of this server would not: who it runs as, its namespaces (a
    ``unshare`` or ``bwrap`` wrapper), its root folder, its resource limits."""
    namespaces = {}
    for name in ("mnt", "user", "pid", "net", "uts", "ipc", "cgroup"):
        try:
            namespaces[name] = os.readlink(f"/proc/self/ns/{name}")
        except OSError:
            namespaces[name] = ""
    root = os.stat("/")
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            flags = [line.strip() for line in status if line.startswith(("NoNewPrivs", "Seccomp:"))]
    except OSError:
        flags = []
    return {
        "cpus": sorted(os.sched_getaffinity(0)),
        "priority": os.getpriority(os.PRIO_PROCESS, 0),
        "flags": flags,
        "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), sorted(os.getgroups())],
        "namespaces": namespaces,
        "root": [root.st_dev, root.st_ino],
        "limits": {
            name: list(resource.getrlimit(getattr(resource, name)))
            for name in sorted(dir(resource))
            if name.startswith("RLIMIT_")
        },
    }


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _request(args: list[str], module: str) -> dict[str, object]:
    env = dict(os.environ)
    env.pop(_VARIABLE, None)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    umask = os.umask(0)
    os.umask(umask)
    ignored = [
        int(sig)
        for sig in signal.valid_signals()
        if sig not in (signal.SIGKILL, signal.SIGSTOP) and signal.getsignal(sig) == signal.SIG_IGN
    ]
    extra = []
    for name in os.listdir("/proc/self/fd"):  # its own descriptor is closed after
        fd = int(name)
        if fd > 2 and _is_open(fd):
            extra.append(fd)
    return {
        "module": module,
        "argv": args,
        "env": env,
        "cwd": os.getcwd(),
        "umask": umask,
        "sid": os.getsid(0),
        "pgid": os.getpgrp(),
        "ignored": ignored,
        "blocked": [int(sig) for sig in mask],
        "fds": extra,
        "ttys": [os.isatty(fd) for fd in (0, 1, 2)],
        "process": process_facts(),
    }


def main() -> None:
    args = sys.argv[1:]
    module = "rein"
    if args[:1] == ["--module"]:  # the fork server's own test: another module
        module, args = args[1], args[2:]
    path = os.environ.get(_VARIABLE)
    if not path or not all(_is_open(fd) for fd in (0, 1, 2)):
        # (A closed standard stream: the socket would take its number.)
        _exec_rein(args, module)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        _exec_rein(args, module)
    try:
        request = _request(args, module)
    except OSError:  # a standard stream closed: let python say so
        conn.close()
        _exec_rein(args, module)
    request["fds"] = [fd for fd in request["fds"] if fd != conn.fileno()]  # type: ignore[attr-defined]
    # Held until they can be passed on: the program may write (its pid, a
    # line a test waits for) before this stand-in knows it, and a signal
    # sent then killed the stand-in (-15, not the program's own exit: a CI
    # run). Blocked after the request read the mask the program gets.
    passed = [sig for sig in _PASSED_ON if signal.getsignal(sig) != signal.SIG_IGN]
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, passed)
    try:
        conn.sendmsg(
            [json.dumps(request).encode()],
            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))],
        )
    except OSError:  # too large a message (arguments, environment): started here
        conn.close()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _exec_rein(args, module)
    answer = json.loads(conn.recv(65536) or b'{"exec": "the fork server closed"}')
    if "exec" in answer:
        conn.close()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _exec_rein(args, module)
    pid = int(answer["pid"])

    def pass_on(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for sig in passed:
        signal.signal(sig, pass_on)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # what came meanwhile is passed on now
    # The rein process holds the streams now; this stand-in keeps none of
    # them open (a reader sees the end when rein closes them).
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    reply = conn.recv(65536)
    if not reply:  # the fork server died (and rein with it): said so
        pass_on(signal.SIGKILL, None)
        os._exit(70)
    status = int(json.loads(reply)["status"])
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
