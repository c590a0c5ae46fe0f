"""The warm pytest's two scripts (:mod:`rein.testgate.warm` says what
they do), written into its folder when it starts: the kept process
(``server.py``) and the client a shell command runs in place of
``python -m pytest`` (``client.py``).

A request is NUL-separated fields: its kind, the token, the folder, the
number of pytest's arguments, the arguments, then the environment:
``env``, the client's own (``NAME=value`` entries, the client's whole
environment); ``edits``, the gate's changes to the environment the kept
process was started with (:meth:`rein.testgate.pytest_call.PytestCall.edits`:
the gate hands the run to the kept process itself,
:mod:`rein.testgate.direct`). No field holds a NUL. A request handed
between kept processes (:mod:`rein.testgate.warm_plugins`) is the
client's, its kind prefixed ``via:`` or ``plain:``, with the client's
connection as a fourth descriptor; the receiver answers ``T`` once it
has taken them.
"""

from __future__ import annotations

__all__ = ["CLIENT_SOURCE", "SERVER_SOURCE"]

SERVER_SOURCE = r'''"""Written by Rein's tests gate: a warm pytest, forked per run."""
import contextlib
import ctypes
import gc
import hmac
import importlib
import importlib.util
import os
import pathlib
import select
import signal
import socket
import struct
import sys
import time
import traceback
import types

import _rein_plugins
import pytest
from _pytest import config as _pytest_config
from _pytest.config import default_plugins

for _name in default_plugins:
    try:
        importlib.import_module("_pytest." + _name)
    except Exception:
        pass

_OWN = set(os.environ.get("PYTHONPATH", "").split(os.pathsep))
_BASE = [p for p in sys.path[1:] if p not in _OWN]
_STARTED_WITH = dict(os.environ)
_GET_CONFIG = _pytest_config.get_config


def _blocked(args):
    # The "-p no:NAME" of pytest's arguments, in order, as its get_config
    # reads them (PytestPluginManager.consider_preparse, exclude_only).
    found, i = [], 0
    while i < len(args):
        opt = args[i]
        i += 1
        if not isinstance(opt, str):
            continue
        if opt == "-p":
            if i >= len(args):
                break
            parg = args[i]
            i += 1
        elif opt.startswith("-p"):
            parg = opt[2:]
        else:
            continue
        parg = parg.strip()
        if parg.startswith("no:"):
            found.append(parg)
    return tuple(found)


def _prebuild():
    # pytest's get_config, made here once for each set of "-p no:" the
    # gate's runs give (its cache off, or kept): the plugin manager, the
    # Config, its option parser and the default plugins registered (their
    # options, their hooks). A run's fork takes the one its arguments ask
    # for (its own copy) and pytest goes on from it as from its own:
    # reading the arguments, the ini file, the environment, conftest.py,
    # the entry points. What get_config reads besides the "-p no:" is
    # PYTEST_DEBUG (none made when set, none used when a run sets it), the
    # working folder (the invocation's, set again in the fork) and the
    # program's name (argv[0] as the fork has it: pytest's __main__).
    if os.environ.get("PYTEST_DEBUG"):
        return {}
    argv = sys.argv
    sys.argv = [importlib.util.find_spec("pytest.__main__").origin]
    made = {}
    try:
        for blocked in ((), ("no:cacheprovider",)):
            args = [a for name in blocked for a in ("-p", name)]
            made[blocked] = _GET_CONFIG(args, None, **_PROG)
    except Exception:  # another pytest's internals: each run makes its own
        made = {}
    finally:
        sys.argv = argv
    return made


try:  # pytest 9: the program's name is given (python -m pytest's)
    from _pytest.config import _get_prog_name

    _PROG = {"prog": _get_prog_name([importlib.util.find_spec("pytest.__main__").origin])}
except ImportError:  # before: argparse's, from argv[0]
    _PROG = {}
try:  # what python -m pytest runs (pytest/__main__.py: its program name, its broken pipe)
    from _pytest.config import _console_main
except ImportError:
    try:  # before pytest 9
        from _pytest.config import console_main as _console_main
    except ImportError:
        _console_main = None
_PREBUILT = _prebuild()
_WARM = sorted({name.split(".")[0] for name in sys.modules if not name.startswith("_")})
# What is imported now lives as long as this process: a child's garbage
# collections (pytest's at its end among them) need not walk it, nor copy
# each page of it to mark it. Its garbage is collected first, not frozen
# for good (nor copied into every child).
gc.collect()
gc.freeze()


# A handler is the subreaper of what its run starts (Linux's
# PR_SET_CHILD_SUBREAPER): a test's process that left pytest's group
# (setsid, a daemon's double fork) comes back to it when its parent ends,
# and is killed before the handler answers (this sandbox outlives the run).
_PR_SET_CHILD_SUBREAPER = 36
#: How long a handler hunts what its run left (and what that starts meanwhile).
_HUNT_S = 5.0
_libc = ctypes.CDLL(None, use_errno=True)


# Not rein.process.reaper's: this runs in the project's interpreter (no Rein), and ends all its run's children.
def _children():
    # This process's live children (the ones reparented to it included):
    # the kernel's list where it keeps one (one file), else from each
    # process's stat. (A zombie is listed: it is reaped.)
    me = os.getpid()
    try:
        with open("/proc/%d/task/%d/children" % (me, me), "rb") as handle:
            return [int(pid) for pid in handle.read().split()]
    except OSError:
        pass
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/" + entry + "/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me and fields[0] not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def _end_all():
    # Kill every child, and theirs as they come back, and reap them, until
    # none is left (True) or _HUNT_S passed (False).
    deadline = time.monotonic() + _HUNT_S
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ends = []
        for pid in _children()[:500]:  # select's bound; the rest at the next round
            try:
                ends.append(os.pidfd_open(pid))
                os.kill(pid, signal.SIGKILL)
            except OSError:  # gone meanwhile
                continue
        # Until one of them ends (or a child not listed yet: briefly).
        select.select(ends, [], [], min(left, 1.0) if ends else min(left, 0.01))
        for fd in ends:
            os.close(fd)


def _collides(folders):
    # One listing per folder, not two stats per warm module in each.
    for folder in folders:
        try:
            entries = set(os.listdir(folder))
        except OSError:
            continue
        for name in _WARM:
            if (name + ".py" in entries and os.path.isfile(os.path.join(folder, name + ".py"))) or (
                name in entries and os.path.isfile(os.path.join(folder, name, "__init__.py"))
            ):
                return True
    return False


def _receive(conn):
    data, fds, _flags, _address = socket.recv_fds(conn, 1 << 16, 4)
    if len(data) < 4:
        raise EOFError
    size = struct.unpack("!I", data[:4])[0]
    data = data[4:]
    while len(data) < size:
        more = conn.recv(1 << 16)
        if not more:
            raise EOFError
        data += more
    # its kind, the token, the folder, the number of arguments, the
    # arguments, then the environment: NUL-separated (none holds a NUL).
    raw = data[:size]
    fields = [os.fsdecode(f) for f in raw.split(b"\0")]
    # A request handed over from another kept process: "via:" (the first
    # to a plugin process) or "plain:" (back), then the client's kind.
    hop, _, kind = fields[0].rpartition(":")
    if hop:
        raw = raw[len(hop) + 1 :]
    if kind not in ("env", "edits"):
        raise ValueError(f"an unknown kind of request {kind[:20]!r}")
    count = int(fields[3])
    if not 0 <= count <= len(fields) - 4:
        raise ValueError(f"it names {count} arguments of {len(fields) - 4} fields")
    entries = fields[4 + count :]
    if kind == "env":  # the client's own environment
        env = dict(entry.partition("=")[::2] for entry in entries)
    else:  # the gate's changes to this process's own
        env = _edited(entries)
    request = {"token": fields[1], "cwd": fields[2], "args": fields[4 : 4 + count], "env": env}
    return dict(request, hop=hop, raw=raw), fds


def _edited(edits):
    # The environment this process started with (the child environment,
    # as the gates' sandbox has it), changed as the gate's shell command
    # would: -NAME unsets, =NAME=value sets, ?NAME=value sets where unset
    # or empty, +NAME=value puts value before (with a colon).
    env = dict(_STARTED_WITH)
    for edit in edits:
        change, name, value = edit[:1], *edit[1:].partition("=")[::2]
        if change == "-":
            env.pop(name, None)
        elif change == "=":
            env[name] = value
        elif change == "?":
            env[name] = env.get(name) or value
        elif change == "+":
            env[name] = value + (":" + env[name] if env.get(name) else "")
        else:
            raise ValueError(f"an unknown change of the environment {edit[:20]!r}")
    return env


def _as_python_m_pytest():
    # A test's multiprocessing (spawn, forkserver) starts its workers from
    # ``__main__``: pytest's, as ``python -m pytest`` has it, never this file.
    main = types.ModuleType("__main__")
    main.__spec__ = importlib.util.find_spec("pytest.__main__")
    main.__file__ = main.__spec__.origin
    sys.modules["__main__"] = main
    return main.__file__


def _pytest(request, paths, record_to=None, redo=None):
    os.setpgid(0, 0)  # its group: what the run leaves behind is killed with it
    os.chdir(request["cwd"])
    sys.path[:] = [request["cwd"], *paths, *_BASE]
    sys.argv = [_as_python_m_pytest(), *request["args"]]
    sys.orig_argv = [sys.executable, "-m", "pytest", *request["args"]]  # not the kept process's token
    # Bytecode as a cold interpreter would have it in this environment.
    sys.dont_write_bytecode = bool(request["env"].get("PYTHONDONTWRITEBYTECODE"))
    sys.pycache_prefix = request["env"].get("PYTHONPYCACHEPREFIX") or None
    import random

    random.seed()
    _use_prebuilt(request)
    _rein_plugins.in_run(record_to, _WAKE[1], redo, set(_BASE))
    try:
        code = _console_main() if _console_main is not None else pytest.main(request["args"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 3
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


def _use_prebuilt(request):
    # pytest's first get_config of this run returns the config made before
    # the fork for its "-p no:" (once; any later one, a test's own
    # pytest.main, makes its own), with this run's invocation.
    blocked = _blocked(request["args"])
    config = None if request["env"].get("PYTEST_DEBUG") else _PREBUILT.get(blocked)
    _PREBUILT.clear()  # the others are not this run's
    if config is None:
        return

    def get_config(args=None, plugins=None, **options):
        _pytest_config.get_config = _GET_CONFIG
        if plugins is not None or options != _PROG or _blocked(list(args or ())) != blocked:
            return _GET_CONFIG(args, plugins, **options)
        config.invocation_params = _pytest_config.Config.InvocationParams(
            args=args or (), plugins=plugins, dir=pathlib.Path.cwd()
        )
        return config

    _pytest_config.get_config = get_config


def _refuse(conn, why):
    # "R" and why; the client runs pytest itself and says so.
    try:
        conn.sendall(b"R" + why.encode("utf-8", "replace")[:400])
    except OSError:
        pass


def _handle(conn, token):
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    if _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        _refuse(conn, "it cannot be the subreaper of its runs")
        return
    conn.settimeout(10)
    try:
        request, fds = _receive(conn)
    except (ValueError, IndexError) as exc:  # not the gate's own client's request
        _refuse(conn, f"a malformed request ({exc or type(exc).__name__})")
        return
    except EOFError:
        _refuse(conn, "the request ended early")
        return
    except OSError as exc:
        _refuse(conn, f"the request could not be read ({exc})")
        return
    conn.settimeout(None)
    if not hmac.compare_digest(str(request.get("token", "")).encode(), token.encode()):
        for fd in fds:
            os.close(fd)
        _refuse(conn, "not the gate's own client (its token)")
        return
    if len(fds) == 4 and request["hop"]:  # handed over: the client's connection last
        client = socket.socket(fileno=fds.pop())
        conn.sendall(b"T")
        conn.close()
        conn = client
    elif len(fds) != 3 or request["hop"]:
        for fd in fds:
            os.close(fd)
        _refuse(conn, "a malformed request (its descriptors)")
        return
    name = _rein_plugins.key(request["cwd"], request["env"])
    kept = _rein_plugins.socket_path(_FOLDER, name)
    if _rein_plugins.KEPT is None and not request["hop"] and os.path.exists(kept):
        if _rein_plugins.offered(request) and _rein_plugins.hand_over(
            kept, "via", request["raw"], [*fds, conn.fileno()]
        ):
            return  # the plugin process runs it
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    paths = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    if _collides([request["cwd"], *paths]):
        conn.sendall(b"C")
        return
    record_to = None
    spec = _rein_plugins.spec_path(_FOLDER, name)
    if _rein_plugins.KEPT is None and (request["hop"] == "plain" or not os.path.exists(spec)):
        record_to = spec  # which plugins this run's pytest loads
    redo = os.pipe() if _rein_plugins.KEPT is not None else (None, None)
    pid = os.fork()
    if pid == 0:
        conn.close()
        if redo[0] is not None:
            os.close(redo[0])
        _pytest(request, paths, record_to, redo[1])
    if redo[1] is not None:
        os.close(redo[1])
    done = os.pidfd_open(pid)
    select.select([conn, done], [], [])  # pytest's end, or the client's
    try:  # pytest's group (the child, until reaped, keeps its id)
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _, status = os.waitpid(pid, 0)
    # What the run left outside pytest's group: killed and reaped before
    # the answer (the gate looks for what it planted once answered). Not
    # all gone: no answer; the gate stops this process and its sandbox.
    if not _end_all():
        return
    why = _rein_plugins.redone(redo[0]) if redo[0] is not None else None
    if why is not None:
        # Not this plugin process's run (its pytest stopped before any
        # plugin or test): the first kept process runs it, plain.
        if _rein_plugins.handed_back(kept, why) and os.getppid() == _SERVING:
            os.kill(_SERVING, signal.SIGKILL)  # retired (not gone meanwhile)
        if not _rein_plugins.hand_over(_MAIN, "plain", request["raw"], [0, 1, 2, conn.fileno()]):
            _refuse(conn, "its plugins are not the run's, and the plain process did not take it")
        return
    if redo[0] is not None:
        _rein_plugins.served(kept)
    conn.sendall(b"X" + struct.pack("!i", os.waitstatus_to_exitcode(status)))


def _serve(path, ready):
    # Accept runs on ``path`` until Rein is gone; each in a forked handler.
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:  # a plugin process's, killed before it listened
        os.unlink(path + ".new")
    except OSError:
        pass
    server.bind(path + ".new")
    server.listen(16)
    os.replace(path + ".new", path)
    if ready is not None:
        ready()
    global _SERVING
    _SERVING = os.getpid()
    watched = [server, sys.stdin] + ([_WAKE[0]] if _rein_plugins.KEPT is None else [])
    while True:
        readable, _, _ = select.select(watched, [], [])
        if sys.stdin in readable and not os.read(0, 4096):
            return  # Rein is gone
        if _WAKE[0] in readable:
            for line in os.read(_WAKE[0], 4096).splitlines():
                _rein_plugins.spawn(line, _FOLDER, _WAKE[0], _plugin_process)
        if server in readable:
            conn, _ = server.accept()
            if os.fork() == 0:
                server.close()
                try:
                    _handle(conn, _TOKEN)
                finally:
                    os._exit(0)
            conn.close()


def _plugin_process(spec, path):
    # A fork: its plugins imported, it serves on ``path`` (else it ends, and says why).
    why = _rein_plugins.build(spec, set(_BASE), _GET_CONFIG)
    if why is not None:
        with open(path + ".why", "w") as out:
            out.write(why)
        return
    gc.collect()  # frozen, as this process's
    gc.freeze()
    _serve(path, None)


def _ready():
    sys.stdout.write("ready\n")
    sys.stdout.flush()


def main(path, token):
    global _FOLDER, _MAIN, _TOKEN
    # What a handler needs (Python 3.9, Linux 5.3): without it, no "ready".
    os.close(os.pidfd_open(os.getpid()))
    _needed = (socket.recv_fds, os.waitstatus_to_exitcode)
    _FOLDER, _MAIN, _TOKEN = os.path.dirname(path), path, token
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    _serve(path, _ready)


# The folder, the first kept process's socket, the token, the process
# that serves (this one or a plugin process); the pipe a run's recording
# wakes this process with.
_FOLDER = _MAIN = _TOKEN = _SERVING = None
_WAKE = os.pipe()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
'''

CLIENT_SOURCE = r'''"""Written by Rein's tests gate: pytest run by the warm process."""
import os
import sys

import _socket  # not socket, nor json: their imports were most of this client's start

_ARGS = sys.argv[3:]


def _cold(why):
    report = os.environ.get("REIN_TESTS_REPORT")
    if report:  # the gate says the run was cold, and why
        try:
            with open(report + ".cold", "w", encoding="utf-8") as marker:
                marker.write(why)
        except OSError:
            pass
    os.execv(sys.executable, [sys.executable, "-m", "pytest", *_ARGS])


try:
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    conn.connect(sys.argv[1])
    fields = ["env", sys.argv[2], os.getcwd(), str(len(_ARGS)), *_ARGS]
    fields += [f"{name}={value}" for name, value in os.environ.items()]
    body = b"\0".join(os.fsencode(f) for f in fields)
    fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
    ancillary = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)]
    message = len(body).to_bytes(4, "big") + body
    sent = conn.sendmsg([message], ancillary)  # the descriptors go with the first bytes
    if sent < len(message):
        conn.sendall(message[sent:])
except (OSError, AttributeError) as exc:
    _cold(f"the warm process could not be reached ({exc})")
answer = b""
# "X" and the exit code; "C"; "R" and why, to the connection's end.
while (len(answer) < 5 or answer[:1] == b"R") and len(answer) < 1024:
    more = conn.recv(1024)
    if not more:
        break
    answer += more
if answer[:1] == b"C":
    _cold("a module the warm process has imported is in the project's own folders")
if answer[:1] == b"R":
    why = answer[1:].decode("utf-8", "replace")
    _cold("the warm process refused this client: " + (why or "(no reason)"))
if len(answer) < 5:
    sys.stderr.write("rein: the warm pytest process ended without an exit code\n")
    sys.exit(3)
sys.exit(int.from_bytes(answer[1:5], "big", signed=True))
'''
